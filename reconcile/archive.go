package reconcile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/schema"
)

// tableDomains maps each archive table to its schema domain.
func tableDomains() map[string]string {
	out := map[string]string{}
	for _, typ := range schema.Types() {
		k, _ := schema.KindOf(typ)
		if t, ok := archiver.TableFor(typ); ok {
			out[t] = string(k.Domain)
		}
	}
	return out
}

// tableOf is the archive table and domain of an event type ("" when the
// archive has no table for it).
func tableOf(eventType string) (table, domain string) {
	k, ok := schema.KindOf(eventType)
	if !ok {
		return "", ""
	}
	t, _ := archiver.TableFor(eventType)
	return t, string(k.Domain)
}

// mark is what the comparison learned of one event of the window.
type mark struct {
	hash              string
	matched, conflict bool
}

// compareArchive compares every partition the scan spilled with the
// archive, and counts the archive-only events of the window's own days.
// The archive is read once per table (one plan of its current snapshot,
// every date at once), its references spilled per date beside the scan's
// (so memory stays bounded), then compared partition by partition.
func (r *run) compareArchive(ctx context.Context, sp *spill, parts []part) error {
	byTable := map[string][]part{}
	for _, p := range parts {
		byTable[p.table] = append(byTable[p.table], p)
	}
	domains := tableDomains()
	tables := make([]string, 0, len(domains))
	for t := range domains {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	days := windowDays(r.opts.From, r.opts.To)
	for _, t := range tables {
		r.setPhase("archive")
		dates := slices.Clone(days)
		have := map[string]bool{}
		for _, p := range byTable[t] {
			dates = append(dates, p.date)
			have[p.date] = true
		}
		refs, err := r.spillRefs(ctx, sp, t, dates)
		if err != nil {
			return err
		}
		for _, p := range byTable[t] {
			path, n := sp.path(p)
			if err := r.comparePart(sp, p, path, n, refs[p.date]); err != nil {
				return err
			}
		}
		// Archive-only events on the window's days that the table no
		// longer holds any event of.
		for _, d := range days {
			if have[d] || refs[d] == "" {
				continue
			}
			err := readEntries(refs[d], func(e entry) error {
				if e.inWindow {
					r.archiveOnly(domains[t], d)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		for _, path := range refs {
			_ = os.Remove(path)
		}
	}
	return nil
}

// spillRefs reads the archive's references of table on dates (one
// EventRefs call) into one temporary file per date, returning their paths
// by date (a date without any archived row has none).
func (r *run) spillRefs(ctx context.Context, sp *spill, table string, dates []string) (map[string]string, error) {
	files := map[string]*spillFile{}
	err := r.cfg.Archive.EventRefs(ctx, table, dates, func(ref EventRef) error {
		f, ok := files[ref.Date]
		if !ok {
			var err error
			if f, err = createSpill(filepath.Join(sp.dir, "refs-"+table+"-"+ref.Date)); err != nil {
				return err
			}
			files[ref.Date] = f
		}
		return f.add(entry{subject: ref.Subject, id: ref.ID, hash: ref.Hash, inWindow: r.inWindow(ref.RecordedAt)})
	})
	paths := map[string]string{}
	for d, f := range files {
		if cerr := f.close(); err == nil {
			err = cerr
		}
		paths[d] = f.path
	}
	if err != nil {
		return paths, fmt.Errorf("reconcile: read archive %s: %w", table, err)
	}
	return paths, nil
}

// windowDays lists the UTC days [from, to) touches.
func windowDays(from, to time.Time) []string {
	var out []string
	for d := from.UTC().Truncate(24 * time.Hour); d.Before(to); d = d.Add(24 * time.Hour) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}

// comparePart compares one partition's events of the window (the spill
// file at path, n entries) with the archive's references of that
// partition (the spill file refs; "" when the archive has none). At most
// BucketEvents entries are held: a larger partition is split by key into
// buckets (temporary files), the archive's references likewise, and each
// bucket compared alone.
func (r *run) comparePart(sp *spill, p part, path string, n int, refs string) error {
	buckets := max(1, (n+r.opts.BucketEvents-1)/r.opts.BucketEvents)
	domain := r.domains[p.table]
	tb, ab := []string{path}, []string{refs}
	if buckets > 1 {
		var err error
		if tb, err = splitFile(path, filepath.Join(sp.dir, "b"), buckets); err != nil {
			return err
		}
		if refs == "" {
			ab = make([]string, buckets)
		} else if ab, err = splitFile(refs, filepath.Join(sp.dir, "a"), buckets); err != nil {
			return err
		}
	}
	for i := range buckets {
		marks, err := loadMarks(tb[i])
		if err != nil {
			return err
		}
		if ab[i] != "" {
			if err := readEntries(ab[i], func(e entry) error {
				r.match(marks, domain, p.date, e)
				return nil
			}); err != nil {
				return err
			}
		}
		r.settle(marks, domain, p.date)
	}
	return nil
}

// splitFile splits a spill file into buckets by key, returning their paths.
func splitFile(path, prefix string, buckets int) ([]string, error) {
	out := make([]*spillFile, buckets)
	paths := make([]string, buckets)
	for i := range out {
		var err error
		if out[i], err = createSpill(fmt.Sprintf("%s%d", prefix, i)); err != nil {
			return nil, err
		}
		paths[i] = out[i].path
	}
	err := readEntries(path, func(e entry) error { return out[bucketOf(e.key(), buckets)].add(e) })
	for _, f := range out {
		if cerr := f.close(); err == nil {
			err = cerr
		}
	}
	return paths, err
}

// loadMarks reads a spill file into marks by key.
func loadMarks(path string) (map[string]*mark, error) {
	marks := map[string]*mark{}
	err := readEntries(path, func(e entry) error {
		marks[e.key()] = &mark{hash: e.hash}
		return nil
	})
	return marks, err
}

// match records one archived event against the window's events.
func (r *run) match(marks map[string]*mark, domain, day string, e entry) {
	m, ok := marks[e.key()]
	switch {
	case ok && m.hash == e.hash:
		m.matched = true
	case ok:
		m.conflict = true
	case e.inWindow:
		r.archiveOnly(domain, day)
	}
}

// settle reports the window's events the archive lacks (or holds with
// other content) once every reference was matched.
func (r *run) settle(marks map[string]*mark, domain, day string) {
	r.noteBucket(len(marks))
	keys := make([]string, 0, len(marks))
	for k, m := range marks {
		if !m.matched {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		subject, id := splitKey(k)
		kind := KindArchive
		if marks[k].conflict {
			kind = KindConflict
		}
		r.gap(GapID{Domain: domain, Day: day, Kind: kind, ID: id, Subject: subject})
	}
}

// splitKey undoes entry.key.
func splitKey(k string) (subject, id string) {
	subject, id, _ = strings.Cut(k, "\x00")
	return subject, id
}

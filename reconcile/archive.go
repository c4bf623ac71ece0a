package reconcile

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
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
// archive, and reads the archive on the window's own days for the
// archive-only events of days without any event left in the table.
func (r *run) compareArchive(ctx context.Context, sp *spill, parts []part) error {
	have := map[part]bool{}
	for _, p := range parts {
		have[p] = true
	}
	for _, p := range parts {
		r.setPhase("archive")
		path, n := sp.path(p)
		if err := r.comparePart(ctx, sp, p, path, n); err != nil {
			return err
		}
	}
	// Archive-only events on the window's days that the table no longer
	// holds any event of.
	domains := tableDomains()
	tables := make([]string, 0, len(domains))
	for t := range domains {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		for _, d := range windowDays(r.opts.From, r.opts.To) {
			if have[part{t, d}] {
				continue
			}
			err := r.cfg.Archive.EventRefs(ctx, t, []string{d}, func(ref EventRef) error {
				if r.inWindow(ref.RecordedAt) {
					r.archiveOnly(domains[t], d)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("reconcile: read archive %s/%s: %w", t, d, err)
			}
		}
	}
	return nil
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
// partition. At most BucketEvents entries are held: a larger partition is
// split by key into buckets (temporary files), the archive's references
// likewise, and each bucket compared alone.
func (r *run) comparePart(ctx context.Context, sp *spill, p part, path string, n int) error {
	buckets := max(1, (n+r.opts.BucketEvents-1)/r.opts.BucketEvents)
	domain := r.domains[p.table]
	if buckets == 1 {
		marks, err := loadMarks(path)
		if err != nil {
			return err
		}
		err = r.cfg.Archive.EventRefs(ctx, p.table, []string{p.date}, func(ref EventRef) error {
			r.match(marks, domain, p.date, entry{subject: ref.Subject, id: ref.ID, hash: ref.Hash, inWindow: r.inWindow(ref.RecordedAt)})
			return nil
		})
		if err != nil {
			return fmt.Errorf("reconcile: read archive %s/%s: %w", p.table, p.date, err)
		}
		r.settle(marks, domain, p.date)
		return nil
	}
	tb, err := splitFile(path, filepath.Join(sp.dir, "b"), buckets)
	if err != nil {
		return err
	}
	ab := make([]*spillFile, buckets)
	for i := range ab {
		if ab[i], err = createSpill(filepath.Join(sp.dir, fmt.Sprintf("a%d", i))); err != nil {
			return err
		}
	}
	err = r.cfg.Archive.EventRefs(ctx, p.table, []string{p.date}, func(ref EventRef) error {
		e := entry{subject: ref.Subject, id: ref.ID, hash: ref.Hash, inWindow: r.inWindow(ref.RecordedAt)}
		return ab[bucketOf(e.key(), buckets)].add(e)
	})
	for _, f := range ab {
		if cerr := f.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("reconcile: read archive %s/%s: %w", p.table, p.date, err)
	}
	for i := range buckets {
		marks, err := loadMarks(tb[i])
		if err != nil {
			return err
		}
		if err := readEntries(ab[i].path, func(e entry) error {
			r.match(marks, domain, p.date, e)
			return nil
		}); err != nil {
			return err
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
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}

package archiver

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// DefaultCompactMinAge is the stream's retention: a batch can only be
// redelivered (and replace its file) while its records are in the stream,
// so a file this old is never replaced by a batch again.
const DefaultCompactMinAge = 24 * time.Hour

// CompactOptions tunes one compaction. The zero value means the defaults.
type CompactOptions struct {
	// TargetObjectBytes: small files are merged into outputs of up to this
	// many input bytes. Files this large or larger are left alone.
	// Default Config.TargetObjectBytes.
	TargetObjectBytes int64
	// MinAge: only files last modified at least MinAge ago are merged.
	// Zero means DefaultCompactMinAge (24h); a negative value takes every
	// file, which is safe only when no batch of the partition can still
	// be redelivered (tests, a stopped pipeline).
	MinAge time.Duration
	// DryRun plans without changing anything.
	DryRun bool
}

// Validate names the first bad field.
func (o CompactOptions) Validate() error {
	if o.TargetObjectBytes < 0 {
		return fmt.Errorf("archiver: CompactOptions.TargetObjectBytes: must not be negative, got %d", o.TargetObjectBytes)
	}
	return nil
}

// CompactStats says what a compaction did.
type CompactStats struct {
	Table, Date   string
	ObjectsBefore int // data files of the partition before
	ObjectsAfter  int // and after
	Inputs        int // files merged
	Outputs       int // files written
	InputBytes    int64
	OutputBytes   int64
	Rows          int // rows written
	Duplicates    int // rows dropped: their (subject, event id) was in an earlier row
	Skipped       int // files left alone (large enough, or too young)
}

// compactPlan is what one compaction will do; a pure value.
type compactPlan struct {
	ID      string
	Groups  [][]string // input keys, per output
	Outputs []string   // output keys
	Skipped int
	Bytes   int64 // input bytes
}

func (p compactPlan) inputs() []string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, g...)
	}
	return out
}

// planCompaction decides which listed objects to merge into which outputs.
// Candidates are the objects smaller than target and older than minAge
// (minAge < 0: all), taken in key order; they are packed greedily into
// groups of at most target bytes, and groups of one object are dropped.
// The outputs are named after a hash of all inputs (what a dry run shows);
// Compact gives them per-run names before it writes them.
func planCompaction(l layout, table, date string, keys []string, info map[string]listed, target int64, minAge time.Duration, now time.Time) (compactPlan, error) {
	var p compactPlan
	var candidates []string
	for _, k := range slices.Sorted(slices.Values(keys)) {
		o, ok := info[k]
		if !ok {
			return compactPlan{}, fmt.Errorf("%w: table %s holds %s, which does not exist", ErrCorruptObject, table, k)
		}
		if o.size >= target || (minAge >= 0 && now.Sub(o.modified) < minAge) {
			p.Skipped++
			continue
		}
		candidates = append(candidates, k)
	}
	for _, g := range packBySize(candidates, func(k string) int64 { return info[k].size }, target) {
		if len(g) > 1 {
			p.Groups = append(p.Groups, g)
		} else {
			p.Skipped++ // nothing to merge it with
		}
	}
	if len(p.Groups) == 0 {
		return p, nil
	}
	h := sha256.New()
	for _, g := range p.Groups {
		for _, k := range g {
			h.Write([]byte(k))
			h.Write([]byte{'\n'})
			p.Bytes += info[k].size
		}
		h.Write([]byte{'\n'})
	}
	p.ID = hex.EncodeToString(h.Sum(nil))[:16]
	for n := range p.Groups {
		p.Outputs = append(p.Outputs, l.compactKey(table, date, p.ID, n))
	}
	return p, nil
}

// Compact merges the small data files of one partition into few large
// ones, without any reader ever seeing an event twice or missing one:
//
//  1. plan on the table's current snapshot: the partition's files smaller
//     than the target and older than MinAge, packed into groups (see
//     planCompaction); outputs are named compact-<hash of the inputs>-<run>-<n>;
//  2. write the outputs: the inputs' rows merged in (event time, sequence)
//     order, each (subject, event id) once (Iceberg's own rewrite does not
//     deduplicate; this does, so duplicates of exhausted retries go);
//  3. commit one Iceberg snapshot replacing the inputs with the outputs. On
//     a conflict (a batch committed meanwhile) it reloads the table and
//     commits again, keeping what the other writer added; when an input is
//     no longer in the table (another compaction took it), it gives up
//     with ErrCompactionConflict and deletes its outputs.
//
// Readers plan on one snapshot: before the commit the inputs, after it the
// outputs, never both. The inputs stay in S3 for readers of older
// snapshots until snapshot expiry (Maintain) deletes them. A crash before
// the commit leaves the outputs as orphan files (Maintain deletes them).
// Compact is idempotent: with nothing to merge it changes nothing.
func (a *Archive) Compact(ctx context.Context, table, date string, opts CompactOptions) (CompactStats, error) {
	st := CompactStats{Table: table, Date: date}
	if err := opts.Validate(); err != nil {
		return st, err
	}
	opts.TargetObjectBytes = cmp.Or(opts.TargetObjectBytes, a.cfg.TargetObjectBytes)
	opts.MinAge = cmp.Or(opts.MinAge, DefaultCompactMinAge)
	if err := checkDate(date); err != nil {
		return st, err
	}
	planned, plannedSnapshot, err := a.snapshotFiles(ctx, table, []string{date})
	if err != nil {
		return st, err
	}
	keys := keysOn(planned, date)
	st.ObjectsBefore, st.ObjectsAfter = len(keys), len(keys)
	objs, err := a.list(ctx, a.l.dataDir(table, date))
	if err != nil {
		return st, err
	}
	info := make(map[string]listed, len(objs))
	for _, o := range objs {
		info[o.key] = o
	}
	plan, err := planCompaction(a.l, table, date, keys, info, opts.TargetObjectBytes, opts.MinAge, a.cfg.Now())
	if err != nil {
		return st, err
	}
	st.Skipped, st.InputBytes = plan.Skipped, plan.Bytes
	inputs := plan.inputs()
	st.Inputs = len(inputs)
	if len(plan.Groups) == 0 || opts.DryRun {
		st.Outputs = len(plan.Outputs)
		st.ObjectsAfter = len(keys) - len(inputs) + len(plan.Outputs)
		return st, nil
	}

	// Outputs are unique to this run, so that a run that loses (another
	// compaction committed first) can delete its outputs without touching
	// the winner's, even when both made the same plan.
	run := make([]byte, 4)
	if _, err := rand.Read(run); err != nil {
		return st, err
	}
	for n := range plan.Outputs {
		plan.Outputs[n] = a.l.compactKey(table, date, plan.ID+"-"+hex.EncodeToString(run), n)
	}
	m, err := a.mergeGroups(ctx, table, plan.Groups, plan.Outputs, map[string]bool{})
	if err != nil {
		return st, err
	}
	written := m.keys()
	st.Rows, st.Duplicates, st.OutputBytes, st.Outputs = m.rows, m.dups, m.bytes, len(written)

	err = a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		// The plan's files are the table's while no other commit came
		// between: plan again only on a newer snapshot.
		files := planned
		if snapshotID(t) != plannedSnapshot {
			var err error
			if files, err = a.lake.dataFiles(ctx, t, []string{date}); err != nil {
				return false, err
			}
		}
		if len(written) > 0 {
			if _, ok := files[written[0]]; ok {
				if _, still := files[inputs[0]]; !still {
					return true, nil // committed already (a retry after a lost response)
				}
			}
		}
		del := make([]iceberg.DataFile, len(inputs))
		for j, in := range inputs {
			df, ok := files[in]
			if !ok {
				return false, fmt.Errorf("%w: %s is no longer in the table", ErrCompactionConflict, in)
			}
			del[j] = df
		}
		add, err := dataFiles(a.l, t, m.files)
		if err != nil {
			return false, err
		}
		st.ObjectsAfter = len(files) - len(inputs) + len(add)
		tx := t.NewTransaction()
		props := iceberg.Properties{"streamfold.operation": "compact", "streamfold.duplicates": strconv.Itoa(st.Duplicates)}
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, del, add, props); err != nil {
			return false, err
		}
		_, err = tx.Commit(ctx)
		return false, err
	}, table)
	if errors.Is(err, ErrCompactionConflict) {
		// Nothing of ours is committed: remove it all.
		return st, errors.Join(err, a.deleteAll(ctx, written))
	}
	if err != nil {
		return st, err
	}
	return st, nil
}

func (a *Archive) deleteAll(ctx context.Context, keys []string) error {
	return forEach(ctx, len(keys), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		return a.delete(ctx, keys[i])
	})
}

// packBySize cuts keys, in their order, into consecutive groups of at most
// target bytes (a key larger than target is a group of its own).
func packBySize(keys []string, size func(string) int64, target int64) [][]string {
	var groups [][]string
	var cur []string
	var curBytes int64
	for _, k := range keys {
		if len(cur) > 0 && curBytes+size(k) > target {
			groups = append(groups, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, k)
		curBytes += size(k)
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

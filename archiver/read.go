package archiver

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/streamfold/streamfold/schema"
)

// Partitions returns the event dates of a table that hold data, in
// ascending order.
func (a *Archive) Partitions(ctx context.Context, table string) ([]string, error) {
	files, err := a.files(ctx, table, nil)
	if err != nil {
		return nil, err
	}
	return datesOf(files), nil
}

// PartitionObjects returns the keys of a table's data files in its current
// snapshot, by event date (each list sorted): Partitions and Objects of
// every date from one snapshot, with one table load and one plan.
func (a *Archive) PartitionObjects(ctx context.Context, table string) (map[string][]string, error) {
	files, err := a.files(ctx, table, nil)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, d := range datesOf(files) {
		out[d] = keysOn(files, d)
	}
	return out, nil
}

// files returns the data files of a table's current snapshot in the given
// dates (all dates when nil), by key.
func (a *Archive) files(ctx context.Context, table string, dates []string) (map[string]iceberg.DataFile, error) {
	files, _, err := a.snapshotFiles(ctx, table, dates)
	return files, err
}

// snapshotFiles is files with the id of the snapshot they are of
// (snapshotID).
func (a *Archive) snapshotFiles(ctx context.Context, table string, dates []string) (map[string]iceberg.DataFile, int64, error) {
	if _, ok := tableByName[table]; !ok {
		return nil, 0, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	for _, d := range dates {
		if err := checkDate(d); err != nil {
			return nil, 0, err
		}
	}
	t, err := a.lake.current(ctx, table)
	if err != nil {
		return nil, 0, err
	}
	files, err := a.lake.dataFiles(ctx, t, dates)
	return files, snapshotID(t), err
}

// Objects returns the keys of the data files of one partition in the
// table's current snapshot (sorted). They are exactly what a reader must
// read: every archived event of the partition is in one of them, once.
func (a *Archive) Objects(ctx context.Context, table, date string) ([]string, error) {
	if err := checkDate(date); err != nil {
		return nil, err
	}
	files, err := a.files(ctx, table, []string{date})
	if err != nil {
		return nil, err
	}
	return keysOn(files, date), nil
}

// keysOn returns the keys of files that lie in date's directory, sorted
// (planning by a dates filter may also return files of neighbouring days
// whose bounds overlap the range).
func keysOn(files map[string]iceberg.DataFile, date string) []string {
	var keys []string
	for key := range files {
		if d, ok := dateOfKey(key); ok && d == date {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// Read returns the records of one data object, in file order (by event
// time, then stream position).
func (a *Archive) Read(ctx context.Context, key string) ([]Record, error) {
	obj, err := a.get(ctx, key)
	if err != nil {
		return nil, err
	}
	recs, err := Decode(bytes.NewReader(obj.body), int64(len(obj.body)))
	if err != nil {
		return nil, fmt.Errorf("archiver: read %s: %w", key, err)
	}
	return recs, nil
}

// Scan calls fn with every archived record: table by table (in the order of
// Tables), each from one snapshot (its current one), date by date, file by
// file. It plans from the snapshot, never a listing of data files, so a
// record is seen once even while batches are retried or partitions
// compacted. It stops at the first error fn returns and returns it.
func (a *Archive) Scan(ctx context.Context, fn func(Record) error) error {
	for _, t := range tableDefs {
		files, err := a.files(ctx, t.name, nil) // one snapshot per table
		if err != nil {
			return err
		}
		for _, d := range datesOf(files) {
			if err := a.scanObjects(ctx, keysOn(files, d), fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// datesOf returns the event dates of files' keys, sorted.
func datesOf(files map[string]iceberg.DataFile) []string {
	seen := map[string]bool{}
	var out []string
	for key := range files {
		if d, ok := dateOfKey(key); ok && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// scanObjects reads objects Concurrency at a time and hands their records to
// fn in order.
func (a *Archive) scanObjects(ctx context.Context, keys []string, fn func(Record) error) error {
	for start := 0; start < len(keys); start += a.cfg.Concurrency {
		chunk := keys[start:min(start+a.cfg.Concurrency, len(keys))]
		recs := make([][]Record, len(chunk))
		err := forEach(ctx, len(chunk), a.cfg.Concurrency, func(ctx context.Context, i int) error {
			var err error
			recs[i], err = a.Read(ctx, chunk[i])
			return err
		})
		if err != nil {
			return err
		}
		for _, rs := range recs {
			for _, r := range rs {
				if err := fn(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Events calls fn with every archived event, as Scan.
func (a *Archive) Events(ctx context.Context, fn func(schema.Event) error) error {
	return a.Scan(ctx, func(r Record) error { return fn(r.Event) })
}

// Orphans returns the data files under a partition's directory that the
// table's current snapshot does not hold: files of a batch that failed
// between writing them and committing them (its retry commits them or
// replaces them), outputs of a compaction that lost its commit, and files
// removed by compaction until snapshot expiry deletes them. Readers never
// see them. Maintenance deletes those older than a retention (Maintain).
func (a *Archive) Orphans(ctx context.Context, table, date string) ([]string, error) {
	files, err := a.files(ctx, table, []string{date})
	if err != nil {
		return nil, err
	}
	objs, err := a.list(ctx, a.l.dataDir(table, date))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		if _, ok := files[o.key]; !ok {
			out = append(out, o.key)
		}
	}
	return out, nil
}

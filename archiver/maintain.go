package archiver

import (
	"cmp"
	"context"
	"fmt"
	"time"

	icetable "github.com/apache/iceberg-go/table"
)

// Defaults of MaintainOptions.
const (
	// DefaultSnapshotAge is how long snapshots are kept for time travel
	// (and for readers still planning on an older snapshot).
	DefaultSnapshotAge = 7 * 24 * time.Hour
	// DefaultRetainSnapshots is the number of snapshots always kept.
	DefaultRetainSnapshots = 10
	// DefaultOrphanAge is the age from which a file no snapshot holds is
	// deleted: older than any commit in flight (a batch's files are written
	// seconds before their commit).
	DefaultOrphanAge = 3 * 24 * time.Hour
)

// MaintainOptions tunes Maintain. The zero value means the defaults.
type MaintainOptions struct {
	// SnapshotAge: snapshots older than this are expired (default 7 days),
	// except the RetainSnapshots newest (default 10). Files only expired
	// snapshots held (compaction inputs, replaced batch files) are deleted.
	SnapshotAge     time.Duration
	RetainSnapshots int
	// OrphanAge: files under the table's location that no snapshot holds
	// and that are older than this are deleted (default 3 days): files of
	// commits that failed, outputs of compactions that lost.
	OrphanAge time.Duration
	// DryRun reports without changing anything.
	DryRun bool
}

// Validate names the first bad field.
func (o MaintainOptions) Validate() error {
	switch {
	case o.SnapshotAge < 0:
		return fmt.Errorf("archiver: MaintainOptions.SnapshotAge: must not be negative, got %s", o.SnapshotAge)
	case o.RetainSnapshots < 0:
		return fmt.Errorf("archiver: MaintainOptions.RetainSnapshots: must not be negative, got %d", o.RetainSnapshots)
	case o.OrphanAge < 0:
		return fmt.Errorf("archiver: MaintainOptions.OrphanAge: must not be negative, got %s", o.OrphanAge)
	case o.OrphanAge > 0 && o.OrphanAge < time.Hour:
		return fmt.Errorf("archiver: MaintainOptions.OrphanAge: at least 1h (a younger file may belong to a commit in flight), got %s", o.OrphanAge)
	}
	return nil
}

// MaintainStats says what Maintain did to one table.
type MaintainStats struct {
	Table            string
	SnapshotsBefore  int
	SnapshotsExpired int
	OrphansDeleted   int // files (data, manifests, metadata) no snapshot held
	OrphanBytes      int64
}

// Maintain expires a table's old snapshots (deleting the files only they
// held) and deletes its orphan files: the Iceberg maintenance that the
// scheduled maintenance runs after compaction. Safe to run at any time and
// concurrently with batches: expiry is a commit like any other, and
// orphans are only files older than OrphanAge.
func (a *Archive) Maintain(ctx context.Context, table string, opts MaintainOptions) (MaintainStats, error) {
	st := MaintainStats{Table: table}
	if err := opts.Validate(); err != nil {
		return st, err
	}
	if _, ok := tableByName[table]; !ok {
		return st, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	opts.SnapshotAge = cmp.Or(opts.SnapshotAge, DefaultSnapshotAge)
	opts.RetainSnapshots = cmp.Or(opts.RetainSnapshots, DefaultRetainSnapshots)
	opts.OrphanAge = cmp.Or(opts.OrphanAge, DefaultOrphanAge)
	t, err := a.lake.current(ctx, table)
	if err != nil || t == nil {
		return st, err // a table nothing was written to needs no upkeep
	}
	st.SnapshotsBefore = len(t.Metadata().Snapshots())
	if !opts.DryRun && t.CurrentSnapshot() != nil {
		err = a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
			tx := t.NewTransaction()
			if err := tx.ExpireSnapshots(icetable.WithOlderThan(opts.SnapshotAge), icetable.WithRetainLast(opts.RetainSnapshots)); err != nil {
				return false, err
			}
			_, err := tx.Commit(ctx)
			return false, err
		}, table)
		if err != nil {
			return st, fmt.Errorf("archiver: expire snapshots of %s: %w", table, err)
		}
		if t, err = a.lake.current(ctx, table); err != nil || t == nil {
			return st, err
		}
		st.SnapshotsExpired = st.SnapshotsBefore - len(t.Metadata().Snapshots())
	}
	// Only under data/ and metadata/: the table's location also holds the
	// files of the pre-Iceberg format (<table>/event_date=D/), which no
	// snapshot holds and which must survive until they are migrated.
	for _, dir := range []string{dataDir, "metadata"} {
		loc := a.l.uri(a.l.tableDir(table) + "/" + dir)
		res, err := t.DeleteOrphanFiles(ctx, icetable.WithLocation(loc), icetable.WithFilesOlderThan(opts.OrphanAge), icetable.WithDryRun(opts.DryRun))
		if err != nil {
			return st, fmt.Errorf("archiver: delete orphan files of %s under %s: %w", table, loc, err)
		}
		st.OrphansDeleted += len(res.OrphanFileLocations)
		for _, f := range res.OrphanFiles {
			st.OrphanBytes += f.SizeBytes
		}
	}
	return st, nil
}

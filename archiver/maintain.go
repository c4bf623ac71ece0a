package archiver

import (
	"cmp"
	"context"
	"fmt"
	"strings"
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
	// OrphansKept: files the table's snapshots do not hold but another
	// metadata file at its location references (kept, see Maintain).
	OrphansKept int
}

// Maintain expires a table's old snapshots and deletes its orphan files:
// the Iceberg maintenance that the scheduled maintenance runs after
// compaction. Safe to run at any time and concurrently with batches:
// expiry is a commit like any other, and orphans are only files older than
// OrphanAge.
//
// It never deletes a file that any metadata file at the table's location
// references (history.go, rule 1): expiry only removes snapshots from the
// table's metadata, and the files only they held are deleted by the orphan
// cleanup of a later run, once no metadata file at the location references
// them any more (the table keeps its last 100 metadata files, so once 100
// more commits have happened) and they are older than OrphanAge. Before
// changing anything it checks that the catalog's table is the whole
// history at its location, and refuses with a HistoryError
// (ErrShortHistory) naming the table, the location and the counts when it
// is not (rule 2): the location holds another table's metadata or newer
// metadata of this one, or orphan data files written before the table was
// created. A table missing from the catalog whose location holds
// metadata is ErrUnregisteredTable.
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
	if loc, want := strings.TrimSuffix(t.Location(), "/"), a.l.uri(a.l.tableDir(table)); loc != want {
		return st, fmt.Errorf("%w: table %s of the catalog is at %s, not at this archive's %s", ErrSchemaMismatch, table, loc, want)
	}
	h, err := a.readHistory(ctx, table, t)
	if err != nil {
		return st, err
	}
	if e := checkHistory(h.facts); e != nil {
		return st, e
	}
	st.SnapshotsBefore = len(t.Metadata().Snapshots())
	// Orphans first: expiry deletes nothing by itself (the older metadata
	// files still reference the expired snapshots' files), so the order
	// changes nothing but this: a refusal comes before any change.
	p, err := a.planOrphans(ctx, t, table, opts.OrphanAge, h)
	if err != nil {
		return st, err
	}
	st.OrphansKept = p.kept
	before, err := a.orphansBeforeCreation(ctx, table, p.data, h)
	if err != nil {
		return st, err
	}
	if e := checkOrphanAges(checkHistoryBase(h.facts), before, h.liveData, h.created); e != nil {
		return st, e
	}
	st.OrphansDeleted, st.OrphanBytes = len(p.keys), p.bytes
	if !opts.DryRun {
		err := forEach(ctx, len(p.keys), a.cfg.Concurrency, func(ctx context.Context, i int) error {
			return a.delete(ctx, p.keys[i])
		})
		if err != nil {
			return st, fmt.Errorf("archiver: delete the orphan files of %s: %w", table, err)
		}
	}
	if opts.DryRun || t.CurrentSnapshot() == nil {
		return st, nil
	}
	err = a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		tx := t.NewTransaction()
		// No deletion at commit (WithPostCommit(false)): the older metadata
		// files still reference the expired snapshots' files.
		if err := tx.ExpireSnapshots(icetable.WithOlderThan(opts.SnapshotAge), icetable.WithRetainLast(opts.RetainSnapshots), icetable.WithPostCommit(false)); err != nil {
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
	return st, nil
}

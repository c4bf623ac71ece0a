package archiver

import (
	"strconv"

	"github.com/streamfold/streamfold/internal/retry"

	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Table properties every archive table is created with.
var tableProps = iceberg.Properties{
	"format-version": "2",
	// Each commit writes a new metadata file; keep the last 100 and delete
	// older ones, or a table committed every few seconds piles them up.
	"write.metadata.delete-after-commit.enabled": "true",
	"write.metadata.previous-versions-max":       "100",
	"write.parquet.compression-codec":            "zstd",
	// Every commit adds a manifest, and planning a commit reads the
	// manifests of the days it touches: without merging, a day's k-th batch
	// reads k manifests (BenchmarkBatchRequests: 420 GETs per 100-record
	// batch after 200 batches); merging at 4 keeps it at a few.
	"commit.manifest-merge.enabled":      "true",
	"commit.manifest.min-count-to-merge": "4",
	// Snapshot expiry (maintenance) keeps a week of time travel.
	"history.expire.max-snapshot-age-ms":   strconv.FormatInt(DefaultSnapshotAge.Milliseconds(), 10),
	"history.expire.min-snapshots-to-keep": strconv.Itoa(DefaultRetainSnapshots),
	"streamfold.table-format":              "streamfold archive v2 (Iceberg)",
}

// lake is the archive's Iceberg side: the catalog and its tables.
type lake struct {
	cat       catalog.Catalog
	namespace table.Identifier
	l         layout
	// list lists the objects under a key prefix (the archive's S3 client):
	// the metadata files a missing table is registered from. Nil lists
	// nothing.
	list func(ctx context.Context, prefix string) ([]listed, error)
	// now is the clock of a new table's createdAtProp (nil: time.Now).
	now func() time.Time

	mu      sync.Mutex
	ensured map[string]bool // tables created or evolved by this process
}

func (k *lake) ident(name string) table.Identifier {
	return append(slices.Clone(k.namespace), name)
}

// load returns the table's current metadata, creating the table (and the
// namespace) when missing and adding columns the table lacks, once per
// process and table.
func (k *lake) load(ctx context.Context, name string) (*table.Table, error) {
	t, err := k.ensureOnce(ctx, name)
	if err != nil || t != nil {
		return t, err
	}
	t, err = k.cat.LoadTable(ctx, k.ident(name))
	if err != nil {
		return nil, fmt.Errorf("archiver: load table %s: %w", strings.Join(k.ident(name), "."), err)
	}
	return t, nil
}

// current returns the table's current metadata for a reader, or nil when
// the table does not exist yet (an archive nothing was written to). Unlike
// load, it never creates or changes a table: reading needs no write access
// to the catalog. A table the catalog lacks whose location holds metadata
// is ErrUnregisteredTable, never an empty table.
func (k *lake) current(ctx context.Context, name string) (*table.Table, error) {
	t, err := k.cat.LoadTable(ctx, k.ident(name))
	if missingTable(err) {
		if err := k.unregistered(ctx, name); err != nil {
			// A writer may have created or registered it meanwhile.
			if t, lerr := k.cat.LoadTable(ctx, k.ident(name)); lerr == nil {
				return t, nil
			}
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("archiver: load table %s: %w", strings.Join(k.ident(name), "."), err)
	}
	return t, nil
}

// ensureOnce ensures the table the first time this process uses it and
// returns it then; later calls return nil and no error, without a request.
func (k *lake) ensureOnce(ctx context.Context, name string) (*table.Table, error) {
	k.mu.Lock()
	done := k.ensured[name]
	k.mu.Unlock()
	if done {
		return nil, nil
	}
	t, err := k.ensure(ctx, name)
	if err != nil {
		return nil, err
	}
	k.markEnsured(name)
	return t, nil
}

// markEnsured records that this process ensured the table.
func (k *lake) markEnsured(name string) {
	k.mu.Lock()
	k.ensured[name] = true
	k.mu.Unlock()
}

// ensure creates or evolves one table to the current column definitions.
// New columns are added as optional at the end (their ids must be the next
// ones: Column.ID). A column whose id or type differs is an error, never
// changed silently.
func (k *lake) ensure(ctx context.Context, name string) (*table.Table, error) {
	want, err := IcebergSchema(name)
	if err != nil {
		return nil, err
	}
	id := k.ident(name)
	t, err := k.cat.LoadTable(ctx, id)
	if missingTable(err) {
		// The catalog lost the table, not its history: register the
		// newest metadata at the location; only a location without any
		// gets a new (empty) table.
		if t, err = k.restore(ctx, name); err == nil && t == nil {
			return k.create(ctx, name, want)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("archiver: load table %s: %w", strings.Join(id, "."), err)
	}
	if loc, want := strings.TrimSuffix(t.Location(), "/"), k.l.uri(k.l.tableDir(name)); loc != want {
		return nil, fmt.Errorf("%w: table %s of the catalog is at %s, not at this archive's %s (another archive uses this namespace: pick another --namespace or catalog)",
			ErrSchemaMismatch, strings.Join(id, "."), loc, want)
	}
	have := t.Schema()
	var missing []iceberg.NestedField
	for _, f := range want.Fields() {
		got, ok := have.FindFieldByName(f.Name)
		switch {
		case !ok:
			missing = append(missing, f)
		case got.ID != f.ID || !got.Type.Equals(f.Type):
			return nil, fmt.Errorf("%w: table %s column %s is id %d %s in the catalog, id %d %s here",
				ErrSchemaMismatch, strings.Join(id, "."), f.Name, got.ID, got.Type, f.ID, f.Type)
		}
	}
	if len(missing) > 0 {
		if t, err = k.evolve(ctx, name, missing); err != nil {
			return nil, err
		}
	}
	return k.setProperties(ctx, name, t)
}

// setProperties brings the table's properties to tableProps (a table made
// by an older archiver lacks newer ones, such as manifest merging). Other
// properties are left alone.
func (k *lake) setProperties(ctx context.Context, name string, t *table.Table) (*table.Table, error) {
	stale := func(t *table.Table) iceberg.Properties {
		out := iceberg.Properties{}
		have := t.Properties()
		for key, v := range tableProps {
			if key != "format-version" && have[key] != v {
				out[key] = v
			}
		}
		return out
	}
	if len(stale(t)) == 0 {
		return t, nil
	}
	err := k.retry(ctx, func(t *table.Table) (bool, error) {
		props := stale(t)
		if len(props) == 0 {
			return true, nil
		}
		tx := t.NewTransaction()
		if err := tx.SetProperties(props); err != nil {
			return false, err
		}
		_, err := tx.Commit(ctx)
		return false, err
	}, name)
	if err != nil {
		return nil, fmt.Errorf("archiver: set the properties of table %s: %w", name, err)
	}
	return k.cat.LoadTable(ctx, k.ident(name))
}

func (k *lake) create(ctx context.Context, name string, s *iceberg.Schema) (*table.Table, error) {
	spec, err := partitionSpec(s)
	if err != nil {
		return nil, err
	}
	// Create the namespace only when it is missing: in AWS it is the Glue
	// database Terraform made, and the archiver may read it
	// (glue:GetDatabase) but not create one (glue:CreateDatabase).
	if _, err := k.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	props := iceberg.Properties{}
	for key, v := range tableProps {
		props[key] = v
	}
	if def, ok := tableByName[name]; ok {
		props["comment"] = def.doc
	}
	now := time.Now
	if k.now != nil {
		now = k.now
	}
	props[createdAtProp] = now().UTC().Format(time.RFC3339Nano)
	t, err := k.cat.CreateTable(ctx, k.ident(name), s,
		catalog.WithLocation(k.l.uri(k.l.tableDir(name))),
		catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(props))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return k.ensure(ctx, name) // another process created it first
	}
	if err != nil {
		return nil, fmt.Errorf("archiver: create table %s: %w", strings.Join(k.ident(name), "."), err)
	}
	return t, nil
}

// evolve adds columns, optional, in the order given, and checks the ids the
// table gave them.
func (k *lake) evolve(ctx context.Context, name string, cols []iceberg.NestedField) (*table.Table, error) {
	err := k.retry(ctx, func(t *table.Table) (bool, error) {
		have := t.Schema()
		tx := t.NewTransaction()
		up := tx.UpdateSchema(true, false)
		n := 0
		for _, c := range cols {
			if _, ok := have.FindFieldByName(c.Name); ok {
				continue
			}
			up = up.AddColumn([]string{c.Name}, c.Type, c.Doc, false, nil)
			n++
		}
		if n == 0 {
			return true, nil
		}
		if err := up.Commit(); err != nil {
			return false, err
		}
		_, err := tx.Commit(ctx)
		return false, err
	}, name)
	if err != nil {
		return nil, fmt.Errorf("archiver: add columns to table %s: %w", name, err)
	}
	t, err := k.cat.LoadTable(ctx, k.ident(name))
	if err != nil {
		return nil, err
	}
	for _, c := range cols {
		got, ok := t.Schema().FindFieldByName(c.Name)
		if !ok || got.ID != c.ID {
			return nil, fmt.Errorf("%w: table %s: new column %s got id %d, want %d (add columns only at the end of a table's list)",
				ErrSchemaMismatch, name, c.Name, got.ID, c.ID)
		}
	}
	return t, nil
}

// missingTable reports a catalog without the table (or without its
// namespace: Glue reports a missing database as a missing table).
func missingTable(err error) bool {
	return errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace)
}

// isCommitConflict reports an optimistic-concurrency failure: another
// writer committed first. The library does not retry it (retries are off
// by default, and some catalogs report a stale table as a plain
// "requirement failed").
func isCommitConflict(err error) bool {
	return err != nil && (errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed"))
}

// retry runs attempt on the table's current metadata until it commits,
// reloading after each conflict with jittered backoff (retry.Full). attempt returns
// done=true when there is nothing (left) to commit.
func (k *lake) retry(ctx context.Context, attempt func(t *table.Table) (done bool, err error), name string) error {
	for i := 0; ; i++ {
		t, err := k.cat.LoadTable(ctx, k.ident(name))
		if missingTable(err) {
			// Dropped from the catalog since this process ensured it:
			// ensure it again (registering its history), then commit.
			// ensure itself, not ensureOnce: another goroutine may mark
			// the table ensured at any time, and ensureOnce would then
			// return no table.
			t, err = k.ensure(ctx, name)
			if err == nil {
				k.markEnsured(name)
			}
		}
		if err != nil {
			return fmt.Errorf("archiver: load table %s: %w", name, err)
		}
		done, err := attempt(t)
		if done || err == nil {
			return nil
		}
		if !isCommitConflict(err) {
			return err
		}
		if i+1 >= maxCommitAttempts {
			return fmt.Errorf("%w: table %s: %d attempts: %w", ErrCommitContention, name, i+1, err)
		}
		// Full jitter, 20 ms * 2^i on average, as the writers that
		// conflicted spread out.
		if err := retry.Sleep(ctx, retry.Full(40*time.Millisecond, 4*time.Second, i+1)); err != nil {
			return err
		}
	}
}

// maxCommitAttempts bounds one commit's attempts under contention.
var maxCommitAttempts = 30

// dataFiles returns the data files of the table's current snapshot,
// restricted to the given event dates (all when dates is empty), keyed by
// their S3 key; none for a nil (missing) table.
func (k *lake) dataFiles(ctx context.Context, t *table.Table, dates []string) (map[string]iceberg.DataFile, error) {
	out := map[string]iceberg.DataFile{}
	if t == nil || t.CurrentSnapshot() == nil {
		return out, nil
	}
	opts := []table.ScanOption{}
	if len(dates) > 0 {
		opts = append(opts, table.WithRowFilter(datesFilter(dates)))
	}
	tasks, err := t.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("archiver: plan files of %s: %w", strings.Join(t.Identifier(), "."), err)
	}
	for _, task := range tasks {
		key, err := k.l.keyOf(task.File.FilePath())
		if err != nil {
			return nil, err
		}
		out[key] = task.File
	}
	return out, nil
}

// snapshotID is the id of the table's current snapshot, -1 for a nil
// (missing) table or one without a snapshot. Snapshot ids are unique in a
// table: two loads with the same id hold the same files.
func snapshotID(t *table.Table) int64 {
	if t == nil || t.CurrentSnapshot() == nil {
		return -1
	}
	return t.CurrentSnapshot().SnapshotID
}

// datesFilter selects the rows whose event_time falls on one of the dates:
// through the day(event_time) partition, it selects those partitions' files.
func datesFilter(dates []string) iceberg.BooleanExpression {
	var expr iceberg.BooleanExpression = iceberg.AlwaysFalse{}
	for _, d := range dates {
		day, _ := time.Parse(DateLayout, d)
		from := iceberg.Timestamp(day.UnixMicro())
		to := iceberg.Timestamp(day.AddDate(0, 0, 1).UnixMicro())
		r := iceberg.Reference("event_time")
		expr = iceberg.NewOr(expr, iceberg.NewAnd(iceberg.GreaterThanEqual(r, from), iceberg.LessThan(r, to)))
	}
	return expr
}

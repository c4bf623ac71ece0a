package archiver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// Migration of an archive made before Iceberg.
//
// The old format kept each partition's data objects under
// PREFIX/<table>/event_date=D/ and made them visible through the Hive
// symlink manifest PREFIX/_symlink/<table>/event_date=D/manifest (one
// s3:// URI per line); objects it did not list were invisible orphans. Its
// files cannot be registered in Iceberg tables as they are (their
// timestamps are MILLIS and their columns have no field ids, which gives
// wrong partition and bounds metadata), so Migrate re-writes them:
//
//  1. read the partition's manifest; its sorted URIs hash to the
//     partition's migration id H (the first 16 hex digits of their SHA-256);
//  2. if the partition's marker PREFIX/_migrated/<table>/event_date=D says
//     H, or the table already holds files migrated-H-*, it is done: skip it
//     (a marker or files of another id: refuse it, ErrMigrationConflict:
//     the manifest changed after the partition was migrated);
//  3. read the objects the manifest lists (never the orphans), merge their
//     rows in (event time, sequence) order, one row per (subject, event id)
//     and none whose (subject, event id) the table's partition holds
//     already, into PREFIX/<table>/data/event_date=D/migrated-H-<n>.parquet,
//     split as compaction does (groups of inputs of up to the target size);
//  4. commit those files in one Iceberg snapshot (AddDataFiles), retried on
//     conflicts like every commit of the archive;
//  5. write the marker; with DeleteOld, delete the listed objects and then
//     the manifest (only now: the commit is done).
//
// A crash before the commit leaves files that no snapshot holds (orphans):
// the re-run writes the same names again and commits them. A crash after
// it is found by step 2. The marker lives outside every table's location,
// so that neither compaction (which replaces migrated-H files by its
// outputs) nor orphan cleanup erases the proof that a partition was
// migrated: a re-run never archives a partition twice.

// ErrMigrationConflict: a partition was migrated from other content than
// its manifest lists now (the old archiver kept writing after it was
// migrated, or the manifest was edited). Migrate refuses it.
var ErrMigrationConflict = errors.New("archiver: migration conflict")

// migrationMarker is the content of a marker.
type migrationMarker struct {
	Table      string    `json:"table"`
	Date       string    `json:"event_date"`
	ID         string    `json:"migration_id"`
	Manifest   []string  `json:"manifest"`
	Files      []string  `json:"files"`
	Records    int       `json:"records"`
	MigratedAt time.Time `json:"migrated_at"`
}

// MigrateOptions tunes Migrate. The zero value migrates every table.
type MigrateOptions struct {
	// Tables limits the migration to these tables (default: all).
	Tables []string
	// TargetObjectBytes: the listed objects are merged into outputs of up
	// to this many input bytes (default Config.TargetObjectBytes).
	TargetObjectBytes int64
	// DryRun reads the manifests and says what would be migrated, without
	// writing anything (not even the tables).
	DryRun bool
	// DeleteOld deletes a partition's old objects and then its manifest,
	// once its migration is committed (or found committed).
	DeleteOld bool
	// Progress, when set, is called once per partition, when it is done.
	Progress func(MigrateProgress)
}

// Validate names the first bad field.
func (o MigrateOptions) Validate() error {
	if o.TargetObjectBytes < 0 {
		return fmt.Errorf("archiver: MigrateOptions.TargetObjectBytes: must not be negative, got %d", o.TargetObjectBytes)
	}
	for _, t := range o.Tables {
		if _, ok := tableByName[t]; !ok {
			return fmt.Errorf("%w: MigrateOptions.Tables: %q", ErrUnknownTable, t)
		}
	}
	return nil
}

// Outcomes of a partition (MigrateProgress.Status).
const (
	MigrateMigrated     = "migrated"      // written and committed now
	MigrateSkipped      = "skipped"       // committed by an earlier run
	MigrateWouldMigrate = "would-migrate" // DryRun
	MigrateRefused      = "refused"       // ErrMigrationConflict; Err says why
)

// MigrateProgress is what Migrate did with one old partition.
type MigrateProgress struct {
	Table, Date string
	Status      string
	ID          string // the migration id (hash of the manifest's URIs)
	Objects     int    // old objects the manifest lists
	InputBytes  int64  // their size
	Records     int    // rows written
	Duplicates  int    // rows dropped: their (subject, event id) was in an earlier row or in the table
	Files       int    // files written
	Bytes       int64  // their size
	Deleted     int    // old objects and manifest deleted (DeleteOld)
	Err         error  // Status MigrateRefused
}

// MigrateStats sums up a migration.
type MigrateStats struct {
	Tables     int   `json:"tables"`     // tables with old partitions
	Partitions int   `json:"partitions"` // old partitions found
	Migrated   int   `json:"migrated"`   // partitions migrated now (DryRun: would be)
	Skipped    int   `json:"skipped"`    // partitions an earlier run migrated
	Refused    int   `json:"refused"`    // partitions refused (ErrMigrationConflict)
	Objects    int   `json:"objects"`    // old objects read (DryRun: to read)
	InputBytes int64 `json:"input_bytes"`
	Records    int   `json:"records"`    // rows written
	Duplicates int   `json:"duplicates"` // rows dropped as duplicates
	Files      int   `json:"files"`      // files written and committed
	Bytes      int64 `json:"bytes"`      // their size
	Deleted    int   `json:"deleted"`    // old objects and manifests deleted
	DryRun     bool  `json:"dry_run"`
}

func (s *MigrateStats) add(p MigrateProgress) {
	s.Partitions++
	switch p.Status {
	case MigrateMigrated, MigrateWouldMigrate:
		s.Migrated++
	case MigrateSkipped:
		s.Skipped++
	case MigrateRefused:
		s.Refused++
	}
	s.Objects += p.Objects
	s.InputBytes += p.InputBytes
	s.Records += p.Records
	s.Duplicates += p.Duplicates
	s.Files += p.Files
	s.Bytes += p.Bytes
	s.Deleted += p.Deleted
}

// Migrate migrates the archive of the old (symlink manifest) format in this
// archive's bucket and prefix into its Iceberg tables, partition by
// partition, as described above. It is idempotent and resumable: run it
// again after a failure, or after it finished (then it changes nothing).
// The old archiver must be stopped first (a manifest it changes after its
// partition was migrated makes that partition refused); the new one may
// run meanwhile.
//
// A refused partition does not stop the others: Migrate goes on and
// returns an ErrMigrationConflict naming every refused partition. Any
// other error stops it, naming the partition.
func (a *Archive) Migrate(ctx context.Context, opts MigrateOptions) (MigrateStats, error) {
	st := MigrateStats{DryRun: opts.DryRun}
	if err := opts.Validate(); err != nil {
		return st, err
	}
	if opts.TargetObjectBytes == 0 {
		opts.TargetObjectBytes = a.cfg.TargetObjectBytes
	}
	tables := opts.Tables
	if len(tables) == 0 {
		for _, t := range tableDefs {
			tables = append(tables, t.name)
		}
	}
	var refused []error
	for _, table := range tables {
		dates, err := a.legacyPartitions(ctx, table)
		if err != nil {
			return st, fmt.Errorf("archiver: migrate %s: %w", table, err)
		}
		if len(dates) == 0 {
			continue
		}
		st.Tables++
		for _, date := range dates {
			p, err := a.migratePartition(ctx, table, date, opts)
			if errors.Is(err, ErrMigrationConflict) {
				p.Status, p.Err = MigrateRefused, err
				refused = append(refused, err)
			} else if err != nil {
				return st, fmt.Errorf("archiver: migrate %s partition %s: %w", table, partition(date), err)
			}
			st.add(p)
			if opts.Progress != nil {
				opts.Progress(p)
			}
		}
	}
	if len(refused) > 0 {
		return st, fmt.Errorf("archiver: migrate: %d partitions refused: %w", len(refused), errors.Join(refused...))
	}
	return st, nil
}

// legacyPartitions returns the dates of a table's old manifests, in order.
func (a *Archive) legacyPartitions(ctx context.Context, table string) ([]string, error) {
	dir := a.l.legacyManifestDir(table)
	dirs, err := a.listDirs(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		date, ok := strings.CutPrefix(strings.TrimSuffix(strings.TrimPrefix(d, dir), "/"), PartitionKey+"=")
		if ok && checkDate(date) == nil {
			out = append(out, date)
		}
	}
	slices.Sort(out)
	return out, nil
}

// parseLegacyManifest returns the URIs of an old manifest, sorted and
// unique (as the old archiver read them).
func parseLegacyManifest(body []byte) []string {
	var out []string
	for line := range strings.SplitSeq(string(body), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// migrationID is the id of a manifest's content.
func migrationID(uris []string) string {
	h := sha256.New()
	for _, u := range uris {
		h.Write([]byte(u))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// conflict is the ErrMigrationConflict of one partition.
func conflict(table, date, was, now string) error {
	return fmt.Errorf("%w: %s partition %s was migrated from a manifest with id %s, its manifest (%s) now has id %s: "+
		"the old archiver changed it after the migration (stop it before migrating); "+
		"compare the manifest with the table and migrate the difference by hand, or delete the manifest if the table is complete",
		ErrMigrationConflict, table, partition(date), was, "_symlink/"+table+"/"+partition(date)+"/manifest", now)
}

func (a *Archive) migratePartition(ctx context.Context, table, date string, opts MigrateOptions) (MigrateProgress, error) {
	p := MigrateProgress{Table: table, Date: date}
	manKey := a.l.legacyManifestKey(table, date)
	man, err := a.get(ctx, manKey)
	if errors.Is(err, ErrNotFound) {
		// Deleted meanwhile (a concurrent --delete-old): nothing is left.
		p.Status = MigrateSkipped
		return p, nil
	}
	if err != nil {
		return p, err
	}
	uriList := parseLegacyManifest(man.body)
	p.ID = migrationID(uriList)
	p.Objects = len(uriList)
	oldDir := a.l.legacyDataDir(table, date)
	keys := make([]string, len(uriList))
	for i, u := range uriList {
		k, err := a.l.keyOf(u)
		if err != nil {
			return p, err
		}
		if !strings.HasPrefix(k, oldDir) || strings.Contains(k[len(oldDir):], "/") {
			return p, fmt.Errorf("%w: manifest %s lists %s, which is not an object of its partition %s", ErrCorruptObject, manKey, u, oldDir)
		}
		keys[i] = k
	}

	// Done already?
	done, err := a.migrationDone(ctx, table, date, p.ID, uriList, opts.DryRun)
	if err != nil {
		return p, err
	}
	if done {
		p.Status = MigrateSkipped
		if opts.DeleteOld && !opts.DryRun {
			p.Deleted, err = a.deleteLegacy(ctx, keys, manKey)
		}
		return p, err
	}

	// Sizes, and a check that every listed object exists.
	objs, err := a.list(ctx, oldDir)
	if err != nil {
		return p, err
	}
	info := make(map[string]listed, len(objs))
	for _, o := range objs {
		info[o.key] = o
	}
	for _, k := range keys {
		o, ok := info[k]
		if !ok {
			return p, fmt.Errorf("%w: manifest %s lists %s, which does not exist", ErrCorruptObject, manKey, k)
		}
		p.InputBytes += o.size
	}
	groups := packBySize(keys, func(k string) int64 { return info[k].size }, opts.TargetObjectBytes)
	if opts.DryRun {
		p.Status = MigrateWouldMigrate
		p.Files = len(groups)
		return p, nil
	}

	t, err := a.lake.load(ctx, table)
	if err != nil {
		return p, err
	}
	// Events the table's partition holds already (the new archiver may
	// have archived some of them again) are not written a second time.
	seen := map[string]bool{}
	have, err := a.lake.dataFiles(ctx, t, []string{date})
	if err != nil {
		return p, err
	}
	for _, k := range keysOn(have, date) {
		recs, err := a.Read(ctx, k)
		if err != nil {
			return p, err
		}
		for _, r := range recs {
			seen[r.Event.Subject+"\x00"+r.Event.ID] = true
		}
	}

	outs := make([]string, len(groups))
	for n := range groups {
		outs[n] = a.l.migratedKey(table, date, p.ID, n)
	}
	m, err := a.mergeGroups(ctx, table, groups, outs, seen)
	if err != nil {
		return p, err
	}
	written := m.keys()
	p.Records, p.Duplicates, p.Bytes, p.Files = p.Records+m.rows, p.Duplicates+m.dups, p.Bytes+m.bytes, len(written)

	if len(written) > 0 {
		err = a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
			files, err := a.lake.dataFiles(ctx, t, []string{date})
			if err != nil {
				return false, err
			}
			if _, ok := files[written[0]]; ok {
				return true, nil // committed already (a retry after a lost response)
			}
			for k := range files {
				if id, ok := migratedID(k); ok && id != p.ID {
					return false, conflict(table, date, id, p.ID)
				}
			}
			add, err := dataFiles(a.l, t, m.files)
			if err != nil {
				return false, err
			}
			tx := t.NewTransaction()
			props := iceberg.Properties{
				"streamfold.operation":    "migrate",
				"streamfold.migration-id": p.ID,
				"streamfold.partition":    partition(date),
				"streamfold.records":      strconv.Itoa(p.Records),
			}
			if err := tx.AddDataFiles(ctx, add, props, icetable.WithoutDuplicateCheck()); err != nil {
				return false, err
			}
			_, err = tx.Commit(ctx)
			return false, err
		}, table)
		if err != nil {
			return p, err
		}
	}
	if err := a.writeMigrationMarker(ctx, table, date, p.ID, uriList, written, p.Records); err != nil {
		return p, err
	}
	p.Status = MigrateMigrated
	if opts.DeleteOld {
		p.Deleted, err = a.deleteLegacy(ctx, keys, manKey)
	}
	return p, err
}

// migrationDone reports whether the partition was migrated from the
// manifest of id: by its marker, or by the table holding its files (a
// crash between the commit and the marker; the marker is written then).
func (a *Archive) migrationDone(ctx context.Context, table, date, id string, manifest []string, dryRun bool) (bool, error) {
	obj, err := a.get(ctx, a.l.migrationMarkerKey(table, date))
	switch {
	case err == nil:
		var m migrationMarker
		if err := json.Unmarshal(obj.body, &m); err != nil {
			return false, fmt.Errorf("%w: %s: %w", ErrCorruptObject, a.l.migrationMarkerKey(table, date), err)
		}
		if m.ID != id {
			return false, conflict(table, date, m.ID, id)
		}
		return true, nil
	case !errors.Is(err, ErrNotFound):
		return false, err
	}
	t, err := a.lake.current(ctx, table)
	if err != nil {
		return false, err
	}
	files, err := a.lake.dataFiles(ctx, t, []string{date})
	if err != nil {
		return false, err
	}
	var mine []string
	for _, k := range keysOn(files, date) {
		got, ok := migratedID(k)
		if !ok {
			continue
		}
		if got != id {
			return false, conflict(table, date, got, id)
		}
		mine = append(mine, k)
	}
	if len(mine) == 0 {
		return false, nil
	}
	if dryRun {
		return true, nil
	}
	slices.Sort(mine)
	return true, a.writeMigrationMarker(ctx, table, date, id, manifest, mine, -1)
}

func (a *Archive) writeMigrationMarker(ctx context.Context, table, date, id string, manifest, files []string, records int) error {
	body, err := json.MarshalIndent(migrationMarker{
		Table: table, Date: date, ID: id, Manifest: manifest, Files: uris(a.l, files), Records: records, MigratedAt: a.cfg.Now().UTC(),
	}, "", "  ")
	if err != nil {
		return err
	}
	err = a.put(ctx, a.l.migrationMarkerKey(table, date), body, "application/json")
	return err
}

// deleteLegacy deletes a migrated partition's old objects, then its
// manifest (a crash in between leaves the manifest, and the re-run, which
// finds the partition migrated, deletes the rest).
func (a *Archive) deleteLegacy(ctx context.Context, keys []string, manifest string) (int, error) {
	if err := a.deleteAll(ctx, keys); err != nil {
		return 0, err
	}
	if err := a.delete(ctx, manifest); err != nil {
		return len(keys), err
	}
	return len(keys) + 1, nil
}

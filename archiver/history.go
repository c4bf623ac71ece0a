package archiver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// Maintenance deletes files, so it must know the whole history at a table's
// location, not only what the catalog's entry says. Two rules (Maintain):
//
//  1. A file that any metadata file at the location references (through
//     its snapshots: manifest lists, manifests, data files; its statistics
//     files; the metadata files of its log) is never deleted, whatever the
//     catalog's table holds.
//  2. Maintenance refuses to run, and changes nothing, on a table whose
//     history is shorter than the files it would call orphans: the location
//     holds metadata of another table (another table-uuid, with snapshots:
//     an empty table was created over a lost catalog entry), or metadata of
//     this table newer than the catalog's (the catalog points at an old
//     version), or orphan data files written before the table was created
//     (createdAtProp). The error (HistoryError, ErrShortHistory) names the
//     table, the location and the counts.

// historyGrace is how old a metadata file newer than the catalog's must be
// before it counts against the table: a younger one may be a commit in
// flight. Tests shorten it.
var historyGrace = time.Hour

// HistoryError is Maintain's refusal: the catalog's table is not the whole
// history at its location. Nothing was changed. It unwraps to
// ErrShortHistory.
type HistoryError struct {
	Table    string
	Location string
	// Reason says what disagrees, with its counts.
	Reason string
	// Metadata is the catalog's current metadata file, Version its number.
	Metadata string
	Version  int
	// MetadataFiles is the number of metadata files at the location;
	// Foreign those of another table (with snapshots), Newer those of this
	// table newer than the catalog's.
	MetadataFiles, Foreign, Newer int
	// OrphanDataFiles is the number of data files that would be deleted,
	// LiveDataFiles the number the table's snapshots hold.
	OrphanDataFiles, LiveDataFiles int
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("archiver: maintenance refused for table %s at %s: %s (the catalog's metadata %s, version %d; %d metadata files at the location; nothing was changed)",
		e.Table, e.Location, e.Reason, e.Metadata, e.Version, e.MetadataFiles)
}

// Unwrap returns ErrShortHistory.
func (e *HistoryError) Unwrap() error { return ErrShortHistory }

// locationMetadata is one metadata file at a table's location, read.
type locationMetadata struct {
	metadataFile
	UUID      string
	Snapshots int
	meta      icetable.Metadata
}

// historyFacts is what checkHistory decides on.
type historyFacts struct {
	Table, Location string
	// The catalog's current metadata file.
	CurrentKey     string
	CurrentVersion int
	CurrentUUID    string
	// Files are every metadata file at the location (the current included).
	Files []locationMetadata
	Now   time.Time
}

// checkHistory refuses a table whose catalog entry is not the newest of its
// location's history (rule 2's first two cases); nil when it is.
func checkHistory(f historyFacts) *HistoryError {
	e := checkHistoryBase(f)
	var foreign, newer []string
	for _, m := range f.Files {
		switch {
		case m.UUID != f.CurrentUUID && m.Snapshots > 0:
			foreign = append(foreign, fmt.Sprintf("%s (table-uuid %s, %d snapshots)", m.Key, m.UUID, m.Snapshots))
		case m.UUID == f.CurrentUUID && m.Version > f.CurrentVersion && f.Now.Sub(m.Modified) >= historyGrace:
			newer = append(newer, m.Key)
		}
	}
	e.Foreign, e.Newer = len(foreign), len(newer)
	switch {
	case len(foreign) > 0:
		e.Reason = fmt.Sprintf("the location holds %d metadata files of another table than the catalog's (table-uuid %s), e.g. %s: the catalog's table was created over a history the catalog had lost, and deleting orphans would delete that history (restore it: `streamfold archive register --table %s --replace` after moving the catalog's table's own metadata away, or merge them by hand)",
			len(foreign), f.CurrentUUID, foreign[0], f.Table)
	case len(newer) > 0:
		e.Reason = fmt.Sprintf("the location holds %d metadata files of this table newer than the catalog's version %d, e.g. %s: the catalog points at an old version (run `streamfold archive register --table %s --replace` to point it at the newest)",
			len(newer), f.CurrentVersion, newer[0], f.Table)
	default:
		return nil
	}
	return e
}

// checkHistoryBase is a HistoryError without a reason yet.
func checkHistoryBase(f historyFacts) *HistoryError {
	return &HistoryError{Table: f.Table, Location: f.Location, Metadata: f.CurrentKey, Version: f.CurrentVersion, MetadataFiles: len(f.Files)}
}

// createdAtProp is the table property holding when the archiver created
// the table (RFC 3339, UTC). A registered table keeps its history's.
const createdAtProp = "streamfold.created-at"

// checkOrphanAges refuses to delete data files written before the table was
// created (rule 2's last case): they cannot be the table's own (failed
// commits, expired snapshots), so they are a history it does not know (a
// lost catalog entry replaced by a new table after its metadata was lost
// too). before is their number, live the data files the table's snapshots
// hold.
func checkOrphanAges(e *HistoryError, before, live int, created time.Time) *HistoryError {
	if before == 0 {
		return nil
	}
	e.OrphanDataFiles, e.LiveDataFiles = before, live
	e.Reason = fmt.Sprintf("%d orphan data files would be deleted that were written before the table was created (%s; the table's snapshots hold %d data files): the table's history is shorter than the files at its location (a lost catalog entry replaced by a new table?); find the metadata that holds them, or delete them by hand",
		before, created.UTC().Format(time.RFC3339), live)
	return e
}

// history is the metadata at a table's location and every file it
// references.
type history struct {
	facts historyFacts
	// protected holds the keys every metadata file at the location
	// references (rule 1), liveData the data files of the current table's
	// snapshots.
	protected map[string]bool
	liveData  int
	// created is the table's createdAtProp, zero when it has none (made by
	// an archiver before it was recorded).
	created time.Time
}

// readHistory reads every metadata file at the table's location and
// collects the files they reference: each distinct manifest list and
// manifest is read once.
func (a *Archive) readHistory(ctx context.Context, name string, t *icetable.Table) (*history, error) {
	fsys, err := t.FS(ctx)
	if err != nil {
		return nil, err
	}
	files, err := a.lake.metadataFiles(ctx, name)
	if err != nil {
		return nil, err
	}
	curKey, err := a.l.keyOf(t.MetadataLocation())
	if err != nil {
		return nil, err
	}
	curVersion, _ := metadataVersion(curKey)
	h := &history{
		facts: historyFacts{
			Table: name, Location: a.l.uri(a.l.tableDir(name)),
			CurrentKey: t.MetadataLocation(), CurrentVersion: curVersion, CurrentUUID: t.Metadata().TableUUID().String(),
			Now: a.cfg.Now(),
		},
		protected: map[string]bool{},
	}
	if v, ok := t.Properties()[createdAtProp]; ok {
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			h.created = at
		}
	}
	read := make([]locationMetadata, len(files))
	err = forEach(ctx, len(files), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		f := files[i]
		m := locationMetadata{metadataFile: f}
		if f.Key == curKey {
			m.meta = t.Metadata()
		} else {
			mt, err := icetable.NewFromLocation(ctx, t.Identifier(), a.l.uri(f.Key), func(context.Context) (iceio.IO, error) { return fsys, nil }, nil)
			if err != nil {
				return fmt.Errorf("archiver: table %s: read the metadata file %s at its location (maintenance needs every one to know what they reference): %w", name, a.l.uri(f.Key), err)
			}
			m.meta = mt.Metadata()
		}
		m.UUID, m.Snapshots = m.meta.TableUUID().String(), len(m.meta.Snapshots())
		read[i] = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.facts.Files = read
	metas := make([]icetable.Metadata, 0, len(read)+1)
	for _, m := range read {
		metas = append(metas, m.meta)
	}
	if !slices.ContainsFunc(files, func(f metadataFile) bool { return f.Key == curKey }) {
		metas = append(metas, t.Metadata()) // listed before it was written
	}
	refs, live, err := a.referenced(ctx, fsys, metas, t.Metadata())
	if err != nil {
		return nil, err
	}
	for p := range refs {
		if k, err := a.l.keyOf(p); err == nil {
			h.protected[k] = true
		}
	}
	h.protected[curKey] = true
	h.liveData = live
	return h, nil
}

// referenced returns every file the metadata reference (true for data
// and delete files, false for metadata files, manifest lists, manifests and
// statistics): their metadata logs, statistics files, and what their
// snapshots' manifest lists and manifests list as live. live is the number
// of data and delete files that cur's snapshots hold; cur must be one of
// metas. Each distinct manifest list and manifest is read once.
func (a *Archive) referenced(ctx context.Context, fsys iceio.IO, metas []icetable.Metadata, cur icetable.Metadata) (out map[string]bool, live int, err error) {
	out = map[string]bool{}
	lists := map[string]icetable.Snapshot{}
	curLists := map[string]bool{}
	for _, s := range cur.Snapshots() {
		if s.ManifestList != "" {
			curLists[s.ManifestList] = true
		}
	}
	for _, m := range metas {
		for e := range m.PreviousFiles() {
			out[e.MetadataFile] = false
		}
		for sf := range m.Statistics() {
			if sf.StatisticsPath != "" {
				out[sf.StatisticsPath] = false
			}
		}
		for psf := range m.PartitionStatistics() {
			if psf.StatisticsPath != "" {
				out[psf.StatisticsPath] = false
			}
		}
		for _, s := range m.Snapshots() {
			if s.ManifestList != "" {
				lists[s.ManifestList] = s
				out[s.ManifestList] = false
			}
		}
	}
	snaps := make([]icetable.Snapshot, 0, len(lists))
	for _, s := range lists {
		snaps = append(snaps, s)
	}
	var mu sync.Mutex
	manifests := map[string]iceberg.ManifestFile{}
	curManifests := map[string]bool{} // the manifests of cur's snapshots
	err = forEach(ctx, len(snaps), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		ms, err := snaps[i].Manifests(fsys)
		if err != nil {
			return fmt.Errorf("archiver: read the manifest list %s: %w", snaps[i].ManifestList, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			manifests[m.FilePath()] = m
			out[m.FilePath()] = false
			if curLists[snaps[i].ManifestList] {
				curManifests[m.FilePath()] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	all := make([]iceberg.ManifestFile, 0, len(manifests))
	for _, m := range manifests {
		all = append(all, m)
	}
	liveData := map[string]bool{} // the data and delete files of cur's snapshots
	err = forEach(ctx, len(all), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		var paths []string
		for e, err := range all[i].Entries(fsys, true) {
			if err != nil {
				return fmt.Errorf("archiver: read the manifest %s: %w", all[i].FilePath(), err)
			}
			paths = append(paths, e.DataFile().FilePath())
		}
		mu.Lock()
		defer mu.Unlock()
		for _, p := range paths {
			out[p] = true
			if curManifests[all[i].FilePath()] {
				liveData[p] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, len(liveData), nil
}

// orphanPlan is what orphan cleanup would delete under one directory, after
// rule 1.
type orphanPlan struct {
	keys  []string
	bytes int64
	data  []string // the data files among keys
	kept  int      // candidates some metadata file at the location references
}

// planOrphans lists the files under the table's data/ and metadata/
// older than age that the current table does not reference (iceberg-go's
// plan, one walk of the table's location), less those any metadata file at
// the location references and any metadata file newer than the catalog's.
// Only under data/ and metadata/: the location also holds the files of the
// pre-Iceberg format (<table>/event_date=D/), which no snapshot holds and
// which must survive until they are migrated.
func (a *Archive) planOrphans(ctx context.Context, t *icetable.Table, name string, age time.Duration, h *history) (orphanPlan, error) {
	var p orphanPlan
	loc := a.l.uri(a.l.tableDir(name))
	plan, err := t.PlanOrphanFiles(ctx, icetable.WithLocation(loc), icetable.WithFilesOlderThan(age))
	if err != nil {
		return p, fmt.Errorf("archiver: plan the orphan files of %s under %s: %w", name, loc, err)
	}
	dataPrefix, metaPrefix := a.l.dataPrefix(name), a.l.metadataPrefix(name)
	for _, f := range plan.OrphanFiles() {
		key, err := a.l.keyOf(f.Path)
		if err != nil {
			return p, err
		}
		if !strings.HasPrefix(key, dataPrefix) && !strings.HasPrefix(key, metaPrefix) {
			continue
		}
		if v, ok := metadataVersion(key); h.protected[key] || ok && v > h.facts.CurrentVersion {
			p.kept++
			continue
		}
		p.keys = append(p.keys, key)
		p.bytes += f.SizeBytes
		if strings.HasPrefix(key, dataPrefix) {
			p.data = append(p.data, key)
		}
	}
	return p, nil
}

// orphansBeforeCreation counts the data files among keys written more than
// historyGrace before the table was created; 0 when its creation time is
// unknown.
func (a *Archive) orphansBeforeCreation(ctx context.Context, name string, keys []string, h *history) (int, error) {
	if h.created.IsZero() || len(keys) == 0 {
		return 0, nil
	}
	objs, err := a.list(ctx, a.l.dataPrefix(name))
	if err != nil {
		return 0, err
	}
	modified := make(map[string]time.Time, len(objs))
	for _, o := range objs {
		modified[o.key] = o.modified
	}
	n := 0
	for _, k := range keys {
		if at, ok := modified[k]; ok && at.Before(h.created.Add(-historyGrace)) {
			n++
		}
	}
	return n, nil
}

package archiver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Losing the catalog never loses history. A table's history is its
// metadata files at its location (PREFIX/<table>/metadata/), not the
// catalog's entry: the catalog only points at the newest one. When the
// entry is gone (a Glue table or database deleted, a catalog file lost), a
// writer that finds no table registers the newest metadata file at the
// location (latestMetadata) instead of creating an empty table there, so
// the next batch continues the history; only a location without metadata
// files gets a new table. Readers never register (they need no write
// access to the catalog): they fail with ErrUnregisteredTable, naming the
// remedy, `streamfold archive register` (Archive.Register).

// metadataFile is one table metadata file at a table's location.
type metadataFile struct {
	Key      string
	Version  int
	Modified time.Time
}

// metadataNameRE matches the metadata file names Iceberg writers use:
// "<version>-<uuid>.metadata.json" (iceberg-go, Java, PyIceberg through a
// catalog; optionally compressed, ".gz.metadata.json" or
// ".metadata.json.gz") and "v<version>.metadata.json" (Hadoop tables).
var metadataNameRE = regexp.MustCompile(`^(?:([0-9]{1,9})-[0-9a-fA-F-]{36}|v([0-9]{1,9}))(?:\.gz|\.zstd)?\.metadata\.json(?:\.gz|\.zstd)?$`)

// metadataVersion returns the version number in a metadata file's key, false
// for other files (manifests, manifest lists, version-hint.text, temporary
// files).
func metadataVersion(key string) (int, bool) {
	m := metadataNameRE.FindStringSubmatch(key[strings.LastIndexByte(key, '/')+1:])
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1] + m[2])
	return n, err == nil
}

// latestMetadata picks the metadata file a table's history continues from:
// the highest version number; of several files with that number (writers
// that raced for the same commit: one won, the others were never
// committed), the first written, then the smallest key, so that the choice
// is the same every time. version-hint.text (Hadoop tables) is not
// consulted: it is written after its metadata file, so the highest version
// present is never older than it. The others of the highest version are
// returned too, for the caller to report. files is not modified.
func latestMetadata(files []metadataFile) (latest metadataFile, tied []metadataFile, ok bool) {
	if len(files) == 0 {
		return metadataFile{}, nil, false
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b metadataFile) int {
		return cmp.Or(cmp.Compare(b.Version, a.Version), a.Modified.Compare(b.Modified), strings.Compare(a.Key, b.Key))
	})
	for _, f := range sorted[1:] {
		if f.Version == sorted[0].Version {
			tied = append(tied, f)
		}
	}
	return sorted[0], tied, true
}

// metadataFiles lists the metadata files at a table's location.
func (k *lake) metadataFiles(ctx context.Context, name string) ([]metadataFile, error) {
	if k.list == nil {
		return nil, nil
	}
	objs, err := k.list(ctx, k.l.metadataPrefix(name))
	if err != nil {
		return nil, fmt.Errorf("archiver: list the metadata of table %s at %s: %w", name, k.l.uri(k.l.tableDir(name)), err)
	}
	var out []metadataFile
	for _, o := range objs {
		if v, ok := metadataVersion(o.key); ok {
			out = append(out, metadataFile{Key: o.key, Version: v, Modified: o.modified})
		}
	}
	return out, nil
}

// newestMetadata lists the metadata files at a table's location and picks
// the one its history continues from (latestMetadata): n is their number
// (0: none, and latest is the zero value), tied the others of the newest
// version.
func (k *lake) newestMetadata(ctx context.Context, name string) (n int, latest metadataFile, tied []metadataFile, err error) {
	files, err := k.metadataFiles(ctx, name)
	if err != nil {
		return 0, metadataFile{}, nil, err
	}
	latest, tied, _ = latestMetadata(files)
	return len(files), latest, tied, nil
}

// registerer is a catalog that can add a table from an existing metadata
// file (Glue, REST, and the SQL catalog through ownedSQLCatalog).
type registerer interface {
	RegisterTable(ctx context.Context, ident table.Identifier, metadataLoc string) (*table.Table, error)
}

// ensureNamespace creates the namespace when it is missing; created
// reports that it was missing (and exists now: made here, or by another
// process at the same time). In AWS it is the Glue database Terraform made
// (and protects from deletion); the archiver's role may read it but not
// create one, so a deleted database is an error naming the remedy.
func (k *lake) ensureNamespace(ctx context.Context) (created bool, err error) {
	exists, err := k.cat.CheckNamespaceExists(ctx, k.namespace)
	if err != nil {
		return false, fmt.Errorf("archiver: namespace %s: %w", strings.Join(k.namespace, "."), err)
	}
	if exists {
		return false, nil
	}
	if err := k.cat.CreateNamespace(ctx, k.namespace, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return false, fmt.Errorf("archiver: create namespace %s (in AWS, the Glue database: `terraform apply` makes it again): %w", strings.Join(k.namespace, "."), err)
	}
	return true, nil
}

// Registration says what registering one table did.
type Registration struct {
	Table string `json:"table"`
	// Action: "registered" (the catalog had no table; it now points at
	// Metadata), "present" (the catalog's table is the newest metadata at
	// the location), "behind" (the catalog's table is not the newest
	// metadata at the location, or its metadata file does not exist:
	// Archive.Maintain refuses it, a batch fails with a GoneError; Register
	// with Replace points it at the newest), "replaced" (it was behind and
	// now points at the newest), "absent" (no table and no metadata: the first
	// batch creates it).
	Action string `json:"action"`
	// Location is the table's location, s3://BUCKET/PREFIX/<table>.
	Location string `json:"location"`
	// Metadata is the metadata file the catalog points at afterwards (empty
	// when absent); Version its number; Snapshots and DataFiles what its
	// current state holds.
	Metadata  string `json:"metadata,omitempty"`
	Version   int    `json:"version"`
	Snapshots int    `json:"snapshots"`
	// Previous is the metadata file the catalog pointed at before (behind,
	// replaced), which may not exist.
	Previous string `json:"previous,omitempty"`
	// MetadataFiles is the number of metadata files at the location; Tied
	// the other files of the newest version (writers that raced for one
	// commit), which were not chosen.
	MetadataFiles int      `json:"metadata_files"`
	Tied          []string `json:"tied,omitempty"`
	// NamespaceCreated: the namespace (Glue database) was missing and was
	// created.
	NamespaceCreated bool `json:"namespace_created,omitempty"`
}

// RegisterOptions tunes Register. The zero value registers missing tables
// only.
type RegisterOptions struct {
	// Replace points a table whose catalog entry is behind the newest
	// metadata at its location at the newest (the catalog's entry is
	// dropped, never the files, and registered again).
	Replace bool
	// DryRun reports without changing anything.
	DryRun bool
}

// Register re-registers one table from its location: when the catalog has
// no such table (a deleted Glue table or database, a lost catalog file),
// it registers the newest metadata file at the table's location (creating
// the namespace when missing), so every snapshot, file and event of the
// table's history is back; a table that is present is left alone unless it
// is behind the location (or the metadata file it points at does not
// exist) and opts.Replace is set. Writers do this by
// themselves before their first commit; Register is the operator's command
// (`streamfold archive register`) for readers, maintenance, and a catalog
// that must be restored before any writer runs.
func (a *Archive) Register(ctx context.Context, name string, opts RegisterOptions) (Registration, error) {
	r := Registration{Table: name, Location: a.l.uri(a.l.tableDir(name))}
	if _, ok := tableByName[name]; !ok {
		return r, fmt.Errorf("%w: %q", ErrUnknownTable, name)
	}
	k := a.lake
	n, latest, tied, err := k.newestMetadata(ctx, name)
	if err != nil {
		return r, err
	}
	r.MetadataFiles = n
	ok := n > 0
	for _, f := range tied {
		r.Tied = append(r.Tied, a.l.uri(f.Key))
	}
	t, err := k.cat.LoadTable(ctx, k.ident(name))
	gone, isGone := missingMetadata(err)
	switch {
	case err == nil:
		r.Metadata, r.Snapshots = t.MetadataLocation(), len(t.Metadata().Snapshots())
		r.Version, _ = metadataVersion(t.MetadataLocation())
		r.Action = "present"
		if !ok || r.Version >= latest.Version {
			// The newest version (of tied files, the catalog's won that
			// commit). A location holding another table's history too is
			// Maintain's to refuse.
			return r, nil
		}
		r.Action, r.Previous = "behind", t.MetadataLocation()
	case isGone:
		// The catalog points at a metadata file that does not exist (a
		// batch fails with a GoneError): whatever its version, the table's
		// history continues from the newest metadata at its location.
		r.Metadata = gone
		r.Version, _ = metadataVersion(gone)
		if !ok {
			return r, fmt.Errorf("archiver: table %s: the catalog points at the metadata %s, which does not exist, and the location %s holds no metadata file to register instead (restore the file, or drop the catalog's entry to start the table anew): %w",
				strings.Join(k.ident(name), "."), gone, r.Location, err)
		}
		r.Action, r.Previous = "behind", gone
	case missingTable(err):
		if !ok {
			r.Action = "absent"
			return r, nil
		}
		r.Action = "registered"
	default:
		return r, fmt.Errorf("archiver: load table %s: %w", strings.Join(k.ident(name), "."), err)
	}
	if r.Action == "behind" {
		if !opts.Replace || opts.DryRun {
			return r, nil
		}
		if err := k.cat.DropTable(ctx, k.ident(name)); err != nil {
			return r, fmt.Errorf("archiver: drop the catalog entry of table %s (its files stay): %w", name, err)
		}
		r.Action = "replaced"
	}
	r.Metadata, r.Version = a.l.uri(latest.Key), latest.Version
	if opts.DryRun {
		return r, nil
	}
	t, created, raced, err := k.registerOrLoad(ctx, name, latest)
	r.NamespaceCreated = created
	if raced {
		r.Action = "present"
	}
	if err != nil {
		return r, err
	}
	r.Metadata, r.Snapshots = t.MetadataLocation(), len(t.Metadata().Snapshots())
	r.Version, _ = metadataVersion(t.MetadataLocation())
	return r, nil
}

// missingMetadata returns the metadata file a catalog's LoadTable failed
// to read because it does not exist (the catalog points at a deleted
// file); false for other errors.
func missingMetadata(err error) (string, bool) {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist) {
		return pe.Path, true
	}
	return "", false
}

// register makes the catalog point at a metadata file of the table's
// location: the namespace first (created when missing), then the table.
// The metadata must describe a table at this location.
func (k *lake) register(ctx context.Context, name string, m metadataFile) (t *table.Table, namespaceCreated bool, err error) {
	reg, ok := k.cat.(registerer)
	if !ok {
		return nil, false, fmt.Errorf("archiver: table %s: the catalog (%s) cannot register the existing metadata %s", name, k.cat.CatalogType(), k.l.uri(m.Key))
	}
	created, err := k.ensureNamespace(ctx)
	if err != nil {
		return nil, false, err
	}
	loc := k.l.uri(m.Key)
	t, err = reg.RegisterTable(ctx, k.ident(name), loc)
	if err != nil {
		return nil, created, fmt.Errorf("archiver: register table %s from %s: %w", strings.Join(k.ident(name), "."), loc, err)
	}
	if got, want := strings.TrimSuffix(t.Location(), "/"), k.l.uri(k.l.tableDir(name)); got != want {
		return nil, created, fmt.Errorf("%w: the metadata %s describes a table at %s, not at %s", ErrSchemaMismatch, loc, got, want)
	}
	slog.Default().Warn("archiver: the catalog had no table; registered the newest metadata at its location (its history continues)",
		"table", strings.Join(k.ident(name), "."), "metadata", loc, "version", m.Version, "snapshots", len(t.Metadata().Snapshots()), "namespace_created", created)
	return t, created, nil
}

// registerOrLoad registers m (register); when another process registered
// the table first (catalog.ErrTableAlreadyExists), it loads that table
// instead, and raced reports that the load succeeded.
func (k *lake) registerOrLoad(ctx context.Context, name string, m metadataFile) (t *table.Table, namespaceCreated, raced bool, err error) {
	t, namespaceCreated, err = k.register(ctx, name, m)
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		t, err = k.cat.LoadTable(ctx, k.ident(name))
		return t, namespaceCreated, err == nil, err
	}
	return t, namespaceCreated, false, err
}

// restore is what a writer does when the catalog has no table: register
// the newest metadata at the table's location; nil when the location holds
// none, or only first metadata files (version 0: no history), and the
// caller creates the table. A version 0 file may be that of another
// writer's CreateTable in flight, which deletes it when its catalog insert
// fails: registering it would leave the catalog pointing at a deleted
// file (as unregistered, readers ignore such files).
func (k *lake) restore(ctx context.Context, name string) (*table.Table, error) {
	n, latest, _, err := k.newestMetadata(ctx, name)
	if err != nil || n == 0 || latest.Version == 0 {
		return nil, err
	}
	t, _, _, err := k.registerOrLoad(ctx, name, latest) // another writer may have registered it first
	return t, err
}

// unregistered returns ErrUnregisteredTable, wrapped with the table, its
// location and the newest metadata file, when the location of a table the
// catalog lacks holds metadata; nil when it holds none.
func (k *lake) unregistered(ctx context.Context, name string) error {
	n, latest, _, err := k.newestMetadata(ctx, name)
	if err != nil {
		return err
	}
	if n == 0 || latest.Version == 0 {
		// Nothing, or only first metadata files of a table being created
		// (by racing writers; its catalog entry comes next): no history.
		return nil
	}
	return fmt.Errorf("%w: table %s, location %s: %d metadata files, the newest %s (run `streamfold archive register --table %s`, or let the archiver's next batch register it)",
		ErrUnregisteredTable, strings.Join(k.ident(name), "."), k.l.uri(k.l.tableDir(name)), n, k.l.uri(latest.Key), name)
}

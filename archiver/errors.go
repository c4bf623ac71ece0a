package archiver

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrUnknownTable: a table name that Tables does not list.
	ErrUnknownTable = errors.New("archiver: unknown table")
	// ErrWrongTable: a record whose event type belongs to another table.
	ErrWrongTable = errors.New("archiver: record belongs to another table")
	// ErrCorruptObject: an object that is not an archive Parquet file (or a
	// file path that is not an object of this archive).
	ErrCorruptObject = errors.New("archiver: corrupt archive object")
	// ErrNotFound: an object that does not exist (NoSuchKey).
	ErrNotFound = errors.New("archiver: object not found")
	// ErrCommitContention: an Iceberg commit still met concurrent writers
	// after its attempts. Nothing was committed; retrying later is safe.
	ErrCommitContention = errors.New("archiver: commit contention")
	// ErrSchemaMismatch: a table in the catalog whose columns disagree with
	// the column definitions (an id or a type changed). Never fixed
	// silently: columns are only ever added, optional, at the end.
	ErrSchemaMismatch = errors.New("archiver: table schema mismatch")
	// ErrCompactionConflict: another commit removed some of this
	// compaction's inputs first (another compaction). Nothing was changed;
	// run it again.
	ErrCompactionConflict = errors.New("archiver: concurrent compaction")
	// ErrBadURI: an s3:// URI that ParseURI cannot read.
	ErrBadURI = errors.New("archiver: bad s3 URI")
	// ErrArchiveGone: the archive's bucket, or an object the catalog's
	// table metadata points at (the metadata file itself, a manifest, a
	// data file), does not exist. Permanent: no retry brings it back (see
	// GoneError).
	ErrArchiveGone = errors.New("archiver: archive gone")
	// ErrUnregisteredTable: the catalog has no table (or no namespace) but
	// the table's location holds Iceberg metadata: its history is in S3,
	// not in the catalog. A writer registers it by itself; a reader (which
	// never changes the catalog) fails with this error. Run `streamfold
	// archive register`.
	ErrUnregisteredTable = errors.New("archiver: table missing from the catalog, but its metadata is in S3")
	// ErrShortHistory: maintenance refused a table whose catalog entry is
	// not the whole history at its location (HistoryError says how).
	// Nothing was changed.
	ErrShortHistory = errors.New("archiver: table history shorter than the files at its location")
)

// ObjectError says which S3 operation on which key failed.
type ObjectError struct {
	Op  string // PutObject, GetObject, ...
	Key string
	Err error
}

func (e *ObjectError) Error() string { return fmt.Sprintf("archiver: %s %s: %v", e.Op, e.Key, e.Err) }

// Unwrap returns the cause.
func (e *ObjectError) Unwrap() error { return e.Err }

// GoneError says that a table's archive is gone: its bucket, or an object
// its catalog entry leads to (Location), does not exist. It is permanent
// (Permanent reports true): retrying cannot bring the object back, so a
// local runner stops with it and the Lambda handler reports it
// (UnavailableMetric) instead of retrying in silence. A person restores the
// bucket or object, or points the catalog at metadata that exists.
type GoneError struct {
	Table    string // the catalog's namespace.table ("" for the errors/ prefix)
	Location string // what does not exist: s3://BUCKET, or the object's s3:// URI
	Err      error
}

func (e *GoneError) Error() string {
	what := "the archive"
	if e.Table != "" {
		what = "table " + e.Table
	}
	return fmt.Sprintf("archiver: %s: %s does not exist (the catalog points at metadata or a bucket that is gone; restore it, or point the catalog at the newest metadata at the table's location: `streamfold archive register --replace`): %v",
		what, e.Location, e.Err)
}

// Unwrap returns ErrArchiveGone and the cause.
func (e *GoneError) Unwrap() []error { return []error{ErrArchiveGone, e.Err} }

// Permanent reports true: retrying does not help.
func (e *GoneError) Permanent() bool { return true }

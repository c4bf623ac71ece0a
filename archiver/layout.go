package archiver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// DateLayout is the layout of event_date partition values.
const DateLayout = "2006-01-02"

// Key prefixes under Config.Prefix.
const (
	errorsDir = "errors"
	dataDir   = "data"
	// legacySymlinkDir held the symlink manifests of the archive format
	// before Iceberg; only the migration reads it.
	legacySymlinkDir = "_symlink"
	legacyManifest   = "manifest"
)

var (
	seqRE    = regexp.MustCompile(`^[0-9]{1,40}$`)
	dateRE   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
)

// EventDate is the partition value of an event: its time's UTC date.
func EventDate(t time.Time) string { return t.UTC().Format(DateLayout) }

// checkDate validates a partition value.
func checkDate(date string) error {
	if !dateRE.MatchString(date) {
		return fmt.Errorf("archiver: date %q: must be YYYY-MM-DD", date)
	}
	if _, err := time.Parse(DateLayout, date); err != nil {
		return fmt.Errorf("archiver: date %q: not a calendar date", date)
	}
	return nil
}

// checkSeq validates a stream sequence number.
func checkSeq(seq string) error {
	if !seqRE.MatchString(seq) {
		return fmt.Errorf("archiver: sequence number %q: must be 1-40 decimal digits", seq)
	}
	return nil
}

// layout computes every key of one archive (bucket and prefix).
type layout struct {
	bucket, prefix string
}

func (l layout) join(rest string) string {
	if l.prefix == "" {
		return rest
	}
	return l.prefix + "/" + rest
}

// partition is "event_date=<date>".
func partition(date string) string { return PartitionKey + "=" + date }

// tableDir is the Iceberg table's location (metadata/ and data/ under it).
func (l layout) tableDir(table string) string { return l.join(table) }

// dataDir is the prefix of a partition's data files (with a trailing slash).
func (l layout) dataDir(table, date string) string {
	return l.join(table+"/"+dataDir+"/"+partition(date)) + "/"
}

// batchKey names the file of one batch group after its first and last
// records: the first is the group's idempotence key (a redelivery writes
// the same first record), the pair names its content.
func (l layout) batchKey(table, date, firstSeq, lastSeq string) string {
	return l.dataDir(table, date) + streamimage.PadSeq(firstSeq) + "-" + streamimage.PadSeq(lastSeq) + ".parquet"
}

// batchFirstSeq returns the padded first sequence of a batch file's key,
// false for other files (compaction and migration outputs).
func batchFirstSeq(key string) (string, bool) {
	name := key[strings.LastIndexByte(key, '/')+1:]
	first, rest, ok := strings.Cut(strings.TrimSuffix(name, ".parquet"), "-")
	if !ok || len(first) != 40 || len(rest) != 40 || !seqRE.MatchString(first) || !seqRE.MatchString(rest) {
		return "", false
	}
	return first, true
}

// compactKey names the n-th output of compaction id.
func (l layout) compactKey(table, date, id string, n int) string {
	return fmt.Sprintf("%scompact-%s-%03d.parquet", l.dataDir(table, date), id, n)
}

// dateOfKey returns the event_date of a data file's key.
func dateOfKey(key string) (string, bool) {
	dir := key[:max(0, strings.LastIndexByte(key, '/'))]
	date, ok := strings.CutPrefix(dir[strings.LastIndexByte(dir, '/')+1:], PartitionKey+"=")
	return date, ok && checkDate(date) == nil
}

// legacyManifestKey is the symlink manifest of one partition in the
// pre-Iceberg format.
func (l layout) legacyManifestKey(table, date string) string {
	return l.join(legacySymlinkDir+"/"+table+"/"+partition(date)) + "/" + legacyManifest
}

// legacyManifestDir is the prefix of a table's pre-Iceberg manifests.
func (l layout) legacyManifestDir(table string) string {
	return l.join(legacySymlinkDir+"/"+table) + "/"
}

// errorsDir is the prefix of every poison record.
func (l layout) errorsDir() string { return l.join(errorsDir) + "/" }

// errorKey names a poison record's object after its stream position.
func (l layout) errorKey(date, seq, eventID string) string {
	name := streamimage.PadSeq(seq)
	if checkSeq(seq) != nil {
		sum := sha256.Sum256([]byte(seq + "\x00" + eventID))
		name = "x" + hex.EncodeToString(sum[:12])
	}
	return l.errorsDir() + partition(date) + "/" + name + ".json"
}

// uri is the s3:// URI of a key, as Iceberg manifests and legacy symlink
// manifests list it.
func (l layout) uri(key string) string { return "s3://" + l.bucket + "/" + key }

// keyOf returns the key of a URI of this archive's bucket.
func (l layout) keyOf(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, "s3://"+l.bucket+"/")
	if !ok || rest == "" {
		return "", fmt.Errorf("%w: %q is not an object of bucket %s", ErrCorruptObject, uri, l.bucket)
	}
	return rest, nil
}

// ParseURI splits "s3://bucket/prefix" into the bucket and the key prefix
// (without leading or trailing slashes; empty for the bucket's root).
func ParseURI(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q: must start with s3://", ErrBadURI, uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if !bucketRE.MatchString(bucket) {
		return "", "", fmt.Errorf("%w: %q: bucket %q: must be 3-63 lowercase letters, digits, '.' or '-'", ErrBadURI, uri, bucket)
	}
	prefix = strings.Trim(prefix, "/")
	if strings.Contains(prefix, "//") {
		return "", "", fmt.Errorf("%w: %q: prefix must not contain empty path segments", ErrBadURI, uri)
	}
	return bucket, prefix, nil
}

// Keys of the migration from the pre-Iceberg format (migrate.go).

const (
	legacyMigratedDir = "_migrated"
	migratedPrefix    = "migrated-"
)

// migratedKey names the n-th output of the migration id of a partition.
func (l layout) migratedKey(table, date, id string, n int) string {
	return fmt.Sprintf("%s%s%s-%03d.parquet", l.dataDir(table, date), migratedPrefix, id, n)
}

// migratedID returns the migration id of a migrated file's key.
func migratedID(key string) (string, bool) {
	name := key[strings.LastIndexByte(key, '/')+1:]
	rest, ok := strings.CutPrefix(name, migratedPrefix)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, "-")
	return id, ok && id != ""
}

// migrationMarkerKey is the marker of a migrated partition.
func (l layout) migrationMarkerKey(table, date string) string {
	return l.join(legacyMigratedDir + "/" + table + "/" + partition(date))
}

// legacyDataDir is the prefix of a partition's pre-Iceberg data objects.
func (l layout) legacyDataDir(table, date string) string {
	return l.join(table+"/"+partition(date)) + "/"
}

func uris(l layout, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = l.uri(k)
	}
	return out
}

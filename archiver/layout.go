package archiver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// DateLayout is the layout of event_date partition values.
const DateLayout = "2006-01-02"

// Key prefixes under Config.Prefix.
const (
	errorsDir = "errors"
	// dataDir and metadataDir are the directories of a table's data files
	// and metadata files under its location (tableDir).
	dataDir     = "data"
	metadataDir = "metadata"
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

// dataPrefix is the prefix of a table's data files (with a trailing
// slash).
func (l layout) dataPrefix(table string) string { return l.tableDir(table) + "/" + dataDir + "/" }

// metadataPrefix is the prefix of a table's metadata files (with a
// trailing slash).
func (l layout) metadataPrefix(table string) string {
	return l.tableDir(table) + "/" + metadataDir + "/"
}

// dataDir is the prefix of a partition's data files (with a trailing slash).
func (l layout) dataDir(table, date string) string {
	return l.dataPrefix(table) + partition(date) + "/"
}

// batchKey names the file of one batch group after its first and last
// records (batchName.file): <first seq>-<last seq>-<id>.parquet, the
// sequence numbers padded to 40 digits and id the first record's identity
// (recordID: a hash of its stream eventID). The first record, (first seq,
// id), is the group's idempotence key: a redelivery, whole or bisected,
// starts the group with the same record; sequence numbers alone are unique
// only within a shard, eventIDs across the stream. The pair of sequence
// numbers names the content: within the first record's shard, the group's
// records are those of its table and day between them.
func (l layout) batchKey(table, date string, b batchName) string {
	return l.dataDir(table, date) + b.file()
}

// batchName is what a batch file's key says: its padded first and last
// sequence numbers and its first record's id ("" in a legacy name).
type batchName struct {
	first, last, id string
}

// newBatchName is the name of a batch from firstSeq to lastSeq whose first
// record is id ("": a legacy name).
func newBatchName(firstSeq, lastSeq, id string) batchName {
	return batchName{first: streamimage.PadSeq(firstSeq), last: streamimage.PadSeq(lastSeq), id: id}
}

// file is the batch file's name, the inverse of parseBatchKey:
// <first>-<last>-<id>.parquet, or <first>-<last>.parquet for a legacy name
// (batch files had it before they named their first record: such files
// stay in the tables, and WriteBatch still recognises them, see
// commitGroups).
func (b batchName) file() string {
	if b.legacy() {
		return b.first + "-" + b.last + ".parquet"
	}
	return b.first + "-" + b.last + "-" + b.id + ".parquet"
}

// legacy reports a name from before batch files named their first record.
func (b batchName) legacy() bool { return b.id == "" }

// idempotenceKey is the group a batch file (not a legacy one) is a
// delivery of: its first record.
func (b batchName) idempotenceKey() string { return b.first + "-" + b.id }

// parseBatchKey reads a batch file's key, either form; false for other
// files (compaction and migration outputs).
func parseBatchKey(key string) (batchName, bool) {
	name := strings.TrimSuffix(key[strings.LastIndexByte(key, '/')+1:], ".parquet")
	parts := strings.Split(name, "-")
	if len(parts) < 2 || len(parts) > 3 {
		return batchName{}, false
	}
	b := batchName{first: parts[0], last: parts[1]}
	if len(b.first) != 40 || len(b.last) != 40 || !seqRE.MatchString(b.first) || !seqRE.MatchString(b.last) {
		return batchName{}, false
	}
	if len(parts) == 3 {
		if !recordIDRE.MatchString(parts[2]) {
			return batchName{}, false
		}
		b.id = parts[2]
	}
	return b, true
}

// recordIDRE matches recordID's output.
var recordIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// recordID identifies a stream record across the shards of a stream: the
// first 128 bits of the SHA-256 of its eventID, which DynamoDB makes
// unique per stream record (sequence numbers are unique only within a
// shard, and Lambda's records carry no shard id). A record without an
// eventID (none comes from Lambda, streamrun or an on-failure payload) is
// identified by its event's subject and id, which the event table's
// conditional append makes unique too.
func recordID(r *Record) string {
	if r.StreamEventID == "" {
		return hash128("event\x00" + r.Event.Subject + "\x00" + r.Event.ID)
	}
	return eventIDHash(r.StreamEventID)
}

// eventIDHash is the id of the stream record with this eventID.
func eventIDHash(eventID string) string { return hash128("eventID\x00" + eventID) }

// hash128 is the first 128 bits of the SHA-256 of s, in hex.
func hash128(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// compactKey names the n-th output of compaction id.
func (l layout) compactKey(table, date, id string, n int) string {
	return fmt.Sprintf("%scompact-%s-%03d.parquet", l.dataDir(table, date), id, n)
}

// healKey names a file one run of Heal writes for a set of events of one
// table and date: heal-<set>-<run>.parquet, set the first 128 bits of the
// SHA-256 of the events' keys (eventKey), sorted, each followed by a
// newline, and run the run's id. Names are unique to a run, so that a run
// can delete the files it did not commit without touching another's.
func (l layout) healKey(table, date string, eventKeys []string, run string) string {
	sorted := slices.Sorted(slices.Values(eventKeys))
	return l.dataDir(table, date) + healPrefix + hash128(strings.Join(sorted, "\n")+"\n") + "-" + run + ".parquet"
}

// healPrefix starts the names of Heal's files.
const healPrefix = "heal-"

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

// errorKey names a poison record's object after its stream position:
// <seq, 40 digits>-<id>.json, id the first 128 bits of the SHA-256 of its
// eventID (sequence numbers are unique only within a shard), or
// x<hash>.json for a record without a valid sequence number.
func (l layout) errorKey(date, seq, eventID string) string {
	if checkSeq(seq) != nil {
		sum := sha256.Sum256([]byte(seq + "\x00" + eventID))
		return l.errorsDir() + partition(date) + "/x" + hex.EncodeToString(sum[:12]) + ".json"
	}
	return l.errorsDir() + partition(date) + "/" + streamimage.PadSeq(seq) + "-" + eventIDHash(eventID) + ".json"
}

// legacyErrorKey is the name poison records had before it named their
// eventID (<seq, 40 digits>.json); putError still recognises them.
func (l layout) legacyErrorKey(date, seq string) string {
	return l.errorsDir() + partition(date) + "/" + streamimage.PadSeq(seq) + ".json"
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

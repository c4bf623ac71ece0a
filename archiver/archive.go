package archiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// Defaults of Config.
const (
	DefaultTargetObjectBytes = 128 << 20
	DefaultConcurrency       = 8
	DefaultNamespace         = "streamfold"
)

// Config configures an Archive. The zero values of the optional fields mean
// their defaults.
type Config struct {
	// Bucket is the S3 bucket. Required.
	Bucket string
	// Prefix is the key prefix of the archive, without leading or trailing
	// slash; empty means the bucket's root.
	Prefix string
	// Catalog is the Iceberg catalog holding the tables: "sqlite:PATH"
	// (local stacks, tests) or "glue" / "glue:ACCOUNT_ID" (AWS). Required.
	Catalog string
	// Namespace is the catalog namespace of the tables (the Glue database in
	// AWS); default "streamfold".
	Namespace string
	// RowGroupRows, RowGroupBytes and Compression tune the Parquet files
	// (see EncodeOptions).
	RowGroupRows  int
	RowGroupBytes int64
	Compression   string
	// CompactCompression is the Compression of compaction outputs, which
	// are written once and read often (default zstd-better).
	CompactCompression string
	// TargetObjectBytes is the size compaction merges small objects up to
	// (default 128 MiB).
	TargetObjectBytes int64
	// Concurrency bounds the S3 requests one call has in flight (default 8).
	Concurrency int
	// ExpectedBucketOwner, when set, is the 12-digit AWS account id every
	// S3 request names as the bucket's owner (x-amz-expected-bucket-owner):
	// if the bucket was deleted and its name taken by another account, S3
	// refuses the request instead of reading or writing that account's
	// bucket. Empty (local stacks) sends none.
	ExpectedBucketOwner string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Bucket == "":
		return errors.New("archiver: Config.Bucket: is required")
	case c.ExpectedBucketOwner != "" && !isAccountID(c.ExpectedBucketOwner):
		return fmt.Errorf("archiver: Config.ExpectedBucketOwner: must be a 12-digit AWS account id, got %q", c.ExpectedBucketOwner)
	case !bucketRE.MatchString(c.Bucket):
		return fmt.Errorf("archiver: Config.Bucket: must be 3-63 lowercase letters, digits, '.' or '-', got %q", c.Bucket)
	case strings.HasPrefix(c.Prefix, "/") || strings.HasSuffix(c.Prefix, "/"):
		return fmt.Errorf("archiver: Config.Prefix: must not start or end with '/', got %q", c.Prefix)
	case strings.Contains(c.Prefix, "//"):
		return fmt.Errorf("archiver: Config.Prefix: must not contain empty path segments, got %q", c.Prefix)
	case c.TargetObjectBytes < 0:
		return fmt.Errorf("archiver: Config.TargetObjectBytes: must not be negative, got %d", c.TargetObjectBytes)
	case c.Concurrency < 0:
		return fmt.Errorf("archiver: Config.Concurrency: must not be negative, got %d", c.Concurrency)
	case strings.ContainsAny(c.Namespace, "./ "):
		return fmt.Errorf("archiver: Config.Namespace: one name without '.', '/' or spaces, got %q", c.Namespace)
	}
	if err := checkCatalogURI(c.Catalog); err != nil {
		return err
	}
	if err := c.encodeOptions().Validate(); err != nil {
		return err
	}
	if err := (EncodeOptions{Compression: c.CompactCompression}).Validate(); err != nil {
		return fmt.Errorf("archiver: Config.CompactCompression: %w", err)
	}
	return nil
}

func (c Config) encodeOptions() EncodeOptions {
	return EncodeOptions{RowGroupRows: c.RowGroupRows, RowGroupBytes: c.RowGroupBytes, Compression: c.Compression}
}

func (c *Config) setDefaults() {
	if c.TargetObjectBytes == 0 {
		c.TargetObjectBytes = DefaultTargetObjectBytes
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.CompactCompression == "" {
		c.CompactCompression = "zstd-better"
	}
}

// Archive is the Parquet archive in one bucket and prefix. It is safe for
// concurrent use, also by several processes at once (see the package doc
// for what concurrent writers and compactions may do).
type Archive struct {
	api      S3API
	cfg      Config
	l        layout
	lake     *lake
	clientID string // its S3 client's registration for the catalog's "s3" scheme
}

// New returns the archive of cfg on api.
func New(api S3API, cfg Config) (*Archive, error) {
	if api == nil {
		return nil, errors.New("archiver: New: S3 client is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	l := layout{bucket: cfg.Bucket, prefix: cfg.Prefix}
	clientID := registerS3(api, cfg.ExpectedBucketOwner)
	cat, err := openCatalog(context.Background(), cfg.Catalog, clientID)
	if err != nil {
		s3Clients.Delete(clientID)
		return nil, err
	}
	return &Archive{api: api, cfg: cfg, l: l, clientID: clientID, lake: &lake{cat: cat, namespace: []string{cfg.Namespace}, l: l, ensured: map[string]bool{}}}, nil
}

// Close releases the catalog (the SQLite file of a sqlite: catalog) and
// the archive's registration of its S3 client. The archive is unusable
// afterwards.
func (a *Archive) Close() error {
	defer s3Clients.Delete(a.clientID)
	if c, ok := a.lake.cat.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Catalog returns the catalog and namespace the tables are in.
func (a *Archive) Catalog() (uri, namespace string) { return a.cfg.Catalog, a.cfg.Namespace }

// URI returns the archive's location, s3://bucket[/prefix].
func (a *Archive) URI() string {
	if a.cfg.Prefix == "" {
		return "s3://" + a.cfg.Bucket
	}
	return "s3://" + a.cfg.Bucket + "/" + a.cfg.Prefix
}

// WriteStats says what WriteBatch wrote.
type WriteStats struct {
	Records int   // records of the batch now in the archive (Skipped included)
	Objects int   // data files this call committed (one per table and event date)
	Bytes   int64 // bytes of those files
	Skipped int   // records of groups an earlier delivery committed already
}

// group is the records of one batch that go to one partition.
type group struct {
	table, date string
	recs        []Record
}

// planBatch groups records by (table, event date) and names each group's
// object after the lowest sequence number in it. Groups come out sorted by
// table and date.
func planBatch(recs []Record) ([]*group, error) {
	byKey := map[string]*group{}
	var groups []*group
	for i := range recs {
		r := &recs[i]
		if err := checkSeq(r.Seq); err != nil {
			return nil, fmt.Errorf("archiver: event %s/%s: %w", r.Event.Subject, r.Event.ID, err)
		}
		table, ok := TableFor(r.Event.Type)
		if !ok {
			return nil, fmt.Errorf("%w: event %s/%s: type %q has no table", ErrUnknownTable, r.Event.Subject, r.Event.ID, r.Event.Type)
		}
		if err := checkTime("time", r.Event.Time); err != nil {
			return nil, fmt.Errorf("archiver: event %s/%s: %w", r.Event.Subject, r.Event.ID, err)
		}
		date := EventDate(r.Event.Time)
		k := table + "/" + date
		g := byKey[k]
		if g == nil {
			g = &group{table: table, date: date}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.recs = append(g.recs, *r)
	}
	slices.SortFunc(groups, func(a, b *group) int {
		return strings.Compare(a.table+"/"+a.date, b.table+"/"+b.date)
	})
	return groups, nil
}

func (g *group) lastSeq() string {
	last := g.recs[0].Seq
	for _, r := range g.recs[1:] {
		if streamimage.CompareSeq(r.Seq, last) > 0 {
			last = r.Seq
		}
	}
	return last
}

func (g *group) firstSeq() string {
	first := g.recs[0].Seq
	for _, r := range g.recs[1:] {
		if streamimage.CompareSeq(r.Seq, first) < 0 {
			first = r.Seq
		}
	}
	return first
}

// WriteBatch archives the records of one stream batch. Its records are
// grouped by table and event date; each group becomes one Parquet file,
// named after the group's first and last stream sequence numbers, and each
// table's files are committed in one Iceberg transaction (one snapshot per
// table and batch). Records must carry their stream sequence number (1-40
// digits) and a known event type.
//
// Idempotence (see the package doc for the argument): a group's first
// sequence number is its key. When the table already holds a batch file
// with the same key and the same last record, the group is committed
// already and is skipped (a redelivery); a batch file with the same key
// and other content (an earlier, failed delivery of a different size) is
// replaced by this one in the same commit.
//
// An error means some tables may be committed and others not; retrying the
// same batch (or one starting at the same record) is the remedy, and
// leaves each record archived once.
func (a *Archive) WriteBatch(ctx context.Context, recs []Record) (WriteStats, error) {
	var st WriteStats
	groups, err := planBatch(recs)
	if err != nil || len(groups) == 0 {
		return st, err
	}
	byTable := map[string][]*group{}
	var tables []string
	for _, g := range groups {
		if byTable[g.table] == nil {
			tables = append(tables, g.table)
		}
		byTable[g.table] = append(byTable[g.table], g)
	}
	stats := make([]WriteStats, len(tables))
	err = forEach(ctx, len(tables), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		var err error
		stats[i], err = a.commitGroups(ctx, tables[i], byTable[tables[i]])
		return err
	})
	for _, s := range stats {
		st.Records += s.Records
		st.Objects += s.Objects
		st.Bytes += s.Bytes
		st.Skipped += s.Skipped
	}
	return st, err
}

// commitGroups writes and commits one table's groups of a batch.
func (a *Archive) commitGroups(ctx context.Context, table string, groups []*group) (WriteStats, error) {
	var st WriteStats
	if _, err := a.lake.ensureOnce(ctx, table); err != nil {
		return st, err
	}
	keys := make([]string, len(groups))
	dates := make([]string, 0, len(groups))
	for i, g := range groups {
		keys[i] = a.l.batchKey(table, g.date, g.firstSeq(), g.lastSeq())
		dates = append(dates, g.date)
	}
	written := make([]bool, len(groups))
	sizes := make([]int64, len(groups))
	err := a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		files, err := a.lake.dataFiles(ctx, t, dates)
		if err != nil {
			return false, err
		}
		byFirst := map[string][]string{}
		for key := range files {
			if first, ok := batchFirstSeq(key); ok {
				byFirst[first] = append(byFirst[first], key)
			}
		}
		var todo []int
		var replace []string
		st = WriteStats{}
		for i, g := range groups {
			st.Records += len(g.recs)
			if _, ok := files[keys[i]]; ok {
				st.Skipped += len(g.recs) // committed by an earlier delivery
				continue
			}
			todo = append(todo, i)
			replace = append(replace, byFirst[streamimage.PadSeq(g.firstSeq())]...)
		}
		if len(todo) == 0 {
			return true, nil
		}
		err = forEach(ctx, len(todo), a.cfg.Concurrency, func(ctx context.Context, j int) error {
			i := todo[j]
			if written[i] {
				return nil
			}
			var buf bytes.Buffer
			if err := Encode(&buf, table, groups[i].recs, a.cfg.encodeOptions()); err != nil {
				return err
			}
			if _, err := a.put(ctx, keys[i], buf.Bytes(), "application/vnd.apache.parquet", putCond{}); err != nil {
				return err
			}
			written[i], sizes[i] = true, int64(buf.Len())
			return nil
		})
		if err != nil {
			return false, err
		}
		add := make([]string, len(todo))
		for j, i := range todo {
			add[j] = a.l.uri(keys[i])
			st.Objects++
			st.Bytes += sizes[i]
		}
		del := make([]string, len(replace))
		for j, k := range replace {
			del[j] = a.l.uri(k)
		}
		props := iceberg.Properties{"streamfold.operation": "batch", "streamfold.records": strconv.Itoa(st.Records - st.Skipped)}
		tx := t.NewTransaction()
		if len(del) == 0 {
			// The duplicate check scans every manifest; ours above read
			// only these dates' partitions.
			err = tx.AddFiles(ctx, add, props, true)
		} else {
			props["streamfold.replaced"] = strconv.Itoa(len(del))
			err = tx.ReplaceDataFiles(ctx, del, add, props)
		}
		if err == nil {
			_, err = tx.Commit(ctx)
		}
		return false, err
	}, table)
	if err != nil {
		return WriteStats{}, err
	}
	return st, nil
}

// Partitions returns the event dates of a table that hold data, in
// ascending order.
func (a *Archive) Partitions(ctx context.Context, table string) ([]string, error) {
	files, err := a.files(ctx, table, nil)
	if err != nil {
		return nil, err
	}
	return datesOf(files), nil
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

// ErrorRecord is a poison stream record kept under errors/: a record that
// could never be archived (an undecodable image, an invalid event).
type ErrorRecord struct {
	Key            string          `json:"-"`
	SequenceNumber string          `json:"sequence_number"`
	EventID        string          `json:"event_id"` // the stream record's eventID
	EventName      string          `json:"event_name"`
	StreamARN      string          `json:"stream_arn,omitempty"`
	Reason         string          `json:"reason"`
	SeenAt         time.Time       `json:"seen_at"`
	Record         json.RawMessage `json:"record"` // the aws-lambda-go record as JSON
}

// putError stores a poison record; storing the same one again overwrites it.
func (a *Archive) putError(ctx context.Context, e ErrorRecord) error {
	body, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return wrapf(err, "encode error record %s", e.SequenceNumber)
	}
	_, err = a.put(ctx, a.l.errorKey(EventDate(e.SeenAt), e.SequenceNumber, e.EventID), body, "application/json", putCond{})
	return err
}

// Errors returns every poison record, oldest date first.
func (a *Archive) Errors(ctx context.Context) ([]ErrorRecord, error) {
	objs, err := a.list(ctx, a.l.errorsDir())
	if err != nil {
		return nil, err
	}
	out := make([]ErrorRecord, len(objs))
	err = forEach(ctx, len(objs), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		obj, err := a.get(ctx, objs[i].key)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(obj.body, &out[i]); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorruptObject, objs[i].key, err)
		}
		out[i].Key = objs[i].key
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// isAccountID reports whether s is 12 decimal digits.
func isAccountID(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

package archiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// Defaults of Config.
const (
	DefaultTargetObjectBytes = 128 << 20
	DefaultConcurrency       = 8
	DefaultManifestRetries   = 20
)

// Config configures an Archive. The zero values of the optional fields mean
// their defaults.
type Config struct {
	// Bucket is the S3 bucket. Required.
	Bucket string
	// Prefix is the key prefix of the archive, without leading or trailing
	// slash; empty means the bucket's root.
	Prefix string
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
	// ManifestRetries bounds the attempts of one manifest update under
	// contention (default 20).
	ManifestRetries int
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
	case c.ManifestRetries < 0:
		return fmt.Errorf("archiver: Config.ManifestRetries: must not be negative, got %d", c.ManifestRetries)
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
	if c.ManifestRetries == 0 {
		c.ManifestRetries = DefaultManifestRetries
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
	api S3API
	cfg Config
	l   layout
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
	return &Archive{api: api, cfg: cfg, l: layout{bucket: cfg.Bucket, prefix: cfg.Prefix}}, nil
}

// URI returns the archive's location, s3://bucket[/prefix].
func (a *Archive) URI() string {
	if a.cfg.Prefix == "" {
		return "s3://" + a.cfg.Bucket
	}
	return "s3://" + a.cfg.Bucket + "/" + a.cfg.Prefix
}

// WriteStats says what WriteBatch wrote.
type WriteStats struct {
	Records int   // records archived
	Objects int   // data objects written (one per table and event date)
	Bytes   int64 // bytes of those objects
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

func (g *group) firstSeq() string {
	first := g.recs[0].Seq
	for _, r := range g.recs[1:] {
		if streamimage.CompareSeq(r.Seq, first) < 0 {
			first = r.Seq
		}
	}
	return first
}

// WriteBatch archives the records of one stream batch, in two phases: first
// every data object (one per table and event date, named after the lowest
// sequence number of its records: a retried batch, or a retried half of a
// bisected one, writes the same keys again), then every manifest that must
// list them. Records must carry their stream sequence number (1-40 digits)
// and a known event type.
//
// An error means some objects or manifest entries may be written and others
// not; retrying the same batch (or one starting at the same record) is the
// remedy, and leaves each record archived once.
func (a *Archive) WriteBatch(ctx context.Context, recs []Record) (WriteStats, error) {
	var st WriteStats
	groups, err := planBatch(recs)
	if err != nil || len(groups) == 0 {
		return st, err
	}
	keys := make([]string, len(groups))
	sizes := make([]int64, len(groups))
	err = forEach(ctx, len(groups), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		g := groups[i]
		var buf bytes.Buffer
		if err := Encode(&buf, g.table, g.recs, a.cfg.encodeOptions()); err != nil {
			return err
		}
		keys[i] = a.l.batchKey(g.table, g.date, g.firstSeq())
		sizes[i] = int64(buf.Len())
		_, err := a.put(ctx, keys[i], buf.Bytes(), "application/vnd.apache.parquet", putCond{})
		return err
	})
	if err != nil {
		return st, err
	}
	err = forEach(ctx, len(groups), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		return a.list1(ctx, groups[i].table, groups[i].date, a.l.uri(keys[i]))
	})
	if err != nil {
		return st, err
	}
	st.Records, st.Objects = len(recs), len(groups)
	for _, s := range sizes {
		st.Bytes += s
	}
	return st, nil
}

// list1 makes an object visible: it adds its URI to its partition's
// manifest (a no-op when listed already).
func (a *Archive) list1(ctx context.Context, table, date, uri string) error {
	return a.updateManifest(ctx, table, date, func(cur manifest) ([]string, bool, error) {
		next, changed := addURIs(cur.uris, []string{uri})
		return next, changed, nil
	})
}

// Partitions returns the event dates of a table that have a manifest, in
// ascending order.
func (a *Archive) Partitions(ctx context.Context, table string) ([]string, error) {
	if _, ok := tableByName[table]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	dir := a.l.manifestDir(table)
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

// Objects returns the keys of the data objects of one partition, as its
// manifest lists them (sorted). They are exactly what a reader must read:
// every archived event of the partition is in one of them, once. An absent
// manifest means an empty partition.
func (a *Archive) Objects(ctx context.Context, table, date string) ([]string, error) {
	if _, ok := tableByName[table]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	if err := checkDate(date); err != nil {
		return nil, err
	}
	m, err := a.readManifest(ctx, table, date)
	if err != nil {
		return nil, err
	}
	return a.keysOf(m.uris)
}

func (a *Archive) keysOf(uris []string) ([]string, error) {
	keys := make([]string, 0, len(uris))
	for _, u := range uris {
		k, err := a.l.keyOf(u)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
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
// Tables), date by date, object by object as the manifests list them. It
// reads manifests, never a listing of data objects, so a record is seen once
// even while batches are retried or partitions compacted. It stops at the
// first error fn returns and returns it.
func (a *Archive) Scan(ctx context.Context, fn func(Record) error) error {
	for _, t := range tableDefs {
		dates, err := a.Partitions(ctx, t.name)
		if err != nil {
			return err
		}
		for _, d := range dates {
			keys, err := a.Objects(ctx, t.name, d)
			if err != nil {
				return err
			}
			if err := a.scanObjects(ctx, keys, fn); err != nil {
				return err
			}
		}
	}
	return nil
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

// Orphans returns the data objects of a partition that its manifest does
// not list: objects of a batch that failed between writing them and
// listing them (its retry lists them), outputs of a compaction that
// crashed before its swap, inputs of one that crashed before deleting them.
// Readers never see them. Deleting those older than the stream's retention
// (24 hours) is always safe; listing them is not (their records may be
// listed elsewhere).
func (a *Archive) Orphans(ctx context.Context, table, date string) ([]string, error) {
	m, err := a.readManifest(ctx, table, date)
	if err != nil {
		return nil, err
	}
	objs, err := a.list(ctx, a.l.dataDir(table, date))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		if !m.has(a.l.uri(o.key)) {
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

package archiver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
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
	// Concurrency bounds the S3 requests one call has in flight per table
	// (default 8); a batch writes its tables at once.
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
	c.TargetObjectBytes = cmp.Or(c.TargetObjectBytes, DefaultTargetObjectBytes)
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.Namespace = cmp.Or(c.Namespace, DefaultNamespace)
	if c.Now == nil {
		c.Now = time.Now
	}
	c.CompactCompression = cmp.Or(c.CompactCompression, "zstd-better")
}

// Archive is the Parquet archive in one bucket and prefix. It is safe for
// concurrent use, also by several processes at once (see the package doc
// for what concurrent writers and compactions may do).
type Archive struct {
	api      S3API           // requests, counting
	requests *requestCounter // Requests
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
	counted := &requestCounter{S3API: api}
	api = counted
	l := layout{bucket: cfg.Bucket, prefix: cfg.Prefix}
	clientID := registerS3(api, cfg.ExpectedBucketOwner)
	cat, err := openCatalog(context.Background(), cfg.Catalog, clientID)
	if err != nil {
		s3Clients.Delete(clientID)
		return nil, err
	}
	a := &Archive{api: api, requests: counted, cfg: cfg, l: l, clientID: clientID, lake: &lake{cat: cat, namespace: []string{cfg.Namespace}, l: l, ensured: map[string]bool{}}}
	a.lake.list, a.lake.now = a.list, cfg.Now
	return a, nil
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

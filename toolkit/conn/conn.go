// Package conn provides the connection settings every operator workflow
// shares: the tables' naming, the AWS clients (DynamoDB Local and MinIO, or
// AWS itself), the archive's Iceberg catalog and namespace, and the write
// sharding of the deployment.
//
// A Settings value is plain data: a program fills it (the streamfold CLI from
// its flags and STREAMFOLD_* environment variables) and calls Validate. Its
// methods are safe for concurrent use; Clients checks credentials once per
// call.
package conn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/s3fs"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
)

// Settings are the connection settings of one deployment (or local stack).
type Settings struct {
	// DynamoDBEndpoint and S3Endpoint are local endpoints
	// (http://127.0.0.1:8766); empty means AWS.
	DynamoDBEndpoint, S3Endpoint string
	// Region is the AWS region; empty takes the SDK's configuration.
	Region string
	// S3AccessKey and S3SecretKey are the local S3's credentials.
	S3AccessKey, S3SecretKey string
	// Prefix and Stage name the tables: PREFIX-STAGE-NAME.
	Prefix, Stage string
	// Catalog is the archive's Iceberg catalog (sqlite:PATH or
	// glue[:ACCOUNT]); empty takes CatalogURI's default.
	Catalog string
	// Namespace is the catalog namespace of the archive's tables; empty
	// takes ArchiveNamespace's default.
	Namespace string
	// StateDir is the local stack's state directory (its SQLite catalog);
	// empty is DefaultStateDir.
	StateDir string
	// ArchiveDir, when set, is a local filesystem warehouse: the archive's
	// buckets are directories under it and S3 is not used for the archive.
	ArchiveDir string
	// GSIShards is the deployment's write sharding (Terraform's
	// gsi_shards) as STREAMFOLD_GSI_SHARDS spells it; empty is off.
	GSIShards string
}

// DefaultStateDir is the local stack's default state directory, where
// "streamfold dev up" keeps its data when none is given (devstack.Config's
// default; conn does not import devstack, to stay light for callers that
// never start a local stack).
var DefaultStateDir = filepath.Join(".tools", "run")

// ErrNoAWS is wrapped by the error of Clients when it would reach AWS (no
// DynamoDB endpoint) without a region or credentials.
var ErrNoAWS = errors.New("not configured for AWS")

// credentialsTimeout bounds the credentials check before reaching AWS.
const credentialsTimeout = 3 * time.Second

// LocalStackHint ends the errors that say AWS is not configured.
const LocalStackHint = `; to use the local stack instead, run "streamfold dev up" and export the line it prints (STREAMFOLD_DYNAMODB_ENDPOINT=http://127.0.0.1:8766 STREAMFOLD_S3_ENDPOINT=http://127.0.0.1:9766 ...), or pass --dynamodb-endpoint and --s3-endpoint`

// Validate checks the naming and the sharding.
func (s Settings) Validate() error {
	if _, err := s.Naming(); err != nil {
		return err
	}
	_, err := s.Shards()
	return err
}

// Naming is the tables' naming.
func (s Settings) Naming() (schema.Naming, error) {
	n := schema.Naming{Prefix: s.Prefix, Stage: s.Stage}
	return n, n.Validate()
}

// Shards is the deployment's write sharding (0: off).
func (s Settings) Shards() (int, error) { return schema.ParseGSIShards(s.GSIShards) }

// Local reports whether the settings point at a local DynamoDB.
func (s Settings) Local() bool { return s.DynamoDBEndpoint != "" }

// Clients opens the AWS clients. Without a DynamoDB endpoint it first checks
// that a region and credentials are configured, so a missing configuration
// is one clear error (wrapping ErrNoAWS) instead of the SDK's retries
// against the instance metadata service.
func (s Settings) Clients(ctx context.Context) (*awsclient.Clients, error) {
	c, err := awsclient.New(ctx, awsclient.Config{
		Region:           s.Region,
		DynamoDBEndpoint: s.DynamoDBEndpoint,
		S3Endpoint:       s.S3Endpoint,
		S3AccessKey:      s.S3AccessKey,
		S3SecretKey:      s.S3SecretKey,
	})
	if err != nil || s.DynamoDBEndpoint != "" {
		return c, err
	}
	if c.AWS.Region == "" {
		return nil, fmt.Errorf("%w: no AWS region (--region or AWS_REGION)%s", ErrNoAWS, LocalStackHint)
	}
	cctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := c.AWS.Credentials.Retrieve(cctx); err != nil {
		return nil, fmt.Errorf("%w: no AWS credentials found (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO or an instance role)%s", ErrNoAWS, LocalStackHint)
	}
	return c, nil
}

// DefaultArchive is the archive of a naming: its bucket, prefix "archive"
// (where the local stack and Terraform put it).
func DefaultArchive(n schema.Naming) string { return "s3://" + n.BucketName() + "/archive" }

// DefaultNamespace is the Glue database Terraform creates for a naming
// (PREFIX_STAGE_archive with '-' as '_'), also the local default.
func DefaultNamespace(n schema.Naming) string {
	return strings.ReplaceAll(n.Prefix+"_"+n.Stage+"_archive", "-", "_")
}

// ArchiveNamespace is the default namespace of the archive in bucket: the
// namespace follows the archive, not the tables a command works on (verify
// --prefix B --from-archive s3://A-dev-archive/...). A bucket named as
// Terraform and dev up name it, PREFIX-STAGE-archive, gives
// PREFIX_STAGE_archive, the Glue database Terraform creates beside it;
// another bucket name gives n's default.
func ArchiveNamespace(bucket string, n schema.Naming) string {
	if strings.HasSuffix(bucket, "-archive") && !strings.Contains(bucket, ".") {
		return strings.ReplaceAll(bucket, "-", "_")
	}
	return DefaultNamespace(n)
}

// CatalogURI is Catalog, or its default: the warehouse's own SQLite
// catalog (ARCHIVE_DIR/catalog.db) with ArchiveDir, the local stack's
// (STATE_DIR/catalog.db) when S3 is local, the Glue Data Catalog otherwise.
func (s Settings) CatalogURI() (string, error) {
	if s.Catalog != "" {
		return s.Catalog, nil
	}
	if s.ArchiveDir != "" {
		abs, err := filepath.Abs(filepath.Join(s.ArchiveDir, "catalog.db"))
		return "sqlite:" + abs, err
	}
	if s.S3Endpoint == "" {
		return "glue", nil
	}
	return LocalCatalogURI(cmp.Or(s.StateDir, DefaultStateDir))
}

// LocalCatalogURI is the local stack's Iceberg catalog: SQLite in its state
// directory, beside MinIO's data.
func LocalCatalogURI(stateDir string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(stateDir, "catalog.db"))
	return "sqlite:" + abs, err
}

// OpenArchive opens the archive at uri (s3://bucket/prefix), or n's default
// archive when uri is empty, with the settings' catalog and namespace, on
// S3 (c.S3) or, with ArchiveDir, on the local filesystem warehouse. The
// caller closes it.
func (s Settings) OpenArchive(c *awsclient.Clients, n schema.Naming, uri string) (*archiver.Archive, error) {
	uri = cmp.Or(uri, DefaultArchive(n))
	bucket, prefix, err := archiver.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	cat, err := s.CatalogURI()
	if err != nil {
		return nil, err
	}
	ns := cmp.Or(s.Namespace, ArchiveNamespace(bucket, n))
	var api archiver.S3API
	if s.ArchiveDir != "" {
		if api, err = s3fs.New(s.ArchiveDir); err != nil {
			return nil, err
		}
	} else {
		api = c.S3
	}
	return archiver.New(api, archiver.Config{Bucket: bucket, Prefix: prefix, Catalog: cat, Namespace: ns})
}

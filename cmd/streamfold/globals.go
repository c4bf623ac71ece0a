package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/s3fs"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/devstack"
	"github.com/streamfold/streamfold/schema"
)

// globals are the connection settings every AWS-touching command shares.
type globals struct {
	ddbEndpoint, s3Endpoint, region string
	s3Key, s3Secret                 string
	prefix, stage                   string
	catalog, namespace              string
	stateDir                        string
	// archiveDir is STREAMFOLD_ARCHIVE_DIR (--archive-dir): when set, the
	// archive's buckets are directories under it (archiver/s3fs, what
	// "dev up --archive fs" and make demo use) and S3 is not used for the
	// archive.
	archiveDir string
	// gsiShardsEnv is STREAMFOLD_GSI_SHARDS: the deployment's write
	// sharding (terraform gsi_shards), which every command that writes
	// projection items or reads the indexes follows (gsiShards).
	gsiShardsEnv string
}

func envOr(env *cliEnv, key, def string) string {
	if v := env.getenv(key); v != "" {
		return v
	}
	return def
}

func (g *globals) register(fs *flag.FlagSet, env *cliEnv) {
	fs.StringVar(&g.ddbEndpoint, "dynamodb-endpoint", env.getenv("STREAMFOLD_DYNAMODB_ENDPOINT"), "DynamoDB endpoint URL, e.g. http://127.0.0.1:8766 (env STREAMFOLD_DYNAMODB_ENDPOINT; empty = AWS)")
	fs.StringVar(&g.s3Endpoint, "s3-endpoint", env.getenv("STREAMFOLD_S3_ENDPOINT"), "S3 endpoint URL, e.g. http://127.0.0.1:9766 (env STREAMFOLD_S3_ENDPOINT; empty = AWS)")
	fs.StringVar(&g.region, "region", env.getenv("AWS_REGION"), "AWS region (env AWS_REGION)")
	fs.StringVar(&g.prefix, "prefix", envOr(env, "STREAMFOLD_PREFIX", "streamfold"), "table name prefix: tables are PREFIX-STAGE-NAME (env STREAMFOLD_PREFIX)")
	fs.StringVar(&g.stage, "stage", envOr(env, "STREAMFOLD_STAGE", "dev"), "stage: dev, stage or prod (env STREAMFOLD_STAGE)")
	fs.StringVar(&g.catalog, "catalog", env.getenv("STREAMFOLD_CATALOG"), "the archive's Iceberg catalog: sqlite:PATH (local) or glue[:ACCOUNT_ID] (AWS) (env STREAMFOLD_CATALOG; default: with --archive-dir sqlite:ARCHIVE_DIR/catalog.db, with --s3-endpoint sqlite:STATE_DIR/catalog.db, as dev up prints, else glue)")
	fs.StringVar(&g.archiveDir, "archive-dir", env.getenv("STREAMFOLD_ARCHIVE_DIR"), "a local filesystem warehouse for the archive: its buckets are directories under this one, and S3 is not used for the archive (env STREAMFOLD_ARCHIVE_DIR; dev up --archive fs prints it)")
	fs.StringVar(&g.namespace, "namespace", env.getenv("STREAMFOLD_NAMESPACE"), "the catalog namespace (Glue database) of the archive's tables (env STREAMFOLD_NAMESPACE; default: the archive bucket's name with '-' as '_' when it is named PREFIX-STAGE-archive, else PREFIX_STAGE_archive, as Terraform names the Glue database)")
	g.stateDir = env.getenv("STREAMFOLD_STATE_DIR")
	g.gsiShardsEnv = env.getenv("STREAMFOLD_GSI_SHARDS")
	g.s3Key = envOr(env, "STREAMFOLD_S3_ACCESS_KEY", "streamfold")
	g.s3Secret = envOr(env, "STREAMFOLD_S3_SECRET_KEY", "streamfold-secret")
}

// gsiShards is the deployment's write sharding (STREAMFOLD_GSI_SHARDS;
// unset: off).
func (g *globals) gsiShards() (int, error) { return schema.ParseGSIShards(g.gsiShardsEnv) }

func (g *globals) naming() (schema.Naming, error) {
	n := schema.Naming{Prefix: g.prefix, Stage: g.stage}
	return n, n.Validate()
}

func (g *globals) clients(ctx context.Context) (*awsclient.Clients, error) {
	c, err := awsclient.New(ctx, awsclient.Config{
		Region:           g.region,
		DynamoDBEndpoint: g.ddbEndpoint,
		S3Endpoint:       g.s3Endpoint,
		S3AccessKey:      g.s3Key,
		S3SecretKey:      g.s3Secret,
	})
	if err != nil || g.ddbEndpoint != "" {
		return c, err
	}
	// AWS: without credentials the SDK would try the instance metadata
	// service, retrying for several seconds per call, and end in an error
	// about it; say at once what is missing and where the local stack is.
	if c.AWS.Region == "" {
		return nil, fmt.Errorf("%w: no AWS region (--region or AWS_REGION)%s", ErrNoAWS, localStackHint)
	}
	cctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := c.AWS.Credentials.Retrieve(cctx); err != nil {
		return nil, fmt.Errorf("%w: no AWS credentials found (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO or an instance role)%s", ErrNoAWS, localStackHint)
	}
	return c, nil
}

// ErrNoAWS is wrapped by the error of a command that would reach AWS (no
// --dynamodb-endpoint) without a region or credentials.
var ErrNoAWS = errors.New("not configured for AWS")

// credentialsTimeout bounds the credentials check before an AWS command.
const credentialsTimeout = 3 * time.Second

// localStackHint ends the errors that say AWS is not configured.
const localStackHint = `; to use the local stack instead, run "streamfold dev up" and export the line it prints (STREAMFOLD_DYNAMODB_ENDPOINT=http://127.0.0.1:8766 STREAMFOLD_S3_ENDPOINT=http://127.0.0.1:9766 ...), or pass --dynamodb-endpoint and --s3-endpoint`

// defaultArchive is the archive of a naming: its bucket, prefix "archive"
// (where the local stack and Terraform put it).
func defaultArchive(n schema.Naming) string { return "s3://" + n.BucketName() + "/archive" }

// defaultNamespace is the Glue database Terraform creates for a naming
// (PREFIX-STAGE_archive with '-' as '_'), also the local default.
func defaultNamespace(n schema.Naming) string {
	return strings.ReplaceAll(n.Prefix+"_"+n.Stage+"_archive", "-", "_")
}

// archiveNamespace is the default namespace of the archive in bucket: the
// namespace follows the archive, not the tables a command works on (verify
// --prefix B --from-archive s3://A-dev-archive/...). A bucket named as
// Terraform and dev up name it, PREFIX-STAGE-archive, gives
// PREFIX_STAGE_archive, the Glue database Terraform creates beside it;
// another bucket name gives n's default.
func archiveNamespace(bucket string, n schema.Naming) string {
	if strings.HasSuffix(bucket, "-archive") && !strings.Contains(bucket, ".") {
		return strings.ReplaceAll(bucket, "-", "_")
	}
	return defaultNamespace(n)
}

// catalogURI is --catalog, or its default: the local stack's SQLite catalog
// (STREAMFOLD_STATE_DIR, else the dev stack's default state directory)
// when S3 is local, the warehouse's own (ARCHIVE_DIR/catalog.db) with
// --archive-dir, the Glue Data Catalog otherwise.
func (g *globals) catalogURI() (string, error) {
	if g.catalog != "" {
		return g.catalog, nil
	}
	if g.archiveDir != "" {
		abs, err := filepath.Abs(filepath.Join(g.archiveDir, "catalog.db"))
		return "sqlite:" + abs, err
	}
	if g.s3Endpoint == "" {
		return "glue", nil
	}
	dir := g.stateDir
	if dir == "" {
		var cfg devstack.Config
		cfg.SetDefaults()
		dir = cfg.StateDir
	}
	return localCatalogURI(dir)
}

// localCatalogURI is the local stack's Iceberg catalog: SQLite in its state
// directory, beside MinIO's data.
func localCatalogURI(stateDir string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(stateDir, "catalog.db"))
	return "sqlite:" + abs, err
}

// openArchive opens the archive at uri (s3://bucket/prefix), or n's default
// archive when uri is empty, with the catalog and namespace of the flags,
// on S3 (c.S3) or, with --archive-dir, on the local filesystem warehouse.
// The caller closes it.
func (g *globals) openArchive(c *awsclient.Clients, n schema.Naming, uri string) (*archiver.Archive, error) {
	uri = cmp.Or(uri, defaultArchive(n))
	bucket, prefix, err := archiver.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	cat, err := g.catalogURI()
	if err != nil {
		return nil, err
	}
	ns := cmp.Or(g.namespace, archiveNamespace(bucket, n))
	var api archiver.S3API
	if g.archiveDir != "" {
		if api, err = s3fs.New(g.archiveDir); err != nil {
			return nil, err
		}
	} else {
		api = c.S3
	}
	return archiver.New(api, archiver.Config{Bucket: bucket, Prefix: prefix, Catalog: cat, Namespace: ns})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// errorf prints "streamfold: " and the message on standard error and
// returns code. When an argument is a *awsclient.TableNotFoundError, a hint
// on the table prefix follows.
func errorf(env *cliEnv, code int, format string, args ...any) int {
	fmt.Fprintf(env.stderr, "streamfold: "+format+"\n", args...)
	for _, a := range args {
		var nf *awsclient.TableNotFoundError
		if err, ok := a.(error); ok && errors.As(err, &nf) {
			fmt.Fprintln(env.stderr, tableHint)
			break
		}
	}
	return code
}

// tableHint follows an error about a table that does not exist.
const tableHint = `hint: tables are named PREFIX-STAGE-NAME. Pass the prefix and stage the tables were created with
      (--prefix, --stage or STREAMFOLD_PREFIX, STREAMFOLD_STAGE; defaults streamfold and dev): "streamfold dev up
      --prefix X" prints them in its export line, and "streamfold deploy output" lists the deployed tables.`

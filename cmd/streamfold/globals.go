package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
)

// globals are the connection settings every AWS-touching command shares.
type globals struct {
	ddbEndpoint, s3Endpoint, region string
	s3Key, s3Secret                 string
	prefix, stage                   string
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
	g.s3Key = envOr(env, "STREAMFOLD_S3_ACCESS_KEY", "streamfold")
	g.s3Secret = envOr(env, "STREAMFOLD_S3_SECRET_KEY", "streamfold-secret")
}

func (g *globals) naming() (schema.Naming, error) {
	n := schema.Naming{Prefix: g.prefix, Stage: g.stage}
	return n, n.Validate()
}

func (g *globals) clients(ctx context.Context) (*awsclient.Clients, error) {
	return awsclient.New(ctx, awsclient.Config{
		Region:           g.region,
		DynamoDBEndpoint: g.ddbEndpoint,
		S3Endpoint:       g.s3Endpoint,
		S3AccessKey:      g.s3Key,
		S3SecretKey:      g.s3Secret,
	})
}

// defaultArchive is the archive of a naming: its bucket, prefix "archive"
// (where the local stack and Terraform put it).
func defaultArchive(n schema.Naming) string { return "s3://" + n.BucketName() + "/archive" }

// openArchive opens the archive at uri (s3://bucket/prefix), or n's default
// archive when uri is empty.
func openArchive(c *awsclient.Clients, n schema.Naming, uri string) (*archiver.Archive, error) {
	if uri == "" {
		uri = defaultArchive(n)
	}
	bucket, prefix, err := archiver.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	return archiver.New(c.S3, archiver.Config{Bucket: bucket, Prefix: prefix})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func errorf(env *cliEnv, code int, format string, args ...any) int {
	fmt.Fprintf(env.stderr, "streamfold: "+format+"\n", args...)
	return code
}

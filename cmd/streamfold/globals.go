package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// globals are the connection flags every AWS-touching command shares
// (toolkit/conn.Settings). Commands embed them.
type globals struct {
	DynamoDBEndpoint string `name:"dynamodb-endpoint" placeholder:"URL" sfenv:"STREAMFOLD_DYNAMODB_ENDPOINT" help:"DynamoDB endpoint URL, e.g. http://127.0.0.1:8766; empty = AWS."`
	S3Endpoint       string `name:"s3-endpoint" placeholder:"URL" sfenv:"STREAMFOLD_S3_ENDPOINT" help:"S3 endpoint URL, e.g. http://127.0.0.1:9766; empty = AWS."`
	Region           string `sfenv:"AWS_REGION" help:"AWS region."`
	Prefix           string `default:"streamfold" sfenv:"STREAMFOLD_PREFIX" help:"Table name prefix: tables are PREFIX-STAGE-NAME."`
	Stage            string `default:"dev" sfenv:"STREAMFOLD_STAGE" help:"Stage: dev, stage or prod."`
	Catalog          string `sfenv:"STREAMFOLD_CATALOG" help:"The archive's Iceberg catalog: sqlite:PATH (local) or glue[:ACCOUNT_ID] (AWS); default: with --archive-dir sqlite:ARCHIVE_DIR/catalog.db, with --s3-endpoint sqlite:STATE_DIR/catalog.db, as dev up prints, else glue."`
	ArchiveDir       string `name:"archive-dir" sfenv:"STREAMFOLD_ARCHIVE_DIR" help:"A local filesystem warehouse for the archive: its buckets are directories under this one, and S3 is not used for the archive (dev up --archive fs prints it)."`
	Namespace        string `sfenv:"STREAMFOLD_NAMESPACE" help:"The catalog namespace (Glue database) of the archive's tables; default: the archive bucket's name with '-' as '_' when it is named PREFIX-STAGE-archive, else PREFIX_STAGE_archive, as Terraform names the Glue database."`

	// From the environment only.
	stateDir, gsiShardsEnv, s3Key, s3Secret string
}

// AfterApply reads the settings that come from the environment only.
func (g *globals) AfterApply(env *cliEnv) error {
	g.fromEnv(env)
	return nil
}

func (g *globals) fromEnv(env *cliEnv) {
	g.stateDir = env.getenv("STREAMFOLD_STATE_DIR")
	g.gsiShardsEnv = env.getenv("STREAMFOLD_GSI_SHARDS")
	g.s3Key = envOr(env, "STREAMFOLD_S3_ACCESS_KEY", "streamfold")
	g.s3Secret = envOr(env, "STREAMFOLD_S3_SECRET_KEY", "streamfold-secret")
}

func envOr(env *cliEnv, key, def string) string {
	if v := env.getenv(key); v != "" {
		return v
	}
	return def
}

// settings are the flags as toolkit/conn.Settings.
func (g *globals) settings() conn.Settings {
	return conn.Settings{
		DynamoDBEndpoint: g.DynamoDBEndpoint, S3Endpoint: g.S3Endpoint, Region: g.Region,
		S3AccessKey: g.s3Key, S3SecretKey: g.s3Secret, Prefix: g.Prefix, Stage: g.Stage,
		Catalog: g.Catalog, Namespace: g.Namespace, StateDir: g.stateDir, ArchiveDir: g.ArchiveDir,
		GSIShards: g.gsiShardsEnv,
	}
}

// stack is what a command that runs the consumers or the API needs first:
// the naming, the write sharding and the log level (-v: info), each bad
// setting a usage error of cmd.
func (g *globals) stack(cmd string, verbose bool) (schema.Naming, int, slog.Level, error) {
	n, err := g.naming()
	if err != nil {
		return n, 0, 0, fail(exitUsage, "%s: %v", cmd, err)
	}
	shards, err := g.gsiShards()
	if err != nil {
		return n, 0, 0, fail(exitUsage, "%s: %v", cmd, err)
	}
	if verbose {
		return n, shards, slog.LevelInfo, nil
	}
	return n, shards, slog.LevelWarn, nil
}

// gsiShards is the deployment's write sharding (STREAMFOLD_GSI_SHARDS;
// unset: off).
func (g *globals) gsiShards() (int, error) { return g.settings().Shards() }

func (g *globals) naming() (schema.Naming, error) { return g.settings().Naming() }

func (g *globals) clients(ctx context.Context) (*awsclient.Clients, error) {
	return g.settings().Clients(ctx)
}

func (g *globals) openArchive(c *awsclient.Clients, n schema.Naming, uri string) (*archiver.Archive, error) {
	return g.settings().OpenArchive(c, n, uri)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// tableHint follows an error about a table that does not exist.
const tableHint = `hint: tables are named PREFIX-STAGE-NAME. Pass the prefix and stage the tables were created with
      (--prefix, --stage or STREAMFOLD_PREFIX, STREAMFOLD_STAGE; defaults streamfold and dev): "streamfold dev up
      --prefix X" prints them in its export line, and "streamfold deploy output" lists the deployed tables.`

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/archiver/s3fs"
	"github.com/streamfold/streamfold/internal/laptop/devstack"
	"github.com/streamfold/streamfold/schema/provision"
)

func init() {
	register(command{name: "dev", summary: "start, check or stop the local stack (DynamoDB Local with Streams, MinIO or a local filesystem archive)", run: runDev})
}

const devHelp = `Usage:
  streamfold dev up [flags]      start DynamoDB Local and MinIO on 127.0.0.1, create every table and the archive bucket
  streamfold dev status [flags]  say what is running and answering
  streamfold dev down [flags]    stop the processes that "dev up" started (and nothing else)

The tools come from "make tools" (installed under .tools/). up reuses a
service that already answers on its port, waits until both answer, then
prints the endpoints and the export line for other commands and tests:

  export STREAMFOLD_DYNAMODB_ENDPOINT=http://127.0.0.1:8766 STREAMFOLD_S3_ENDPOINT=http://127.0.0.1:9766 STREAMFOLD_PREFIX=streamfold STREAMFOLD_STAGE=dev STREAMFOLD_CATALOG=sqlite:/abs/.tools/run/catalog.db

STREAMFOLD_CATALOG is the archive's Iceberg catalog, an SQLite file in the
state directory (beside MinIO's data).

With --archive fs (what make demo uses) MinIO is not started: the archive
is an Iceberg warehouse on the local filesystem, STATE_DIR/warehouse (its
buckets are directories, archiver/s3fs), with its SQLite catalog inside,
and the export line names it instead of an S3 endpoint:

  export STREAMFOLD_DYNAMODB_ENDPOINT=http://127.0.0.1:8766 STREAMFOLD_ARCHIVE_DIR=/abs/.tools/run/warehouse STREAMFOLD_PREFIX=streamfold STREAMFOLD_STAGE=dev STREAMFOLD_CATALOG=sqlite:/abs/.tools/run/warehouse/catalog.db

up records the choice in the state directory; status and down follow it
unless --archive is given.

Every table is PREFIX-STAGE-NAME: a command run without the prefix and stage
of "dev up --prefix X --stage Y" looks for other tables, and says which.

DynamoDB Local runs in memory: "dev down" discards every table.

Flags:
`

type devReport struct {
	DynamoDB devstack.Service `json:"dynamodb"`
	S3       devstack.Service `json:"s3"`
	// ArchiveDir is the local filesystem warehouse (--archive fs; empty
	// with MinIO).
	ArchiveDir string             `json:"archive_dir,omitempty"`
	Tables     []provision.Result `json:"tables,omitempty"`
	Bucket     string             `json:"bucket,omitempty"`
	Export     map[string]string  `json:"export,omitempty"`
}

func runDev(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "dev", args, devHelp, "up", "down", "status")
	if !ok {
		return code
	}
	fs := flag.NewFlagSet("dev "+sub, flag.ContinueOnError)
	var cfg devstack.Config
	fs.StringVar(&cfg.ToolsDir, "tools-dir", envOr(env, "STREAMFOLD_TOOLS_DIR", envOr(env, "TOOLS_DIR", ".tools")), "where \"make tools\" installed DynamoDB Local, MinIO and Terraform (env STREAMFOLD_TOOLS_DIR or TOOLS_DIR)")
	fs.StringVar(&cfg.StateDir, "state-dir", env.getenv("STREAMFOLD_STATE_DIR"), "where pid files, logs and MinIO data go; default TOOLS_DIR/run (env STREAMFOLD_STATE_DIR)")
	fs.IntVar(&cfg.DynamoDBPort, "dynamodb-port", envInt(env, "STREAMFOLD_DYNAMODB_PORT", 8766), "DynamoDB Local port on 127.0.0.1 (env STREAMFOLD_DYNAMODB_PORT)")
	fs.IntVar(&cfg.S3Port, "s3-port", envInt(env, "STREAMFOLD_S3_PORT", 9766), "MinIO port on 127.0.0.1 (env STREAMFOLD_S3_PORT)")
	prefix := fs.String("prefix", envOr(env, "STREAMFOLD_PREFIX", "streamfold"), "table name prefix (env STREAMFOLD_PREFIX)")
	stage := fs.String("stage", envOr(env, "STREAMFOLD_STAGE", "dev"), "stage (env STREAMFOLD_STAGE)")
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 90*time.Second, "how long up waits for the services")
	archive := fs.String("archive", env.getenv("STREAMFOLD_DEV_ARCHIVE"), "where the archive goes: minio (S3 on MinIO) or fs (a local filesystem warehouse, STATE_DIR/warehouse; MinIO is not started); default what the last up of the state dir chose, else minio (env STREAMFOLD_DEV_ARCHIVE)")
	fs.Usage = func() { fmt.Fprint(env.stderr, devHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	cfg.StartTimeout = *timeout
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return errorf(env, exitUsage, "dev: %v", err)
	}
	mode, err := devArchiveMode(cfg.StateDir, *archive)
	if err != nil {
		return errorf(env, exitUsage, "dev: %v", err)
	}
	cfg.SkipMinIO = mode == archiveFS
	var (
		st  devstack.Status
		rep devReport
	)
	switch sub {
	case "up":
		st, err = devstack.Up(ctx, cfg)
		if err != nil {
			if errors.Is(err, devstack.ErrToolMissing) {
				return errorf(env, exitUsage, "dev up: %v", err)
			}
			return errorf(env, exitRuntime, "dev up: %v", err)
		}
		rep, err = provisionLocal(ctx, st, cfg, *prefix, *stage)
		if err != nil {
			return errorf(env, exitRuntime, "dev up: %v", err)
		}
		if err := writeArchiveMode(cfg.StateDir, mode); err != nil {
			return errorf(env, exitRuntime, "dev up: %v", err)
		}
	case "down":
		st, err = devstack.Down(ctx, cfg)
	case "status":
		st, err = devstack.Check(ctx, cfg)
	}
	if err != nil {
		return errorf(env, exitRuntime, "dev %s: %v", sub, err)
	}
	rep.DynamoDB, rep.S3 = st.DynamoDB, st.S3
	if mode == archiveFS {
		if rep.ArchiveDir, err = filepath.Abs(warehouseDir(cfg.StateDir)); err != nil {
			return errorf(env, exitRuntime, "dev %s: %v", sub, err)
		}
	}
	if *asJSON {
		if err := writeJSON(env.stdout, rep); err != nil {
			return errorf(env, exitRuntime, "dev: %v", err)
		}
	} else {
		printDev(env, sub, rep)
	}
	if sub == "status" && !(st.DynamoDB.Running && (st.S3.Running || mode == archiveFS)) {
		return exitFailed
	}
	return exitOK
}

func provisionLocal(ctx context.Context, st devstack.Status, cfg devstack.Config, prefix, stage string) (devReport, error) {
	var rep devReport
	g := globals{DynamoDBEndpoint: st.DynamoDB.Endpoint, S3Endpoint: st.S3.Endpoint, Region: "us-east-1",
		s3Key: cfg.S3AccessKey, s3Secret: cfg.S3SecretKey, Prefix: prefix, Stage: stage}
	n, err := g.naming()
	if err != nil {
		return rep, err
	}
	c, err := g.clients(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Tables, err = provision.Ensure(ctx, c.DynamoDB, n); err != nil {
		return rep, err
	}
	rep.Bucket = n.BucketName()
	if cfg.SkipMinIO {
		return provisionWarehouse(rep, st, cfg, prefix, stage)
	}
	if _, err := c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(rep.Bucket)}); err != nil {
		var owned *s3types.BucketAlreadyOwnedByYou
		var exists *s3types.BucketAlreadyExists
		if !errors.As(err, &owned) && !errors.As(err, &exists) {
			return rep, fmt.Errorf("create bucket %s: %w", rep.Bucket, err)
		}
	}
	rep.Export = map[string]string{
		"STREAMFOLD_DYNAMODB_ENDPOINT": st.DynamoDB.Endpoint,
		"STREAMFOLD_S3_ENDPOINT":       st.S3.Endpoint,
		"STREAMFOLD_PREFIX":            prefix,
		"STREAMFOLD_STAGE":             stage,
	}
	// The archive's Iceberg catalog lives beside MinIO's data, in the state
	// directory: both persist across dev down and up, and go together.
	uri, err := localCatalogURI(cfg.StateDir)
	if err != nil {
		return rep, err
	}
	rep.Export["STREAMFOLD_CATALOG"] = uri
	return rep, nil
}

// provisionWarehouse makes the archive bucket in the local filesystem
// warehouse (--archive fs) and the export line that names it.
func provisionWarehouse(rep devReport, st devstack.Status, cfg devstack.Config, prefix, stage string) (devReport, error) {
	dir, err := filepath.Abs(warehouseDir(cfg.StateDir))
	if err != nil {
		return rep, err
	}
	store, err := s3fs.New(dir)
	if err != nil {
		return rep, err
	}
	if err := store.CreateBucket(rep.Bucket); err != nil {
		return rep, err
	}
	rep.Export = map[string]string{
		"STREAMFOLD_DYNAMODB_ENDPOINT": st.DynamoDB.Endpoint,
		"STREAMFOLD_ARCHIVE_DIR":       dir,
		"STREAMFOLD_PREFIX":            prefix,
		"STREAMFOLD_STAGE":             stage,
		"STREAMFOLD_CATALOG":           "sqlite:" + filepath.Join(dir, "catalog.db"),
	}
	return rep, nil
}

// The archive of the local stack: MinIO, or a local filesystem warehouse.
const (
	archiveMinIO = "minio"
	archiveFS    = "fs"
)

// warehouseDir is the local filesystem warehouse of a state dir: the
// buckets' directories and the SQLite catalog (catalog.db).
func warehouseDir(stateDir string) string { return filepath.Join(stateDir, "warehouse") }

// archiveModeFile records the last up's --archive in the state dir.
func archiveModeFile(stateDir string) string { return filepath.Join(stateDir, "archive") }

// devArchiveMode is flag if set (minio or fs), else what the state dir's
// last up recorded, else minio.
func devArchiveMode(stateDir, flag string) (string, error) {
	switch flag {
	case archiveMinIO, archiveFS:
		return flag, nil
	case "":
	default:
		return "", fmt.Errorf("--archive %q: want minio or fs", flag)
	}
	b, err := os.ReadFile(archiveModeFile(stateDir))
	if err == nil && strings.TrimSpace(string(b)) == archiveFS {
		return archiveFS, nil
	}
	return archiveMinIO, nil
}

func writeArchiveMode(stateDir, mode string) error {
	return os.WriteFile(archiveModeFile(stateDir), []byte(mode+"\n"), 0o644)
}

func printDev(env *cliEnv, sub string, rep devReport) {
	services := []devstack.Service{rep.DynamoDB, rep.S3}
	if rep.ArchiveDir != "" && !rep.S3.Running {
		services = services[:1]
	}
	for _, s := range services {
		state := "not running"
		switch {
		case s.Running && s.StartedByUs:
			state = "running, pid " + strconv.Itoa(s.PID)
		case s.Running:
			state = "running (not started by streamfold)"
		case sub == "down":
			state = "stopped"
		}
		fmt.Fprintf(env.stdout, "%-9s %-24s %s\n", s.Name, s.Endpoint, state)
	}
	if rep.ArchiveDir != "" {
		fmt.Fprintf(env.stdout, "%-9s %s (a local filesystem warehouse, no MinIO)\n", "archive", rep.ArchiveDir)
	}
	if len(rep.Tables) > 0 {
		created := 0
		for _, t := range rep.Tables {
			if t.Created {
				created++
			}
		}
		fmt.Fprintf(env.stdout, "tables    %d ready (%d created), e.g. %s\n", len(rep.Tables), created, rep.Tables[0].Name)
		fmt.Fprintf(env.stdout, "bucket    %s\n", rep.Bucket)
		fmt.Fprintf(env.stdout, "\n%s\n", exportLine(rep.Export))
	}
}

// exportLine renders the variables other commands and the tests read, in
// a fixed order, as one shell export line.
func exportLine(vars map[string]string) string {
	line := "export"
	for _, k := range []string{"STREAMFOLD_DYNAMODB_ENDPOINT", "STREAMFOLD_S3_ENDPOINT", "STREAMFOLD_ARCHIVE_DIR", "STREAMFOLD_PREFIX", "STREAMFOLD_STAGE", "STREAMFOLD_CATALOG"} {
		if v, ok := vars[k]; ok {
			line += " " + k + "=" + v
		}
	}
	return line
}

func envInt(env *cliEnv, key string, def int) int {
	if v := env.getenv(key); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

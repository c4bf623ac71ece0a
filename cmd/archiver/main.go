// Command archiver is the archiver's Lambda function: DynamoDB Streams
// batches of the event table in, commits to the archive's Iceberg tables
// (Parquet data files in S3, the tables in an Iceberg catalog) out (see
// package archiver), partial batch responses (ReportBatchItemFailures)
// back. The same function runs the archive's scheduled maintenance: an
// invocation {"maintenance": {"task": "compact"|"verify"}} (EventBridge
// Scheduler, terraform/maintenance.tf) runs that task instead (see package
// archiver/maintenance). It is a composition root only: environment in,
// maintenance.Dispatch(archiver.Handler, maintenance.Runner) out.
//
// Environment:
//
//	ARCHIVE_BUCKET                the archive bucket (required)
//	ARCHIVE_PREFIX                key prefix inside the bucket (optional, no leading or trailing '/')
//	ARCHIVE_BUCKET_OWNER          the account id every S3 request expects to own the bucket
//	                              (optional; Terraform sets the deploying account's)
//	ARCHIVE_CATALOG               the Iceberg catalog (required): "glue" (the Glue Data Catalog
//	                              of the function's account and region; what Terraform sets),
//	                              "glue:ACCOUNT_ID", or "sqlite:PATH" in builds without the
//	                              nosqlcatalog tag (the Lambda test tier; the deployed zips
//	                              are built with it: .ci/package.sh)
//	ARCHIVE_NAMESPACE             the catalog namespace of the tables: the Glue database
//	                              (required with a glue catalog; Terraform sets it); with
//	                              sqlite, the archiver's default when unset
//	STREAMFOLD_PREFIX             table prefix, with STREAMFOLD_STAGE: the tables verify reads,
//	STREAMFOLD_STAGE              the checkpoints table the gaps and heartbeats go to, and the
//	                              metrics' Deployment dimension ("<prefix>-<stage>"); verify
//	                              fails naming them when they are unset; stream batches and compact
//	                              do not need them (without them no gap or heartbeat is recorded,
//	                              gaps are only logged)
//	STREAMFOLD_S3_ENDPOINT        optional endpoint overrides for tests (MinIO, DynamoDB Local),
//	STREAMFOLD_DYNAMODB_ENDPOINT  with STREAMFOLD_S3_ACCESS_KEY/SECRET_KEY (clientConfig, config.go)
//
// Each stream batch is first handed to an opswatch.Watch: the gaps a
// Lambda can notice (a batch about to be trimmed, a jump after a stall, a
// batch redriven from the on-failure destination) and the consumer's
// heartbeat (at most one a minute per instance) go to the checkpoints
// table (opsrec), one PutItem each, with a log line.
//
// Configure its event source mapping with ReportBatchItemFailures and
// unlimited retries (MaximumRetryAttempts -1): a failed batch is an S3
// outage, and its retry rewrites the same objects.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/maintenance"
	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/schema"
)

func main() {
	log := slog.New(lambdacontext.NewLogHandler())
	cfg, err := archiver.ConfigFromEnv(os.Getenv)
	if err != nil {
		log.Error("bad configuration (ARCHIVE_BUCKET, ARCHIVE_PREFIX, ARCHIVE_BUCKET_OWNER, ARCHIVE_CATALOG, ARCHIVE_NAMESPACE)", "err", err)
		os.Exit(1)
	}
	c, err := awsclient.New(context.Background(), clientConfig(os.Getenv)) // endpoint overrides: config.go
	if err != nil {
		log.Error("aws clients", "err", err)
		os.Exit(1)
	}
	a, err := archiver.New(c.S3, cfg)
	if err != nil {
		log.Error("archive", "err", err)
		os.Exit(1)
	}
	catalog, namespace := a.Catalog() // with the archiver's defaults applied
	log.Info("archiver configured", "bucket", cfg.Bucket, "prefix", cfg.Prefix, "expected_bucket_owner", cfg.ExpectedBucketOwner,
		"catalog", catalog, "namespace", namespace)
	n := schema.Naming{Prefix: os.Getenv("STREAMFOLD_PREFIX"), Stage: os.Getenv("STREAMFOLD_STAGE")}
	deployment := cfg.Bucket
	var verifier maintenance.Verifier = unconfigured{}
	if n.Prefix != "" || n.Stage != "" {
		live, err := rebuild.NewDynamoLive(c.DynamoDB, n)
		if err != nil {
			log.Error("bad configuration (STREAMFOLD_PREFIX, STREAMFOLD_STAGE)", "err", err)
			os.Exit(1)
		}
		deployment = n.Prefix + "-" + n.Stage
		verifier = maintenance.ArchiveVerifier{Source: a, Live: live}
	}
	var rec opswatch.Recorder // nil without the tables: gaps are logged only
	if n.Prefix != "" || n.Stage != "" {
		rec = opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}
	}
	w, err := opswatch.New(rec, opswatch.Config{Consumer: "archiver", Logger: log})
	if err != nil {
		log.Error("opswatch", "err", err)
		os.Exit(1)
	}
	runner, err := maintenance.New(maintenance.Config{Deployment: deployment}, a, verifier, os.Stdout, log)
	if err != nil {
		log.Error("maintenance", "err", err)
		os.Exit(1)
	}
	// An archive that is gone (bucket or table metadata) is logged and
	// counted as ArchiveUnavailable, which terraform/alarms.tf alarms on.
	lambda.Start(maintenance.Dispatch(archiver.NewHandler(a, log).EmitMetrics(os.Stdout, deployment).Watch(w).Handle, runner))
}

// unconfigured is the verifier without table names.
type unconfigured struct{}

func (unconfigured) Verify(context.Context) (rebuild.Report, error) {
	return rebuild.Report{}, errors.New("verify needs the tables: set STREAMFOLD_PREFIX and STREAMFOLD_STAGE")
}

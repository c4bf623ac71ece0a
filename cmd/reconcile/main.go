// Command reconcile is the reconcile Lambda function: it checks that every
// event the event table holds for a window was applied by the projector and
// written to the archive, and, when healing is enabled, feeds the missing
// ones through the projector's commit and the archiver's batch (package
// reconcile). EventBridge Scheduler invokes it daily
// (terraform/reconcile.tf); a person can invoke it on demand. It is a
// composition root only: environment in, handler out.
//
// The payload (all fields optional; see Request):
//
//	{"since": "26h", "heal": false}
//	{"from": "2026-03-01T00:00:00Z", "to": "2026-03-02T00:00:00Z"}
//
// Gaps are not a function error: they go to the ReconcileGaps metric (CloudWatch
// embedded metric format on stdout, dimension Deployment; the alarm in
// terraform/reconcile.tf), to a log line per domain and day ("reconcile
// gap"), to the stored result (the operations page) and to the response.
// The function fails only when the run does (or the payload is refused).
//
// Environment:
//
//	STREAMFOLD_PREFIX, STREAMFOLD_STAGE  the tables (required: no defaults), and the
//	                                     metrics' Deployment dimension "<prefix>-<stage>"
//	ARCHIVE_BUCKET, ARCHIVE_PREFIX,      the archive, as the archiver function reads it
//	ARCHIVE_BUCKET_OWNER, ARCHIVE_CATALOG, (cmd/archiver; ARCHIVE_CATALOG "glue" in AWS)
//	ARCHIVE_NAMESPACE
//	RECONCILE_WINDOW                     default window back from now (default 26h: daily runs overlap)
//	RECONCILE_HEAL                       "true": heal by default, and heal is allowed at all (Terraform
//	                                     grants the role the consumers' writes only then); default false
//	STREAMFOLD_DYNAMODB_ENDPOINT,        optional endpoint overrides for tests
//	STREAMFOLD_S3_ENDPOINT, with STREAMFOLD_S3_ACCESS_KEY/SECRET_KEY
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/streamfold/streamfold/internal/awsclient"
)

func main() {
	log := slog.New(lambdacontext.NewLogHandler())
	s, err := load(os.Getenv)
	if err != nil {
		log.Error("bad configuration", "err", err)
		os.Exit(1)
	}
	c, err := awsclient.New(context.Background(), s.client)
	if err != nil {
		log.Error("aws clients", "err", err)
		os.Exit(1)
	}
	run, err := newRun(c, s, log)
	if err != nil {
		log.Error("reconcile", "err", err)
		os.Exit(1)
	}
	log.Info("reconcile configured", "tables", s.deployment(), "bucket", s.archive.Bucket, "archive_prefix", s.archive.Prefix,
		"expected_bucket_owner", s.archive.ExpectedBucketOwner, "catalog", s.archive.Catalog, "namespace", s.archive.Namespace,
		"window", s.window.String(), "heal", s.heal)
	h := &handler{run: run, settings: s, metrics: os.Stdout, log: log, now: time.Now, deployment: s.deployment()}
	lambda.Start(h.Handle)
}

// Command archiver is the archiver's Lambda function: DynamoDB Streams
// batches of the event table in, Parquet objects and manifests in S3 out
// (see package archiver), partial batch responses (ReportBatchItemFailures)
// back. It is a composition root only: environment in, archiver.Handler out.
//
// Environment:
//
//	ARCHIVE_BUCKET          the archive bucket (required)
//	ARCHIVE_PREFIX          key prefix inside the bucket (optional, no leading or trailing '/')
//	STREAMFOLD_S3_ENDPOINT  optional endpoint override (tests, MinIO), with
//	                        STREAMFOLD_S3_ACCESS_KEY and STREAMFOLD_S3_SECRET_KEY (see clientConfig)
//
// Configure its event source mapping with ReportBatchItemFailures and
// unlimited retries (MaximumRetryAttempts -1): a failed batch is an S3
// outage, and its retry rewrites the same objects.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
)

func main() {
	log := slog.New(lambdacontext.NewLogHandler())
	cfg := archiver.Config{Bucket: os.Getenv("ARCHIVE_BUCKET"), Prefix: os.Getenv("ARCHIVE_PREFIX")}
	if err := cfg.Validate(); err != nil {
		log.Error("bad configuration (ARCHIVE_BUCKET, ARCHIVE_PREFIX)", "err", err)
		os.Exit(1)
	}
	c, err := awsclient.New(context.Background(), clientConfig(os.Getenv))
	if err != nil {
		log.Error("aws clients", "err", err)
		os.Exit(1)
	}
	a, err := archiver.New(c.S3, cfg)
	if err != nil {
		log.Error("archive", "err", err)
		os.Exit(1)
	}
	lambda.Start(archiver.NewHandler(a, log).Handle)
}

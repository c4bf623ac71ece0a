// Command projector is the projector's Lambda function: DynamoDB Streams
// batches of the event table in, partial batch responses out
// (ReportBatchItemFailures). It is a composition root only: environment in,
// projector.Handler out.
//
// Environment:
//
//	STREAMFOLD_PREFIX             table name prefix (default "streamfold")
//	STREAMFOLD_STAGE              dev, stage or prod (default "dev")
//	STREAMFOLD_GSI_SHARDS         write shards of the sharded indexes (terraform gsi_shards; unset, 0 or 1: off)
//	STREAMFOLD_DYNAMODB_ENDPOINT  optional endpoint override (tests)
//
// Each batch is first handed to an opswatch.Watch: the gaps a Lambda can
// notice (a batch about to be trimmed, a jump after a stall, a batch
// redriven from the on-failure destination) and the consumer's heartbeat
// (at most one a minute per instance) go to the checkpoints table
// (opsrec), one PutItem each, with a log line.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

func main() {
	log := slog.New(lambdacontext.NewLogHandler())
	n := schema.Naming{Prefix: envOr("STREAMFOLD_PREFIX", "streamfold"), Stage: envOr("STREAMFOLD_STAGE", "dev")}
	if err := n.Validate(); err != nil {
		log.Error("bad configuration", "err", err)
		os.Exit(1)
	}
	c, err := awsclient.New(context.Background(), awsclient.Config{DynamoDBEndpoint: os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT")})
	if err != nil {
		log.Error("aws clients", "err", err)
		os.Exit(1)
	}
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		log.Error("store", "err", err)
		os.Exit(1)
	}
	shards, err := schema.ParseGSIShards(os.Getenv("STREAMFOLD_GSI_SHARDS"))
	if err != nil {
		log.Error("bad configuration", "err", err)
		os.Exit(1)
	}
	p, err := projector.New(store, projector.Config{GSIShards: shards})
	if err != nil {
		log.Error("projector", "err", err)
		os.Exit(1)
	}
	w, err := opswatch.New(opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)},
		opswatch.Config{Consumer: "projector", Logger: log})
	if err != nil {
		log.Error("opswatch", "err", err)
		os.Exit(1)
	}
	h := projector.NewHandler(p, projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters)).EmitMetrics(os.Stdout), projector.HandlerConfig{Watch: w}, log)
	lambda.Start(h.Handle)
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

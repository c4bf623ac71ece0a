// Command api is the read side's Lambda function: the HTTP JSON API of
// package api behind a Lambda function URL (payload format 2.0, BUFFERED).
// It is a composition root only: environment and secrets in,
// api.LambdaHandler out.
//
// Environment:
//
//	STREAMFOLD_PREFIX                  table name prefix (default "streamfold")
//	STREAMFOLD_STAGE                   dev, stage or prod (default "dev")
//	STREAMFOLD_API_TOKEN_SECRET_ARN    Secrets Manager secret holding the bearer token (SecretString, 16+ characters)
//	STREAMFOLD_CURSOR_KEY_SECRET_ARN   Secrets Manager secret holding the cursor key (SecretString or SecretBinary, 16+ bytes)
//	STREAMFOLD_GSI_SHARDS              write shards of the sharded indexes (terraform gsi_shards; unset, 0 or 1: off)
//	STREAMFOLD_DYNAMODB_ENDPOINT       optional endpoint override (tests)
//
// The secrets are read once, at cold start. The dashboard is served at "/";
// the operations routes read the checkpoints and dead-letter tables.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opsview"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
)

func main() {
	log := slog.New(lambdacontext.NewLogHandler())
	ctx := context.Background()
	c, err := awsclient.New(ctx, awsclient.Config{DynamoDBEndpoint: os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT")})
	if err != nil {
		log.Error("aws clients", "err", err)
		os.Exit(1)
	}
	s, err := load(ctx, os.Getenv, secretsmanager.NewFromConfig(c.AWS))
	if err != nil {
		log.Error("configuration", "err", err)
		os.Exit(1)
	}
	shards, err := schema.ParseGSIShards(os.Getenv("STREAMFOLD_GSI_SHARDS"))
	if err != nil {
		log.Error("configuration", "err", err)
		os.Exit(1)
	}
	qc, err := query.New(c.DynamoDB, s.naming, query.Config{CursorKey: s.cursorKey, GSIShards: shards, JobFold: jobFold})
	if err != nil {
		log.Error("query client", "err", err)
		os.Exit(1)
	}
	ops, err := operations(c.DynamoDB, s.naming)
	if err != nil {
		log.Error("operations view", "err", err)
		os.Exit(1)
	}
	h, err := api.New(api.Config{Queries: qc, Token: s.token, Dashboard: dashboard.Handler(), Logger: log, Operations: ops})
	if err != nil {
		log.Error("api", "err", err)
		os.Exit(1)
	}
	lambda.Start(api.LambdaHandler(h))
}

// operations is the operations view over the checkpoints table (the
// consumers' heartbeats, gaps, reconcile results) and the dead-letter table.
func operations(ddb *dynamodb.Client, n schema.Naming) (*opsview.View, error) {
	return opsview.New(opsview.Config{
		Records:     opsrec.Store{API: ddb, Table: n.Table(schema.TableCheckpoints)},
		DeadLetters: deadletter.NewTable(ddb, n.Table(schema.TableDeadLetters)),
		Naming:      n,
	})
}

// secretGetter is the one Secrets Manager call the function makes.
type secretGetter = awsclient.SecretGetter

// settings is the function's configuration, read at cold start.
type settings struct {
	naming    schema.Naming
	token     string
	cursorKey []byte
}

// load reads the environment and the two secrets. Errors name the variable.
func load(ctx context.Context, getenv func(string) string, sm secretGetter) (settings, error) {
	or := func(k, d string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return d
	}
	s := settings{naming: schema.Naming{Prefix: or("STREAMFOLD_PREFIX", "streamfold"), Stage: or("STREAMFOLD_STAGE", "dev")}}
	if err := s.naming.Validate(); err != nil {
		return s, err
	}
	token, err := secret(ctx, sm, getenv, "STREAMFOLD_API_TOKEN_SECRET_ARN")
	if err != nil {
		return s, err
	}
	key, err := secret(ctx, sm, getenv, "STREAMFOLD_CURSOR_KEY_SECRET_ARN")
	if err != nil {
		return s, err
	}
	s.token, s.cursorKey = string(token), key
	return s, nil
}

func secret(ctx context.Context, sm secretGetter, getenv func(string) string, env string) ([]byte, error) {
	arn := getenv(env)
	if arn == "" {
		return nil, errors.New(env + ": is required")
	}
	v, err := awsclient.SecretValue(ctx, sm, arn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	return v, nil
}

// jobFold is the projector's job fold, for query's job timeline.
func jobFold() query.JobFold { return projector.NewJobFold() }

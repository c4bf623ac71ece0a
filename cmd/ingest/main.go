// Command ingest is streamfold's producer Lambda function. One function
// takes every producer and tells them apart from the raw invocation JSON:
//
//   - HTTP requests through the function's URL (auth NONE: GitHub cannot
//     sign SigV4), served by ingest.HTTPHandler, routed by path, the same
//     handler `streamfold serve` serves locally:
//     POST /webhooks/github (GitHub webhooks, each delivery HMAC-verified
//     with the webhook secret), POST /events (CloudEvents: structured,
//     binary and batched modes) and POST /eventbridge (one EventBridge
//     Step Functions event), both with a bearer token. Both secrets are
//     read from Secrets Manager at cold start and, while a read fails,
//     again on a later request that needs them (which gets 503 meanwhile);
//   - EventBridge "Step Functions Execution Status Change" events (seed 002)
//     through ingest.StepFunctionsAdapter, which keeps agent state machines
//     only (states:ListTagsForResource, cached). An event that can never be
//     appended is written to the dead-letters table (consumer "ingest") and
//     the invocation succeeds; transient failures fail it, so Lambda
//     retries.
//
// Every route appends through ingest.Appender: a conditional PutItem per
// event, so a redelivery is a duplicate and never a second event, and the
// same id with different content is a conflict kept in the dead letters
// (consumer "ingest", reason "conflict"); the payload policy and the
// future-skew limit hold on every route. It is a
// composition root only: environment in, handler out.
//
// Environment:
//
//	STREAMFOLD_PREFIX                   table name prefix (default "streamfold")
//	STREAMFOLD_STAGE                    dev, stage or prod (default "dev")
//	GITHUB_WEBHOOK_SECRET_ARN           Secrets Manager secret holding the webhook secret (required)
//	STREAMFOLD_INGEST_TOKEN_SECRET_ARN  Secrets Manager secret holding the bearer token of /events
//	                                    and /eventbridge, 16 characters or more (required)
//	STREAMFOLD_SFN_PAYLOADS             what is kept of a Step Functions execution's input, output
//	                                    and cause on every route: hash (default), drop or keep
//	                                    (ingest.PayloadPolicy)
//	STREAMFOLD_DYNAMODB_ENDPOINT        optional endpoint override (tests)
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
)

func main() {
	log := slog.New(lambdacontext.NewLogHandler())
	cfg := configFromEnv(os.Getenv)
	if err := cfg.Validate(); err != nil {
		log.Error("bad configuration", "err", err)
		os.Exit(1)
	}
	ctx := context.Background()
	c, err := awsclient.New(ctx, awsclient.Config{DynamoDBEndpoint: cfg.DynamoDBEndpoint})
	if err != nil {
		log.Error("aws clients", "err", err)
		os.Exit(1)
	}
	deadLetters := deadletter.NewTable(c.DynamoDB, cfg.Naming.Table(schema.TableDeadLetters)).EmitMetrics(os.Stdout)
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{
		Table: cfg.Naming.Table(schema.TableEvents), Payloads: cfg.SFNPayloads, DeadLetters: deadLetters,
	})
	if err != nil {
		log.Error("appender", "err", err)
		os.Exit(1)
	}
	sm := secretsmanager.NewFromConfig(c.AWS)
	webhookSecret := &cachedSecret{api: sm, arn: cfg.SecretARN}
	token := &cachedSecret{api: sm, arn: cfg.TokenSecretARN}
	// Cold start: read the secrets now so the first request does not wait
	// for them. A failure is not fatal: EventBridge events need neither, and
	// HTTP requests try again.
	initCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := webhookSecret.Secret(initCtx); err != nil {
		log.Warn("webhook secret not loaded at cold start; webhook requests get 503 until it is", "err", err)
	}
	if _, err := token.Secret(initCtx); err != nil {
		log.Warn("ingest token not loaded at cold start; /events and /eventbridge get 503 until it is", "err", err)
	}
	cancel()
	tags := ingest.NewTagCache(sfn.NewFromConfig(c.AWS), ingest.DefaultTagTTL, nil)
	h, err := ingest.NewHTTPHandler(ingest.HTTPConfig{
		Appender:              app,
		WebhookSecret:         webhookSecret,
		Token:                 token,
		StepFunctionsTags:     tags,
		StepFunctionsPayloads: cfg.SFNPayloads,
		Log:                   log,
	})
	if err != nil {
		log.Error("ingest handler", "err", err)
		os.Exit(1)
	}
	d := &dispatcher{
		http: h,
		sfn: &stepFunctions{
			appender:    app,
			tags:        tags,
			deadLetters: deadLetters,
			log:         log,
			now:         time.Now,
			payloads:    cfg.SFNPayloads,
		},
	}
	lambda.Start(d.Handle)
}

// Command ingest is streamfold's producer Lambda function. One function
// takes both producers and tells them apart from the raw invocation JSON:
//
//   - GitHub webhooks through the function's URL (auth NONE: GitHub cannot
//     sign SigV4; every delivery is HMAC-verified by ingest.WebhookHandler
//     with the secret read from Secrets Manager at cold start, and again on
//     a later request while that read fails);
//   - EventBridge "Step Functions Execution Status Change" events (seed 002)
//     through ingest.StepFunctionsAdapter, which keeps agent state machines
//     only (states:ListTagsForResource, cached).
//
// Both append through ingest.Appender: a conditional PutItem per event, so
// a redelivery is a duplicate and never a second event. It is a composition
// root only: environment in, handler out.
//
// Environment:
//
//	STREAMFOLD_PREFIX             table name prefix (default "streamfold")
//	STREAMFOLD_STAGE              dev, stage or prod (default "dev")
//	GITHUB_WEBHOOK_SECRET_ARN     Secrets Manager secret holding the webhook secret (required)
//	STREAMFOLD_DYNAMODB_ENDPOINT  optional endpoint override (tests)
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
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
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: cfg.Naming.Table(schema.TableEvents)})
	if err != nil {
		log.Error("appender", "err", err)
		os.Exit(1)
	}
	sm := secretsmanager.NewFromConfig(c.AWS)
	webhook := &lazyHandler{log: log, build: func(ctx context.Context) (http.Handler, error) {
		secret, err := readSecret(ctx, sm, cfg.SecretARN)
		if err != nil {
			return nil, err
		}
		return ingest.NewWebhookHandler(app, ingest.WebhookConfig{Secret: secret}, log)
	}}
	// Cold start: read the secret now so the first delivery does not wait
	// for it. A failure is not fatal: EventBridge events need no secret, and
	// webhook requests try again.
	initCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := webhook.get(initCtx); err != nil {
		log.Warn("webhook secret not loaded at cold start; webhook requests get 503 until it is", "err", err)
	}
	cancel()
	tags := ingest.NewTagCache(sfn.NewFromConfig(c.AWS), ingest.DefaultTagTTL, nil)
	d := &dispatcher{webhook: webhook, sfn: ingest.NewStepFunctionsAdapter(app, tags, log)}
	lambda.Start(d.Handle)
}

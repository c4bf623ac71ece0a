package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/toolkit/apiserver"
)

type serveCmd struct {
	globals
	appendFlags
	Addr          string `default:"127.0.0.1:8080" help:"Address to listen on (host:port; port 0 picks a free one)."`
	Token         string `sfenv:"STREAMFOLD_API_TOKEN" help:"Bearer token of the API, 16 characters or more; default: a random one, printed."`
	CursorKey     string `name:"cursor-key" sfenv:"STREAMFOLD_CURSOR_KEY" help:"Key signing cursors, 16 bytes or more; default: random per start."`
	MaxPageSize   int    `name:"max-page-size" help:"Largest ?limit= accepted (default and upper bound 200)."`
	Ingest        bool   `default:"true" help:"Serve the ingest routes (POST /webhooks/github, /events, /eventbridge; --ingest=false: do not)."`
	WebhookSecret string `name:"webhook-secret" sfenv:"GITHUB_WEBHOOK_SECRET" help:"Secret GitHub signs webhook deliveries with; default: a random one, printed."`
	IngestToken   string `name:"ingest-token" sfenv:"STREAMFOLD_INGEST_TOKEN" help:"Bearer token of POST /events and /eventbridge, 16 characters or more; default: a random one, printed."`
	SFNTags       string `name:"sfn-tags" help:"POST /eventbridge: where a state machine's tags come from when the event has no detail.stateMachineTags: \"aws\" (ListTagsForResource), a JSON file {\"<stateMachineArn>\":{\"Type\":\"Agent\",..}}, or \"none\"; default \"aws\" unless --dynamodb-endpoint is set, then \"none\"."`
	Verbose       bool   `short:"v" help:"Log every request on standard error."`
}

func (serveCmd) Help() string { return longHelp("serve") }

func (c *serveCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	n, shards, level, err := c.stack("serve", c.Verbose)
	if err != nil {
		return err
	}
	o := apiserver.Options{
		Addr: c.Addr, Token: c.Token, CursorKey: c.CursorKey, MaxPageSize: c.MaxPageSize, Ingest: c.Ingest,
		WebhookSecret: c.WebhookSecret, IngestToken: c.IngestToken, SFNTags: c.SFNTags, SFNPayloads: c.SFNPayloads,
		MaxFutureSkew: c.MaxFutureSkew, GSIShards: shards, Now: func() time.Time { return env.now().UTC() },
		Logger: slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level})),
	}
	if err := o.Validate(); err != nil {
		return failed("serve", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "serve: %v", err)
	}
	srv, err := apiserver.New(clients, n, c.DynamoDBEndpoint != "", o)
	if err != nil {
		return failed("serve", err)
	}
	if err := srv.Listen(); err != nil {
		return fail(exitRuntime, "serve: %v", err)
	}
	if err := srv.WriteText(env.stderr); err != nil {
		return fail(exitRuntime, "serve: %v", err)
	}
	if err := srv.Serve(ctx, func() { fmt.Fprintln(env.stderr, "streamfold: shutting down") }); err != nil {
		return fail(exitRuntime, "serve: %v", err)
	}
	return nil
}

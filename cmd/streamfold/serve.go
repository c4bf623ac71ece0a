package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opsview"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/emit"
)

func init() {
	register(command{name: "serve", summary: "serve the HTTP JSON API and the dashboard locally", run: runServe})
}

const serveHelp = `Usage: streamfold serve [flags]

Serves streamfold over HTTP on one listener:

  the read side    the JSON API under /api/ (every query pattern and the
                   operations view: consumers' lag, dead letters, the last
                   reconcile; see docs/api.md) and the dashboard page at /
                   (its operations page at /#page=ops): the handler the
                   API Lambda function serves behind its function URL;
  the ingest side  POST /webhooks/github, POST /events and POST /eventbridge
                   (see docs/event-contract.md, "Producing over HTTP"): the
                   handler the ingest Lambda function serves behind its
                   function URL. On by default; --ingest=false leaves it out.

Every /api/ request except /api/health needs "Authorization: Bearer TOKEN".
The token comes from --token or STREAMFOLD_API_TOKEN (16 characters or
more); with neither, a random token is generated and the dashboard URL with
it is printed on standard error (http://ADDR/#token=...; the token stays in
the URL fragment, which browsers never send to the server).

The ingest routes have their own secrets, printed on standard error when
generated:
  POST /webhooks/github  GitHub's X-Hub-Signature-256 HMAC with the webhook
                         secret: --webhook-secret or GITHUB_WEBHOOK_SECRET;
                         with neither, a random one is generated.
  POST /events           CloudEvents 1.0 over HTTP (structured, binary and
                         batched modes) with "Authorization: Bearer
                         INGEST_TOKEN": --ingest-token or
                         STREAMFOLD_INGEST_TOKEN (16 characters or more);
                         with neither, a random one is generated.
  POST /eventbridge      one EventBridge Step Functions event, as EventBridge
                         delivers it to the ingest function, with the ingest
                         token. Locally the state machine's tags are the
                         event's detail.stateMachineTags when it has them,
                         else they come from --sfn-tags.
Body limits: 1 MiB for a GitHub delivery, 4 MiB for /events (at most 1000
events per batch), 1 MiB for /eventbridge; a larger body is answered 413.
An event whose item exceeds DynamoDB's 400 KB even compressed is answered
413 (too_large), never 503.

Cursors are signed with --cursor-key or STREAMFOLD_CURSOR_KEY; without one,
a random key is made at start, so cursors stop working when the server
restarts.

Ctrl-C (or SIGTERM) stops accepting requests and waits up to 10 s for the
ones in flight.

Examples:
  streamfold serve
  STREAMFOLD_API_TOKEN=$(openssl rand -hex 16) streamfold serve --addr 127.0.0.1:8080
  curl -H "Authorization: Bearer $STREAMFOLD_API_TOKEN" "http://127.0.0.1:8080/api/messages?stage=dev"
  curl -H "Authorization: Bearer $STREAMFOLD_INGEST_TOKEN" -H "Content-Type: application/cloudevents+json" \
       --data-binary @event.json http://127.0.0.1:8080/events

Exit status: 0 stopped cleanly; 2 usage error; 3 the address could not be
bound or the server failed.

Flags:
`

func runServe(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	token := fs.String("token", env.getenv("STREAMFOLD_API_TOKEN"), "bearer token of the API (env STREAMFOLD_API_TOKEN; default: a random one, printed)")
	keyFlag := fs.String("cursor-key", env.getenv("STREAMFOLD_CURSOR_KEY"), "key signing cursors, 16 bytes or more (env STREAMFOLD_CURSOR_KEY; default: random per start)")
	maxPage := fs.Int("max-page-size", 0, "largest ?limit= accepted (default and upper bound 200)")
	withIngest := fs.Bool("ingest", true, "serve the ingest routes (POST /webhooks/github, /events, /eventbridge)")
	webhookSecret := fs.String("webhook-secret", env.getenv("GITHUB_WEBHOOK_SECRET"), "secret GitHub signs webhook deliveries with (env GITHUB_WEBHOOK_SECRET; default: a random one, printed)")
	ingestToken := fs.String("ingest-token", env.getenv("STREAMFOLD_INGEST_TOKEN"), "bearer token of POST /events and /eventbridge, 16 characters or more (env STREAMFOLD_INGEST_TOKEN; default: a random one, printed)")
	sfnTags := fs.String("sfn-tags", "", `POST /eventbridge: where a state machine's tags come from when the event has no detail.stateMachineTags: "aws" (ListTagsForResource), a JSON file {"<stateMachineArn>":{"Type":"Agent",..}}, or "none"; default "aws" unless --dynamodb-endpoint is set, then "none"`)
	sfnPayloads := fs.String("sfn-payloads", "hash", `every ingest route: what is kept of a Step Functions execution's input, output and cause (agent prompts and answers), however the event arrives: "hash" (their SHA-256), "drop" (null) or "keep" (verbatim); see docs/security.md`)
	skew := futureSkewFlag(fs, env)
	verbose := fs.Bool("v", false, "log every request on standard error")
	fs.Usage = func() { fmt.Fprint(env.stderr, serveHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "serve: unexpected argument %q", fs.Arg(0))
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	key := []byte(*keyFlag)
	if len(key) == 0 {
		key = serveRandom(32)
	}
	generated := *token == ""
	if generated {
		*token = base64.RawURLEncoding.EncodeToString(serveRandom(24))
	}
	if *withIngest && *ingestToken != "" {
		if err := ingest.CheckToken([]byte(*ingestToken)); err != nil {
			return errorf(env, exitUsage, "serve: --ingest-token: %v", err)
		}
	}
	payloads, err := ingest.ParsePayloadPolicy(*sfnPayloads)
	if err != nil {
		return errorf(env, exitUsage, "serve: --sfn-payloads: %v", err)
	}
	maxSkew, err := skew()
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	if *withIngest && *webhookSecret != "" {
		if err := ingest.CheckWebhookSecret([]byte(*webhookSecret)); err != nil {
			return errorf(env, exitUsage, "serve: --webhook-secret (GITHUB_WEBHOOK_SECRET): %v", err)
		}
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "serve: %v", err)
	}
	shards, err := g.gsiShards()
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	qc, err := query.New(clients.DynamoDB, n, query.Config{CursorKey: key, GSIShards: shards, JobFold: jobFold})
	if err != nil {
		return errorf(env, exitUsage, "serve: --cursor-key: %v", err)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	ops, err := opsview.New(opsview.Config{
		Records:     opsrec.Store{API: clients.DynamoDB, Table: n.Table(schema.TableCheckpoints)},
		DeadLetters: deadletter.NewTable(clients.DynamoDB, n.Table(schema.TableDeadLetters)),
		Naming:      n,
	})
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	h, err := api.New(api.Config{
		Now:         env.clock,
		Operations:  ops,
		Queries:     qc,
		Token:       *token,
		Dashboard:   dashboard.Handler(),
		MaxPageSize: *maxPage,
		Logger:      log,
	})
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	var in *serveIngest
	if *withIngest {
		tags, err := emit.TagSource(*sfnTags, g.DynamoDBEndpoint != "", func() ingest.TagLister { return sfn.NewFromConfig(clients.AWS) })
		if err != nil {
			return errorf(env, exitUsage, "serve: --sfn-tags: %v", err)
		}
		app := ingest.AppenderConfig{Payloads: payloads, MaxFutureSkew: maxSkew, DeadLetters: deadletter.NewTable(clients.DynamoDB, n.Table(schema.TableDeadLetters))}
		in, err = newServeIngest(clients.DynamoDB, n, *webhookSecret, *ingestToken, tags, app, log)
		if err != nil {
			return errorf(env, exitUsage, "serve: %v", err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errorf(env, exitRuntime, "serve: listen %s: %v", *addr, err)
	}
	srv := &http.Server{Handler: serveMux(h, in), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(env.stderr, "streamfold: serving %s tables on %s (API under /api/)\n", n.Table("*"), base)
	if generated {
		fmt.Fprintf(env.stderr, "streamfold: generated API token; open the dashboard at %s/#token=%s\n", base, *token)
	} else {
		fmt.Fprintf(env.stderr, "streamfold: open the dashboard at %s/ (it asks for the token)\n", base)
	}
	if in != nil {
		in.announce(env.stderr, base)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return errorf(env, exitRuntime, "serve: %v", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(env.stderr, "streamfold: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return errorf(env, exitRuntime, "serve: shutdown: %v", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return errorf(env, exitRuntime, "serve: %v", err)
	}
	return exitOK
}

func serveRandom(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // cannot fail on supported platforms
	}
	return b
}

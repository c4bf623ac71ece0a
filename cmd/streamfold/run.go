package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "run", summary: "consume the event table's stream locally and run the projector (Lambda's semantics)", run: runRun})
}

const runHelp = `Usage: streamfold run [flags]

Reads the event table's DynamoDB stream with the semantics of Lambda's event
source mapping (batch size and window, partial batch responses, retries,
bisection, parent shards before children, checkpoints per shard in the
checkpoints table) and hands each batch to the projector through the same
handler code the Lambda function runs.

A record that still fails after --max-retries goes to the dead-letter table
(see "streamfold deadletter"); poison records go there at once. Progress and
lag are printed on standard error once a second (lag is now minus the last
record's ApproximateCreationDateTime, which DynamoDB Local truncates to the
minute); a JSON summary is printed on standard output at the end.

With --until-caught-up it exits once every shard is drained; otherwise it
runs until interrupted (Ctrl-C stops cleanly after the current batch).

Example:
  streamfold run --until-caught-up --batch-size 1000

Flags:
`

type runSummary struct {
	streamrun.Stats
	Seconds    float64 `json:"seconds"`
	DeadLetter string  `json:"deadLetterTable"`
}

// projectorStack is the projector wired to one set of tables.
type projectorStack struct {
	handler *projector.Handler
	dl      *projector.DeadLetters
	store   *projector.DynamoStore
	streams string // the event table's stream ARN
}

func newProjectorStack(ctx context.Context, c *awsclient.Clients, n schema.Naming, log *slog.Logger) (*projectorStack, error) {
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		return nil, err
	}
	p, err := projector.New(store, projector.Config{})
	if err != nil {
		return nil, err
	}
	dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	d, err := c.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n.Table(schema.TableEvents))})
	if err != nil {
		return nil, fmt.Errorf("describe event table %s: %w", n.Table(schema.TableEvents), err)
	}
	arn := aws.ToString(d.Table.LatestStreamArn)
	if arn == "" {
		return nil, fmt.Errorf("event table %s has no stream", n.Table(schema.TableEvents))
	}
	return &projectorStack{handler: projector.NewHandler(p, dl, projector.HandlerConfig{}, log), dl: dl, store: store, streams: arn}, nil
}

func runRun(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	cfg := streamrun.Config{Consumer: "projector"}
	fs.IntVar(&cfg.BatchSize, "batch-size", 100, "records per batch (1-10000), like the event source mapping's BatchSize")
	fs.DurationVar(&cfg.BatchWindow, "batch-window", 0, "wait up to this long to fill a batch (0-300s)")
	fs.IntVar(&cfg.MaxRetryAttempts, "max-retries", 3, "attempts per batch before the failing record is dead-lettered")
	fs.BoolVar(&cfg.BisectOnError, "bisect", true, "split a failing batch in halves to isolate the bad record")
	fs.BoolVar(&cfg.UntilCaughtUp, "until-caught-up", false, "exit once every shard is drained")
	fs.StringVar(&cfg.Consumer, "consumer", "projector", "checkpoint name of this consumer")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	verbose := fs.Bool("v", false, "log every batch (JSON lines on standard error)")
	fs.Usage = func() { fmt.Fprint(env.stderr, runHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "run: %v", err)
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	stack, err := newProjectorStack(ctx, clients, n, log)
	if err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	cfg.StreamARN = stack.streams
	cfg.Logger = log
	cfg.OnPoison = stack.dl.OnPoison(cfg.Consumer)
	if !*quiet {
		cfg.Progress = func(s streamrun.Stats) {
			fmt.Fprintf(env.stderr, "run: %d records in %d batches, lag %dms, shards %d open %d done, retries %d, dead-lettered %d\n",
				s.Records, s.Batches, s.LagMillis, s.ShardsOpen, s.ShardsDone, s.Retries, s.Poisoned)
		}
	}
	r, err := streamrun.New(clients.Streams, streamrun.NewDynamoCheckpoints(clients.DynamoDB, n.Table(schema.TableCheckpoints)), stack.handler.Handle, cfg)
	if err != nil {
		return errorf(env, exitUsage, "run: %v", err)
	}
	began := time.Now()
	runErr := r.Run(ctx)
	sum := runSummary{Stats: r.Stats(), Seconds: time.Since(began).Seconds(), DeadLetter: n.Table(schema.TableDeadLetters)}
	if err := writeJSON(env.stdout, sum); err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	if runErr != nil {
		return errorf(env, exitRuntime, "run: %v", runErr)
	}
	return exitOK
}

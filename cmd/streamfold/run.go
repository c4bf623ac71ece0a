package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "run", summary: "consume the event table's stream locally: project it and archive it (Lambda's semantics)", run: runRun})
}

const runHelp = `Usage: streamfold run [flags]

Reads the event table's DynamoDB stream with the semantics of Lambda's event
source mapping (batch size and window, partial batch responses, retries,
bisection, parent shards before children, checkpoints per shard in the
checkpoints table) and runs the two consumers streamfold deploys to AWS, each
with its own checkpoints and the same handler code its Lambda function runs:

  projector  folds events into the projection tables (--batch-size, --batch-window)
  archiver   writes events as Parquet to S3 (--archive-uri), buffering by
             size and time through its own, larger batches
             (--archive-batch-size, --archive-batch-window); --archive=false
             turns it off

A record that still fails after --max-retries goes to the dead-letter table
under its consumer's name (see "streamfold deadletter"); poison records go
there at once (the archiver also writes them under the archive's errors/
prefix). Progress and lag are printed on standard error once a second (lag is
now minus the last record's ApproximateCreationDateTime, which DynamoDB Local
truncates to the minute); a JSON summary is printed on standard output at the
end.

With --until-caught-up it exits once every shard is drained for both
consumers; otherwise it runs until interrupted (Ctrl-C stops cleanly after the
current batches).

Examples:
  streamfold run --until-caught-up --batch-size 1000
  streamfold run --archive-uri s3://my-bucket/archive --archive-batch-window 30s
  streamfold run --archive=false

Flags:
`

// consumerSummary is one consumer's part of run's JSON summary.
type consumerSummary struct {
	streamrun.Stats
	Consumer string `json:"consumer"`
	Error    string `json:"error,omitempty"`
}

type runSummary struct {
	Projector  consumerSummary  `json:"projector"`
	Archiver   *consumerSummary `json:"archiver,omitempty"`
	ArchiveURI string           `json:"archiveUri,omitempty"`
	Seconds    float64          `json:"seconds"`
	DeadLetter string           `json:"deadLetterTable"`
}

// projectorStack is the projector wired to one set of tables; its handler
// dead-letters poison records under consumer.
type projectorStack struct {
	handler *projector.Handler
	dl      *projector.DeadLetters
	store   *projector.DynamoStore
	streams string // the event table's stream ARN
}

func newProjectorStack(ctx context.Context, c *awsclient.Clients, n schema.Naming, consumer string, log *slog.Logger) (*projectorStack, error) {
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
	return &projectorStack{handler: projector.NewHandler(p, dl, projector.HandlerConfig{Consumer: consumer}, log), dl: dl, store: store, streams: arn}, nil
}

func runRun(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	cfg := streamrun.Config{Consumer: "projector"}
	fs.IntVar(&cfg.BatchSize, "batch-size", 100, "projector: records per batch (1-10000), like the event source mapping's BatchSize")
	fs.DurationVar(&cfg.BatchWindow, "batch-window", 0, "projector: wait up to this long to fill a batch (0-300s)")
	fs.IntVar(&cfg.MaxRetryAttempts, "max-retries", 3, "attempts per batch before the failing record is dead-lettered")
	fs.BoolVar(&cfg.BisectOnError, "bisect", true, "split a failing batch in halves to isolate the bad record")
	fs.BoolVar(&cfg.UntilCaughtUp, "until-caught-up", false, "exit once every shard is drained")
	fs.StringVar(&cfg.Consumer, "consumer", "projector", "checkpoint name of the projector consumer")
	archive := fs.Bool("archive", true, "also run the archiver consumer (Parquet on S3)")
	archiveURI := fs.String("archive-uri", "", "where the archive goes, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	acfg := streamrun.Config{Consumer: "archiver"}
	fs.IntVar(&acfg.BatchSize, "archive-batch-size", 5000, "archiver: records per batch, i.e. per Parquet object and day (1-10000)")
	fs.DurationVar(&acfg.BatchWindow, "archive-batch-window", 2*time.Second, "archiver: buffer up to this long to fill a batch (0-300s)")
	fs.IntVar(&acfg.MaxRetryAttempts, "archive-max-retries", streamrun.MaxMaxRetryAttempts, "archiver: attempts per failing batch; its failures are S3 outages, so it retries (with backoff) rather than skip a record, like the deployed mapping's -1")
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
	stack, err := newProjectorStack(ctx, clients, n, cfg.Consumer, log)
	if err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	checkpoints := streamrun.NewDynamoCheckpoints(clients.DynamoDB, n.Table(schema.TableCheckpoints))
	cfg.StreamARN = stack.streams
	cfg.Logger = log
	cfg.OnPoison = stack.dl.OnPoison(cfg.Consumer)
	if !*quiet {
		cfg.Progress = printProgress(env, cfg.Consumer)
	}
	proj, err := streamrun.New(clients.Streams, checkpoints, stack.handler.Handle, cfg)
	if err != nil {
		return errorf(env, exitUsage, "run: %v", err)
	}
	runs := []*consumerRun{{name: cfg.Consumer, r: proj}}
	sum := runSummary{DeadLetter: n.Table(schema.TableDeadLetters)}
	if *archive {
		a, err := openArchive(clients, n, *archiveURI)
		if err != nil {
			return errorf(env, exitUsage, "run: --archive-uri: %v", err)
		}
		sum.ArchiveURI = a.URI()
		acfg.StreamARN = stack.streams
		acfg.Logger = log
		acfg.BisectOnError = cfg.BisectOnError
		acfg.UntilCaughtUp = cfg.UntilCaughtUp
		acfg.OnPoison = stack.dl.OnPoison(acfg.Consumer)
		if !*quiet {
			acfg.Progress = printProgress(env, acfg.Consumer)
		}
		arch, err := streamrun.New(clients.Streams, checkpoints, archiver.NewHandler(a, log).Handle, acfg)
		if err != nil {
			return errorf(env, exitUsage, "run: archiver: %v", err)
		}
		runs = append(runs, &consumerRun{name: acfg.Consumer, r: arch})
	}
	began := time.Now()
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, c := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.err = c.r.Run(runCtx); c.err != nil {
				cancel() // one consumer failing stops the other: say so rather than run half a pipeline
			}
		}()
	}
	wg.Wait()
	sum.Seconds = time.Since(began).Seconds()
	sum.Projector = runs[0].summary()
	if len(runs) > 1 {
		a := runs[1].summary()
		sum.Archiver = &a
	}
	if err := writeJSON(env.stdout, sum); err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	for _, c := range runs {
		if c.err != nil && ctx.Err() == nil {
			return errorf(env, exitRuntime, "run: %s: %v", c.name, c.err)
		}
	}
	return exitOK
}

// consumerRun is one consumer's Runner and how its Run ended.
type consumerRun struct {
	name string
	r    *streamrun.Runner
	err  error
}

func (c *consumerRun) summary() consumerSummary {
	s := consumerSummary{Stats: c.r.Stats(), Consumer: c.name}
	if c.err != nil {
		s.Error = c.err.Error()
	}
	return s
}

// printProgress prints a consumer's counters (streamrun calls it once a
// second and when the consumer stops).
func printProgress(env *cliEnv, consumer string) func(streamrun.Stats) {
	return func(s streamrun.Stats) {
		fmt.Fprintf(env.stderr, "run: %-9s %d records in %d batches, lag %dms, shards %d open %d done, retries %d, dead-lettered %d\n",
			consumer, s.Records, s.Batches, s.LagMillis, s.ShardsOpen, s.ShardsDone, s.Retries, s.Poisoned)
	}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
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
under its consumer's name (see "streamfold deadletter"); the projector's
poison records go there at once, the archiver's under the archive's errors/
prefix ("streamfold archive errors"). "dead-lettered" in the progress and
the summary counts every record a consumer quarantined in this run, either
way, each once. If the archive is gone (its bucket, or the table metadata
its catalog points at), run stops with an error naming the table and what
is missing (exit 3) instead of retrying. Progress is printed on standard error when it moves (at most once a
second): records, batches, shards and the lag, now minus the last record's
ApproximateCreationDateTime (on DynamoDB Local only approximate: it rounds
those times down to the minute, and says so); a summary is printed on standard output at the end
(--json: as JSON).

The summary says what each consumer's DynamoDB calls cost: the capacity units
DynamoDB reported for them (ReturnConsumedCapacity, on DynamoDB Local too:
it applies AWS's rules), per table and per record, and the on-demand price
per million records (us-east-1, Standard table class, prices of 2024-11-01).
Each consumer counts its own calls: its projection writes and reads, its
checkpoints and its dead letters; stream reads cost no capacity units. In
--json, each consumer has
  "consumedCapacity": {"writeUnits", "readUnits",
    "perRecord": {"write", "read", "dollarsPerMillion"},
    "byTable": {LOGICAL-TABLE: {"writeUnits", "readUnits", "indexes"}},
    "byOperation": {OPERATION: {"writeUnits", "readUnits", "calls", "failed"}},
    "dollars"}
A failed call (a conditional write that lost, a cancelled transaction)
reports no capacity and is counted under "failed"; AWS bills it all the
same (see docs/cost.md).

Where a shard without a checkpoint starts is --starting-position, like an
event source mapping's StartingPosition: trim_horizon (the default: its
oldest record) or latest (after its newest: what it holds is skipped). latest
applies to the shards the stream has when run starts whose parent the
consumer has not read either; a shard that appears later (after a rollover)
starts at its oldest record, so nothing written after the start is skipped.
Until a record of a shard is handed over, the shard has no checkpoint, so
another run with latest skips again.

Gaps, records a consumer may have missed, are noticed where they happen,
logged (a warning with "gap" in the message and the consumer, shard and
kind) and recorded in the checkpoints table, where reconcile reads them:
latest (a shard started at LATEST held records: from the first of them to
the start), trimmed (records gone from the stream before they were read, a
checkpoint older than the 24 h retention, a shard that vanished), seqjump (a
checkpoint moved past records never handed over: its sequence number is past
the one run saved) and discarded (a record dead-lettered after
--max-retries). Each consumer also writes a heartbeat per shard (the last
record, its lag, the records since the previous heartbeat) at its first
batch, then at most once per --heartbeat-interval (while idle too, lag 0),
and when it stops: one small PutItem each, counted in the summary's
checkpoints table.

With --until-caught-up it exits once every shard is drained for both
consumers; otherwise it runs until interrupted (Ctrl-C stops cleanly after the
current batches).

Examples:
  streamfold run --until-caught-up --batch-size 1000
  streamfold run --archive-uri s3://my-bucket/archive --archive-batch-window 30s
  streamfold run --archive=false
  streamfold run --starting-position latest --consumer projector-new --archive=false
  streamfold run --until-caught-up --json | jq .projector.consumedCapacity.perRecord

Flags:
`

// consumerSummary is one consumer's part of run's JSON summary.
type consumerSummary struct {
	streamrun.Stats
	Consumer string `json:"consumer"`
	// Quarantined counts the distinct records the consumer quarantined in
	// this run: poison records (the projector's in the dead-letter table,
	// the archiver's under the archive's errors/ prefix) and records that
	// exhausted their retries (Stats.Poisoned, in the dead-letter table). A
	// record quarantined again on a retry counts once. The summary's
	// "dead-lettered" is this number.
	Quarantined int64  `json:"quarantined"`
	Error       string `json:"error,omitempty"`
	// ConsumedCapacity is what the consumer's DynamoDB calls consumed,
	// with perRecord over Stats.Records.
	ConsumedCapacity capacity.Snapshot `json:"consumedCapacity"`
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

// newProjectorStack wires the projector to n's tables through ddb (a
// metered client, for run, so that its calls count to the projector);
// tally, when not nil, counts the records its handler dead-letters.
// watch, when not nil, is handed each batch (deadletter redrive: the
// batches it marks as redriven); nil under run, whose runner notices gaps
// itself.
func newProjectorStack(ctx context.Context, ddb *dynamodb.Client, n schema.Naming, pcfg projector.Config, consumer string, tally *quarantineTally, watch *opswatch.Watch, log *slog.Logger) (*projectorStack, error) {
	store, err := projector.NewDynamoStore(ddb, n)
	if err != nil {
		return nil, err
	}
	p, err := projector.New(store, pcfg)
	if err != nil {
		return nil, err
	}
	dl := projector.NewDeadLetters(ddb, n.Table(schema.TableDeadLetters))
	d, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n.Table(schema.TableEvents))})
	if err != nil {
		return nil, fmt.Errorf("describe event table %s: %w", n.Table(schema.TableEvents), err)
	}
	arn := aws.ToString(d.Table.LatestStreamArn)
	if arn == "" {
		return nil, fmt.Errorf("event table %s has no stream", n.Table(schema.TableEvents))
	}
	var put deadletter.Putter = dl
	if tally != nil {
		put = tally.putter(dl)
	}
	return &projectorStack{handler: projector.NewHandler(p, put, projector.HandlerConfig{Consumer: consumer, Watch: watch}, log), dl: dl, store: store, streams: arn}, nil
}

// quarantineTally counts the distinct stream records (by position, the
// sequence number and eventID) a consumer quarantined: a record quarantined
// again, on a retry of its batch, counts once.
type quarantineTally struct {
	mu   sync.Mutex
	seen map[string]bool
}

func newQuarantineTally() *quarantineTally { return &quarantineTally{seen: map[string]bool{}} }

// note counts rec.
func (q *quarantineTally) note(rec events.DynamoDBEventRecord) {
	q.noteAt(rec.Change.SequenceNumber, rec.EventID)
}

// noteAt counts the record at this position.
func (q *quarantineTally) noteAt(seq, eventID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seen[deadletter.Position(seq, eventID)] = true
}

// n is how many records were counted.
func (q *quarantineTally) n() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(len(q.seen))
}

// putter counts every dead letter put stores.
func (q *quarantineTally) putter(put deadletter.Putter) deadletter.Putter {
	return tallyPutter{put: put, q: q}
}

// onPoison counts every record fn (a streamrun OnPoison) stored.
func (q *quarantineTally) onPoison(fn func(context.Context, events.DynamoDBEventRecord, error) error) func(context.Context, events.DynamoDBEventRecord, error) error {
	return func(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
		if err := fn(ctx, rec, cause); err != nil {
			return err
		}
		q.note(rec)
		return nil
	}
}

type tallyPutter struct {
	put deadletter.Putter
	q   *quarantineTally
}

func (t tallyPutter) Put(ctx context.Context, d deadletter.Letter) error {
	if err := t.put.Put(ctx, d); err != nil {
		return err
	}
	t.q.noteAt(d.SequenceNumber, d.EventID)
	return nil
}

// stopOnPermanent is a streamrun handler running process (a handler that
// also returns why a batch failed): a permanent cause (streamrun.IsPermanent,
// such as an archive that is gone) is returned, so that the runner stops with it
// rather than retry what no retry can fix; any other failure is only the
// response's, retried as Lambda would.
func stopOnPermanent(process streamrun.Handler) streamrun.Handler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		resp, err := process(ctx, ev)
		if streamrun.IsPermanent(err) {
			return resp, err
		}
		return resp, nil
	}
}

// progressWith prints a consumer's progress with its dead-lettered count
// taken from tally (every record quarantined, not only those that exhausted
// their retries).
func progressWith(print func(streamrun.Stats), tally *quarantineTally) func(streamrun.Stats) {
	return func(s streamrun.Stats) {
		s.Poisoned = tally.n()
		print(s)
	}
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
	fs.StringVar(&cfg.StartingPosition, "starting-position", streamrun.TrimHorizon, "where a shard without a checkpoint starts, for both consumers: trim_horizon (its oldest record) or latest (skip what it holds, recorded as a gap), like an event source mapping's StartingPosition")
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", streamrun.DefaultHeartbeatInterval, "least time between two heartbeats (lag, records) of a consumer on a shard, in the checkpoints table")
	archive := fs.Bool("archive", true, "also run the archiver consumer (Parquet on S3)")
	archiveURI := fs.String("archive-uri", "", "where the archive goes, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	acfg := streamrun.Config{Consumer: "archiver"}
	fs.IntVar(&acfg.BatchSize, "archive-batch-size", 5000, "archiver: records per batch, i.e. per Parquet object and day (1-10000)")
	fs.DurationVar(&acfg.BatchWindow, "archive-batch-window", 2*time.Second, "archiver: buffer up to this long to fill a batch (0-300s)")
	fs.IntVar(&acfg.MaxRetryAttempts, "archive-max-retries", streamrun.MaxMaxRetryAttempts, "archiver: attempts per failing batch; its failures are S3 outages, so it retries (with backoff) rather than skip a record, like the deployed mapping's -1")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	verbose := fs.Bool("v", false, "log every batch (JSON lines on standard error)")
	asJSON := fs.Bool("json", false, "print the summary as JSON (with each consumer's consumedCapacity)")
	fs.Usage = func() { fmt.Fprint(env.stderr, runHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	switch {
	case cfg.StartingPosition != streamrun.TrimHorizon && cfg.StartingPosition != streamrun.Latest:
		return errorf(env, exitUsage, "run: --starting-position: must be %s or %s, got %q", streamrun.TrimHorizon, streamrun.Latest, cfg.StartingPosition)
	case cfg.HeartbeatInterval <= 0:
		return errorf(env, exitUsage, "run: --heartbeat-interval: must be positive, got %s", cfg.HeartbeatInterval)
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
	// Each consumer has its own metered client: its projections, checkpoints
	// and dead letters count to it.
	projMeter := capacity.NewMeter()
	projDDB := clients.MeteredDynamoDB(projMeter)
	projTally := newQuarantineTally()
	shards, err := g.gsiShards()
	if err != nil {
		return errorf(env, exitUsage, "run: %v", err)
	}
	stack, err := newProjectorStack(ctx, projDDB, n, projector.Config{GSIShards: shards}, cfg.Consumer, projTally, nil, log)
	if err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	checkpoints := streamrun.NewDynamoCheckpoints(projDDB, n.Table(schema.TableCheckpoints))
	cfg.StreamARN = stack.streams
	cfg.Ops = opsrec.Store{API: projDDB, Table: n.Table(schema.TableCheckpoints)}
	cfg.Logger = log
	cfg.OnPoison = projTally.onPoison(stack.dl.OnPoison(cfg.Consumer))
	if !*quiet {
		cfg.Progress = progressWith(printProgress(env, cfg.Consumer, g.DynamoDBEndpoint != ""), projTally)
	}
	proj, err := streamrun.New(clients.Streams, checkpoints, stack.handler.Handle, cfg)
	if err != nil {
		return errorf(env, exitUsage, "run: %v", err)
	}
	runs := []*consumerRun{{name: cfg.Consumer, r: proj, meter: projMeter, tally: projTally}}
	sum := runSummary{DeadLetter: n.Table(schema.TableDeadLetters)}
	if *archive {
		a, err := g.openArchive(clients, n, *archiveURI)
		if err != nil {
			return errorf(env, exitUsage, "run: --archive-uri: %v", err)
		}
		defer a.Close()
		sum.ArchiveURI = a.URI()
		archMeter := capacity.NewMeter()
		archDDB := clients.MeteredDynamoDB(archMeter)
		acfg.StreamARN = stack.streams
		acfg.Logger = log
		acfg.BisectOnError = cfg.BisectOnError
		acfg.UntilCaughtUp = cfg.UntilCaughtUp
		acfg.StartingPosition = cfg.StartingPosition
		acfg.HeartbeatInterval = cfg.HeartbeatInterval
		acfg.Ops = opsrec.Store{API: archDDB, Table: n.Table(schema.TableCheckpoints)}
		archTally := newQuarantineTally()
		acfg.OnPoison = archTally.onPoison(projector.NewDeadLetters(archDDB, n.Table(schema.TableDeadLetters)).OnPoison(acfg.Consumer))
		if !*quiet {
			acfg.Progress = progressWith(printProgress(env, acfg.Consumer, g.DynamoDBEndpoint != ""), archTally)
		}
		archCheckpoints := streamrun.NewDynamoCheckpoints(archDDB, n.Table(schema.TableCheckpoints))
		// The archive being gone (its bucket, or the metadata its catalog
		// points at) stops the run with an error naming the table and the
		// location instead of a retry that cannot succeed.
		handler := archiver.NewHandler(a, log).OnQuarantine(archTally.note)
		arch, err := streamrun.New(clients.Streams, archCheckpoints, stopOnPermanent(handler.Process), acfg)
		if err != nil {
			return errorf(env, exitUsage, "run: archiver: %v", err)
		}
		runs = append(runs, &consumerRun{name: acfg.Consumer, r: arch, meter: archMeter, tally: archTally})
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
	sum.Projector = runs[0].summary(n)
	if len(runs) > 1 {
		a := runs[1].summary(n)
		sum.Archiver = &a
	}
	if *asJSON {
		err = writeJSON(env.stdout, sum)
	} else {
		err = printRunSummary(env.stdout, sum)
	}
	if err != nil {
		return errorf(env, exitRuntime, "run: %v", err)
	}
	for _, c := range runs {
		if c.err != nil && ctx.Err() == nil {
			return errorf(env, exitRuntime, "run: %s: %v", c.name, c.err)
		}
	}
	return exitOK
}

// consumerRun is one consumer's Runner, its meter and how its Run ended.
type consumerRun struct {
	name  string
	r     *streamrun.Runner
	meter *capacity.Meter
	tally *quarantineTally
	err   error
}

// summary is the consumer's part of run's summary; its consumed capacity
// is keyed by logical table name (n's prefix removed).
func (c *consumerRun) summary(n schema.Naming) consumerSummary {
	s := consumerSummary{Stats: c.r.Stats(), Consumer: c.name, Quarantined: c.tally.n()}
	s.ConsumedCapacity = c.meter.Snapshot().ForRecords(s.Records).TrimTablePrefix(n.Table(""))
	if c.err != nil {
		s.Error = c.err.Error()
	}
	return s
}

// printRunSummary prints run's summary for people: per consumer what it
// handled, what its DynamoDB calls consumed per record and in all, and
// what that costs per million records on demand.
func printRunSummary(w io.Writer, sum runSummary) error {
	var b strings.Builder
	consumers := []consumerSummary{sum.Projector}
	if sum.Archiver != nil {
		consumers = append(consumers, *sum.Archiver)
	}
	for _, c := range consumers {
		fmt.Fprintf(&b, "%-9s  %d records in %d batches, %d retries, %d dead-lettered", c.Consumer, c.Records, c.Batches, c.Retries, c.Quarantined)
		if c.Gaps > 0 {
			fmt.Fprintf(&b, ", %d gaps noticed (see the log; recorded in the checkpoints table)", c.Gaps)
		}
		if c.Error != "" {
			fmt.Fprintf(&b, ", stopped: %s", c.Error)
		}
		b.WriteString("\n")
		c.ConsumedCapacity.WriteText(&b, "           ", "record", c.ConsumedCapacity.PerRecord)
	}
	fmt.Fprintf(&b, "prices: %s: $%g per million write units, $%g per million read units\n",
		capacity.PriceNote, capacity.WriteRequestUnitPrice, capacity.ReadRequestUnitPrice)
	fmt.Fprintf(&b, "%.1fs; dead letters in %s", sum.Seconds, sum.DeadLetter)
	if sum.ArchiveURI != "" {
		fmt.Fprintf(&b, "; archive %s", sum.ArchiveURI)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// printProgress prints a consumer's counters when they moved (streamrun
// calls it once a second and when the consumer stops): the first report,
// then one line per change, never the same line twice. approx says the lag
// is only as precise as DynamoDB Local's minute-rounded record times.
func printProgress(env *cliEnv, consumer string, approx bool) func(streamrun.Stats) {
	var mu sync.Mutex
	var last *streamrun.Stats
	return func(s streamrun.Stats) {
		mu.Lock()
		defer mu.Unlock()
		moved := last == nil
		if last != nil {
			prev, cur := *last, s
			prev.LagMillis, cur.LagMillis = 0, 0
			moved = prev != cur
		}
		if !moved {
			return
		}
		last = &s
		lag := fmt.Sprintf("lag %.1fs", float64(s.LagMillis)/1000)
		if approx {
			lag = fmt.Sprintf("lag ~%ds (approximate: DynamoDB Local rounds record times down to the minute)", (s.LagMillis+500)/1000)
		}
		fmt.Fprintf(env.stderr, "run: %-9s %d records in %d batches, %s, shards %d open %d done, retries %d, dead-lettered %d\n",
			consumer, s.Records, s.Batches, lag, s.ShardsOpen, s.ShardsDone, s.Retries, s.Poisoned)
	}
}

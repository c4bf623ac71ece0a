// Package localrun provides the consumers' workflow of "streamfold run":
// read the event table's DynamoDB stream with the semantics of Lambda's
// event source mapping (internal/laptop/streamrun) and run the two
// consumers streamfold deploys to AWS, each with its own checkpoints,
// metered DynamoDB client and dead letters, and the same handler code its
// Lambda function runs: the projector (projection tables) and, when an
// archive is given, the archiver (Parquet on S3).
//
// Options.Configs is the plan: the runner configuration of each consumer,
// a pure value. Run wires and runs it and returns a Result (per consumer:
// what it handled, quarantined and what its DynamoDB calls cost), which
// WriteText prints for people and encoding/json as the CLI's --json
// summary. Run is safe to repeat: consumers resume from their checkpoints.
package localrun

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// Defaults of the zero Options fields that have one.
const (
	DefaultConsumer          = "projector"
	ArchiverConsumer         = "archiver"
	DefaultArchiveBatchSize  = 5000
	DefaultArchiveMaxRetries = streamrun.MaxMaxRetryAttempts
)

// Options are one run's settings.
type Options struct {
	// Consumer is the projector's checkpoint name; empty is "projector".
	Consumer string
	// BatchSize (1-10000; zero is 100) and BatchWindow (0-300s) are the
	// projector's batches, like an event source mapping's.
	BatchSize   int
	BatchWindow time.Duration
	// MaxRetries is the projector's attempts per batch before the failing
	// record is dead-lettered (0-10000; zero is 3).
	MaxRetries int
	// Bisect splits a failing batch in halves to isolate the bad record.
	Bisect bool
	// UntilCaughtUp makes Run return once every shard is drained for both
	// consumers; otherwise it runs until ctx ends.
	UntilCaughtUp bool
	// StartingPosition is where a shard without a checkpoint starts, for
	// both consumers: streamrun.TrimHorizon (empty) or streamrun.Latest.
	StartingPosition string
	// HeartbeatInterval is the least time between two heartbeats of a
	// consumer on a shard; it must be positive (the CLI's default is
	// streamrun.DefaultHeartbeatInterval).
	HeartbeatInterval time.Duration
	// Archive, when set, is where the archiver consumer writes; nil runs
	// the projector only. The caller closes it.
	Archive *archiver.Archive
	// ArchiveBatchSize (1-10000; zero is 5000), ArchiveBatchWindow (0-300s)
	// and ArchiveMaxRetries (zero is streamrun.MaxMaxRetryAttempts: its
	// failures are S3 outages, retried rather than skipped) are the
	// archiver's.
	ArchiveBatchSize   int
	ArchiveBatchWindow time.Duration
	ArchiveMaxRetries  int
	// GSIShards is the deployment's write sharding (0: off).
	GSIShards int
	// Logger logs gaps, failures and (at Info) every batch; nil is
	// slog.Default().
	Logger *slog.Logger
	// Progress, when set, is called with a consumer's counters at most
	// once a second and when it stops; Stats.Poisoned is every record the
	// consumer quarantined in this run (Result's Quarantined).
	Progress func(consumer string, s streamrun.Stats)
}

// Validate checks the options; its errors name the field at fault.
func (o *Options) Validate() error {
	if o.StartingPosition != "" && o.StartingPosition != streamrun.TrimHorizon && o.StartingPosition != streamrun.Latest {
		return toolkit.Invalid("run", "StartingPosition", nil, fmt.Sprintf("must be %s or %s, got %q", streamrun.TrimHorizon, streamrun.Latest, o.StartingPosition))
	}
	if o.HeartbeatInterval <= 0 {
		return toolkit.Invalid("run", "HeartbeatInterval", nil, fmt.Sprintf("must be positive, got %s", o.HeartbeatInterval))
	}
	if o.GSIShards < 0 {
		return toolkit.Invalid("run", "GSIShards", nil, fmt.Sprintf("must not be negative, got %d", o.GSIShards))
	}
	for i, c := range o.Configs() {
		c.StreamARN = "validate"
		c.OnPoison = func(context.Context, events.DynamoDBEventRecord, error) error { return nil }
		c.SetDefaults()
		if err := c.Validate(); err != nil {
			return toolkit.Invalid("run", []string{"Projector", "Archiver"}[i], err, "")
		}
	}
	return nil
}

// Configs is the plan: the runner configuration of the projector and,
// with an archive, of the archiver, without their wiring (stream, handler,
// checkpoints, dead letters, logger and progress, which Run adds).
func (o Options) Configs() []streamrun.Config {
	proj := streamrun.Config{
		Consumer: o.Consumer, BatchSize: o.BatchSize, BatchWindow: o.BatchWindow, MaxRetryAttempts: o.MaxRetries,
		BisectOnError: o.Bisect, UntilCaughtUp: o.UntilCaughtUp, StartingPosition: o.StartingPosition, HeartbeatInterval: o.HeartbeatInterval,
	}
	if proj.Consumer == "" {
		proj.Consumer = DefaultConsumer
	}
	if proj.StartingPosition == "" {
		proj.StartingPosition = streamrun.TrimHorizon
	}
	if o.Archive == nil {
		return []streamrun.Config{proj}
	}
	arch := proj
	arch.Consumer, arch.BatchSize, arch.BatchWindow, arch.MaxRetryAttempts = ArchiverConsumer, o.ArchiveBatchSize, o.ArchiveBatchWindow, o.ArchiveMaxRetries
	if arch.BatchSize == 0 {
		arch.BatchSize = DefaultArchiveBatchSize
	}
	if arch.MaxRetryAttempts == 0 {
		arch.MaxRetryAttempts = DefaultArchiveMaxRetries
	}
	return []streamrun.Config{proj, arch}
}

// consumerRun is one consumer's Runner, its meter and tally, and how its
// Run ended.
type consumerRun struct {
	name  string
	r     *streamrun.Runner
	meter *capacity.Meter
	tally *QuarantineTally
	err   error
}

// Run runs the consumers of o.Configs on n's tables through c until ctx
// ends or, with UntilCaughtUp, every shard is drained. One consumer
// failing stops the other. The result is set whenever the consumers ran;
// the error is then the first consumer's failure (not ctx's end).
func Run(ctx context.Context, c *awsclient.Clients, n schema.Naming, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	res := &Result{DeadLetter: n.Table(schema.TableDeadLetters)}
	var runs []*consumerRun
	var arn string
	for i, cfg := range o.Configs() {
		// Each consumer has its own metered client: its projections,
		// checkpoints and dead letters count to it.
		cr := &consumerRun{name: cfg.Consumer, meter: capacity.NewMeter(), tally: NewQuarantineTally()}
		ddb := c.MeteredDynamoDB(cr.meter)
		dl := projector.NewDeadLetters(ddb, n.Table(schema.TableDeadLetters))
		var handler streamrun.Handler
		if i == 0 { // the projector; Configs puts the archiver second
			stack, err := NewProjector(ctx, ddb, n, projector.Config{GSIShards: o.GSIShards}, cfg.Consumer, cr.tally, nil, log)
			if err != nil {
				return nil, err
			}
			arn, handler, dl = stack.StreamARN, stack.Handler.Handle, stack.DeadLetters
		} else {
			// The archive being gone (its bucket, or the metadata its
			// catalog points at) stops the run with an error naming the
			// table and the location instead of a retry that cannot succeed.
			res.ArchiveURI = o.Archive.URI()
			handler = StopOnPermanent(archiver.NewHandler(o.Archive, log).OnQuarantine(cr.tally.Note).Process)
		}
		cfg.StreamARN, cfg.Logger = arn, log
		cfg.Ops = opsrec.Store{API: ddb, Table: n.Table(schema.TableCheckpoints)}
		cfg.OnPoison = cr.tally.OnPoison(dl.OnPoison(cfg.Consumer))
		if o.Progress != nil {
			consumer, tally := cfg.Consumer, cr.tally
			cfg.Progress = func(s streamrun.Stats) {
				s.Poisoned = tally.N()
				o.Progress(consumer, s)
			}
		}
		r, err := streamrun.New(c.Streams, streamrun.NewDynamoCheckpoints(ddb, n.Table(schema.TableCheckpoints)), handler, cfg)
		if err != nil {
			return nil, toolkit.Invalid("run", cfg.Consumer, err, "")
		}
		cr.r = r
		runs = append(runs, cr)
	}
	began := time.Now()
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, cr := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cr.err = cr.r.Run(runCtx); cr.err != nil {
				cancel() // one consumer failing stops the other: say so rather than run half a pipeline
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(began).Seconds()
	var sums []ConsumerSummary
	var err error
	for _, cr := range runs {
		s := cr.summary(n)
		sums = append(sums, s)
		if cr.err != nil && ctx.Err() == nil && err == nil {
			err = fmt.Errorf("%s: %w", s.Consumer, cr.err)
		}
	}
	res.Projector = sums[0]
	if len(sums) > 1 {
		res.Archiver = &sums[1]
	}
	return res, err
}

// summary is the consumer's part of the result; its consumed capacity is
// keyed by logical table name (n's prefix removed).
func (c *consumerRun) summary(n schema.Naming) ConsumerSummary {
	s := ConsumerSummary{Stats: c.r.Stats(), Consumer: c.name, Quarantined: c.tally.N()}
	s.ConsumedCapacity = c.meter.Snapshot().ForRecords(s.Records).TrimTablePrefix(n.Table(""))
	if c.err != nil {
		s.Error = c.err.Error()
	}
	return s
}

package streamrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/opsrec"
)

// Handler is the signature of a Lambda function subscribed to a DynamoDB
// stream with ReportBatchItemFailures on: the same function can run in
// Lambda and under a Runner.
type Handler func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Limits and defaults, the same as Lambda's event source mapping where it
// has one.
const (
	DefaultBatchSize        = 100
	MaxBatchSize            = 10000
	MaxBatchWindow          = 300 * time.Second
	DefaultMaxRetryAttempts = 3
	MaxMaxRetryAttempts     = 10000
	DefaultPollInterval     = 250 * time.Millisecond
	DefaultDescribeInterval = 10 * time.Second
	DefaultRegion           = "us-east-1"
	// DefaultHeartbeatInterval is the least time between two heartbeats
	// (opsrec.Progress) of a shard.
	DefaultHeartbeatInterval = time.Minute
)

// Starting positions of a shard without a checkpoint (Config.StartingPosition),
// as an event source mapping's StartingPosition.
const (
	TrimHorizon = "trim_horizon"
	Latest      = "latest"
)

// OpsStore records the gaps a Runner notices and its heartbeats in the
// checkpoints table; opsrec.Store satisfies it. Progresses is read once,
// when Run starts, and only if a checkpoint was not saved by a Runner
// (to tell whether it was moved past records never handed over).
type OpsStore interface {
	PutGap(ctx context.Context, g opsrec.Gap) error
	PutProgress(ctx context.Context, p opsrec.Progress) error
	Progresses(ctx context.Context) ([]opsrec.Progress, error)
}

// Config configures a Runner.
type Config struct {
	// StreamARN is the stream to read. Required.
	StreamARN string
	// Consumer names this reader; checkpoints are kept per consumer and
	// shard. Two Runners must not run with the same Consumer at once.
	// Required.
	Consumer string
	// BatchSize is the most records handed to the handler at once,
	// 1..10000. Default 100.
	BatchSize int
	// BatchWindow is how long to keep reading to fill a batch, 0..300s.
	// 0 (the default) hands over what one GetRecords call returned.
	BatchWindow time.Duration
	// MaxRetryAttempts is how often a failing batch is retried after its
	// first attempt before its lowest failing record goes to OnPoison,
	// 0..10000; 0 means the default, 3. A retry that makes progress (a
	// partial batch response checkpoints some records) starts a new count
	// for the rest, and so does each half of a bisected batch.
	MaxRetryAttempts int
	// BisectOnError splits a batch whose handler returned an error into
	// halves and retries each (BisectBatchOnFunctionError).
	BisectOnError bool
	// PollInterval is the pause between GetRecords calls when a shard is at
	// its tip. Default 250ms.
	PollInterval time.Duration
	// DescribeInterval is how often the stream is described to discover
	// new shards. Default 10s.
	DescribeInterval time.Duration
	// UntilCaughtUp makes Run return nil once every shard is drained:
	// closed shards fully read, open ones returned no records twice in a
	// row.
	UntilCaughtUp bool
	// StartingPosition is where a shard without a checkpoint starts:
	// TrimHorizon (the default: its oldest record) or Latest (after its
	// newest record, skipping what it holds, as an event source mapping
	// created at LATEST). Latest applies only to the shards of the
	// stream's first description in a Run whose parent the consumer has no
	// checkpoint for either; a shard that appears later (a child after a
	// rollover) starts at TRIM_HORIZON, so nothing written after the start
	// is skipped. A shard started at LATEST that held records is a gap
	// (opsrec.GapLatest).
	StartingPosition string
	// Ops, when set, records the gaps the Runner notices (opsrec.Gap: a
	// shard started at LATEST, records trimmed before they were read, a
	// checkpoint moved past records never handed over, records given to
	// OnPoison) and each shard's heartbeats (opsrec.Progress). Every gap is
	// also logged ("gap" in the message, with the consumer, shard and
	// kind), with or without Ops.
	Ops OpsStore
	// HeartbeatInterval is the least time between two heartbeats of a
	// shard (Ops): one when the shard's first batch is handed over, then at
	// most one per interval (while idle at the shard's tip too, with lag
	// 0), and a last one when the shard's reading stops if records were
	// handed over since. Default 1 min.
	HeartbeatInterval time.Duration
	// Region is copied into every record's awsRegion. Default us-east-1.
	Region string
	// OnPoison receives a record that exhausted its retries (or could not
	// be converted), with the last cause: the Delivery's OnFailure, Lambda's
	// on-failure destination. It should store it: a deadletter.Sink's
	// Quarantine, such as deadletter.Table.OnPoison(consumer) (the
	// dead-letter table, reason "retries-exhausted"). If it returns an
	// error the Runner stops with it and the record is not checkpointed.
	// Required.
	OnPoison func(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error
	// Progress, when set, is called with the statistics at most once a
	// second and once when Run returns.
	Progress func(Stats)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxRetryAttempts == 0 {
		c.MaxRetryAttempts = DefaultMaxRetryAttempts
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.DescribeInterval == 0 {
		c.DescribeInterval = DefaultDescribeInterval
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.StartingPosition == "" {
		c.StartingPosition = TrimHorizon
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.StreamARN == "":
		return errors.New("streamrun: Config.StreamARN: is required")
	case c.Consumer == "":
		return errors.New("streamrun: Config.Consumer: is required")
	case opsrec.IsReserved(c.Consumer):
		return fmt.Errorf("streamrun: Config.Consumer: %q is reserved for the operations records (prefix \"ops#\")", c.Consumer)
	case c.StartingPosition != TrimHorizon && c.StartingPosition != Latest:
		return fmt.Errorf("streamrun: Config.StartingPosition: must be %s or %s, got %q", TrimHorizon, Latest, c.StartingPosition)
	case c.HeartbeatInterval <= 0:
		return fmt.Errorf("streamrun: Config.HeartbeatInterval: must be positive, got %s", c.HeartbeatInterval)
	case c.BatchSize < 1 || c.BatchSize > MaxBatchSize:
		return fmt.Errorf("streamrun: Config.BatchSize: must be between 1 and %d, got %d", MaxBatchSize, c.BatchSize)
	case c.BatchWindow < 0 || c.BatchWindow > MaxBatchWindow:
		return fmt.Errorf("streamrun: Config.BatchWindow: must be between 0s and %s, got %s", MaxBatchWindow, c.BatchWindow)
	case c.MaxRetryAttempts < 0 || c.MaxRetryAttempts > MaxMaxRetryAttempts:
		return fmt.Errorf("streamrun: Config.MaxRetryAttempts: must be between 0 and %d, got %d", MaxMaxRetryAttempts, c.MaxRetryAttempts)
	case c.PollInterval <= 0:
		return fmt.Errorf("streamrun: Config.PollInterval: must be positive, got %s", c.PollInterval)
	case c.DescribeInterval <= 0:
		return fmt.Errorf("streamrun: Config.DescribeInterval: must be positive, got %s", c.DescribeInterval)
	case c.OnPoison == nil:
		return errors.New("streamrun: Config.OnPoison: is required (records that exhaust their retries go there)")
	}
	return nil
}

// Stats are a Runner's counters since New.
type Stats struct {
	// Batches is the number of handler invocations, retries included.
	Batches int64 `json:"batches"`
	// Records is the number of records handed to the handler, re-sends
	// included.
	Records int64 `json:"records"`
	// Retries counts re-invocations after a failed batch (not bisections).
	Retries int64 `json:"retries"`
	// Bisections counts batches split in two after a handler error.
	Bisections int64 `json:"bisections"`
	// Poisoned counts records given to OnPoison.
	Poisoned int64 `json:"poisoned"`
	// ExpiredIterators counts ExpiredIteratorExceptions recovered from.
	ExpiredIterators int64 `json:"expiredIterators"`
	// Trimmed counts TrimmedDataAccessExceptions and vanished shards: each
	// may have lost records.
	Trimmed int64 `json:"trimmed"`
	// Gaps counts the gaps noticed (each logged, and recorded through
	// Config.Ops when set).
	Gaps int64 `json:"gaps"`
	// ShardsOpen is the number of shards in the last stream description
	// that are not fully read (being read or waiting for their parent);
	// ShardsDone those that are.
	ShardsOpen int `json:"shardsOpen"`
	ShardsDone int `json:"shardsDone"`
	// LagMillis is now - ApproximateCreationDateTime of the last record
	// handed to the handler, measured when it was handed over (Lambda's
	// IteratorAge). Its precision is that of ApproximateCreationDateTime:
	// DynamoDB Local truncates it to the minute.
	LagMillis int64 `json:"lagMillis"`
}

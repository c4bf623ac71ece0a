package streamrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
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
)

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

package streamrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// ErrRetriesExhausted is why Deliver stops when a batch still fails after
// its retries and there is no OnFailure to take its failing record.
var ErrRetriesExhausted = errors.New("streamrun: retries exhausted")

// Backoff defaults of a Delivery: the pause before the n-th retry is
// between half and all of min(DefaultRetryMax, DefaultRetryBase*2^(n-1)).
const (
	DefaultRetryBase = 100 * time.Millisecond
	DefaultRetryMax  = 10 * time.Second
)

// Delivery hands records to a Handler with the semantics of Lambda's event
// source mapping (see the package documentation, "Failures" and
// "Poison"): in batches of BatchSize, in order; a batch that fails is
// retried with backoff; a partial batch response resumes it at the lowest
// reported record; with BisectOnError a batch whose handler returned an
// error is split in halves; a batch still failing after MaxRetryAttempts
// retries gives its lowest failing record to OnFailure (the on-failure
// destination) and goes on after it. A Runner delivers every batch it reads
// with one; `streamfold deadletter redrive` delivers the records of the
// batches an event source mapping gave up on with another.
//
// A Delivery is not safe for concurrent use: one per shard.
type Delivery struct {
	// Handler receives the batches. Required.
	Handler Handler
	// BatchSize is the most records per invocation. Default
	// DefaultBatchSize.
	BatchSize int
	// MaxRetryAttempts is how often a failing batch is retried after its
	// first attempt; 0 means DefaultMaxRetryAttempts. A retry that makes
	// progress (a partial batch response) starts a new count for the rest,
	// and so does each half of a bisected batch.
	MaxRetryAttempts int
	// BisectOnError splits a batch whose handler returned an error (or
	// panicked) into halves, each retried on its own.
	BisectOnError bool
	// OnFailure receives the lowest failing record of a batch whose
	// retries are exhausted, with the last cause; Deliver then counts it
	// dealt with and goes on after it. When nil, Deliver stops there with
	// an error wrapping ErrRetriesExhausted. If it returns an error,
	// Deliver stops with it.
	OnFailure func(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error
	// Done, when set, is called in stream order with the SequenceNumber of
	// the last record of each run of records dealt with (handled, or given
	// to OnFailure): where a Runner checkpoints. If it returns an error,
	// Deliver stops with it.
	Done func(ctx context.Context, seq string) error
	// Backoff is the pause before the attempt-th retry (attempt >= 1).
	// Default: jittered exponential, DefaultRetryBase to DefaultRetryMax.
	Backoff func(attempt int) time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// Hooks of a Runner's statistics; nil when unused.
	onInvoke          func(ctx context.Context, recs []events.DynamoDBEventRecord)
	onRetry, onBisect func()
}

// Deliver hands recs (in stream order) to the handler until every one of
// them is dealt with, and returns how many were. It stops early, with the
// error, when ctx is done, when OnFailure or Done fails, when a batch
// exhausts its retries without an OnFailure (ErrRetriesExhausted), or when
// the handler returns a permanent error (a *StoppedError).
func (d *Delivery) Deliver(ctx context.Context, recs []events.DynamoDBEventRecord) (int, error) {
	size := d.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	dealt := 0
	for len(recs) > 0 {
		n := min(size, len(recs))
		got, err := d.deliver(ctx, recs[:n])
		dealt += got
		if err != nil {
			return dealt, err
		}
		recs = recs[n:]
	}
	return dealt, nil
}

// deliver hands one batch to the handler until every record of it is dealt
// with, and returns how many were.
func (d *Delivery) deliver(ctx context.Context, recs []events.DynamoDBEventRecord) (int, error) {
	log := d.logger()
	maxRetries := d.MaxRetryAttempts
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetryAttempts
	}
	dealt, failures := 0, 0
	done := func(n int) error {
		dealt += n
		if d.Done == nil {
			return nil
		}
		return d.Done(ctx, recs[n-1].Change.SequenceNumber)
	}
	for len(recs) > 0 {
		out := d.invoke(ctx, recs)
		if out.ok {
			return dealt, done(len(recs))
		}
		if ctx.Err() != nil {
			return dealt, ctx.Err()
		}
		if out.funcErr && IsPermanent(out.cause) {
			log.Error("streamrun: batch failed for a cause no retry can fix, stopping", "records", len(recs), "first", recs[0].Change.SequenceNumber, "err", out.cause)
			return dealt, &StoppedError{Seq: recs[0].Change.SequenceNumber, Err: out.cause}
		}
		if out.funcErr && d.BisectOnError && len(recs) > 1 {
			if d.onBisect != nil {
				d.onBisect()
			}
			mid := len(recs) / 2
			log.Warn("streamrun: batch failed, bisecting", "records", len(recs), "first", recs[0].Change.SequenceNumber, "err", out.cause)
			n, err := d.deliver(ctx, recs[:mid])
			dealt += n
			if err != nil {
				return dealt, err
			}
			recs, failures = recs[mid:], 0
			continue
		}
		if out.idx > 0 {
			if err := done(out.idx); err != nil {
				return dealt, err
			}
			recs, failures = recs[out.idx:], 0
		}
		failures++
		if failures > maxRetries {
			if d.OnFailure == nil {
				return dealt, fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, failures, out.cause)
			}
			if err := d.OnFailure(ctx, recs[0], out.cause); err != nil {
				return dealt, err
			}
			if err := done(1); err != nil {
				return dealt, err
			}
			recs, failures = recs[1:], 0
			continue
		}
		if d.onRetry != nil {
			d.onRetry()
		}
		pause := d.backoff(failures)
		log.Warn("streamrun: batch failed, retrying", "records", len(recs), "first", recs[0].Change.SequenceNumber,
			"attempt", failures, "in", pause, "err", out.cause)
		if err := retry.Sleep(ctx, pause); err != nil {
			return dealt, err
		}
	}
	return dealt, nil
}

// StoppedError is why Deliver stopped at a batch whose handler returned a
// permanent error: one that reports Permanent() true (errors.As), such as
// an archive that is gone. No retry can fix it, so the batch is neither
// retried, bisected nor given to OnFailure, and nothing of it is marked
// done: Lambda would retry it until its records expire; a local consumer
// stops and says why.
type StoppedError struct {
	Seq string // the batch's first SequenceNumber
	Err error
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("streamrun: stopped at record %s: %v", e.Seq, e.Err)
}

// Unwrap returns the handler's error.
func (e *StoppedError) Unwrap() error { return e.Err }

// IsPermanent reports an error that says it is permanent: one that reports
// Permanent() true (errors.As), such as an archive that is gone. Deliver
// stops at it (StoppedError); false for nil.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// outcome is the result of one handler invocation.
type outcome struct {
	ok bool
	// funcErr: the handler returned an error (the whole batch failed).
	funcErr bool
	// idx is the index in the batch of the lowest failing record.
	idx   int
	cause error
}

// invoke calls the handler once and interprets its response as Lambda
// does: no batch item failure is success; otherwise the batch resumes at
// the lowest reported SequenceNumber. An ItemIdentifier that is empty or
// not a SequenceNumber of the batch fails the whole batch (idx 0).
func (d *Delivery) invoke(ctx context.Context, recs []events.DynamoDBEventRecord) outcome {
	if d.onInvoke != nil {
		d.onInvoke(ctx, recs)
	}
	resp, err := d.call(ctx, events.DynamoDBEvent{Records: recs})
	if err != nil {
		return outcome{funcErr: true, cause: err}
	}
	if len(resp.BatchItemFailures) == 0 {
		return outcome{ok: true}
	}
	index := make(map[string]int, len(recs))
	for i, r := range recs {
		index[r.Change.SequenceNumber] = i
	}
	lowest := ""
	for _, f := range resp.BatchItemFailures {
		id := f.ItemIdentifier
		if _, ok := index[id]; !ok || id == "" {
			return outcome{cause: fmt.Errorf("streamrun: handler reported item failure %q, which is not a sequence number of the batch: whole batch failed", id)}
		}
		if lowest == "" || streamimage.CompareSeq(id, lowest) < 0 {
			lowest = id
		}
	}
	i := index[lowest]
	return outcome{idx: i, cause: fmt.Errorf("streamrun: handler reported record %s (event %s) as failed", lowest, recs[i].EventID)}
}

// call runs the handler, turning a panic into an error.
func (d *Delivery) call(ctx context.Context, ev events.DynamoDBEvent) (resp events.DynamoDBEventResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("streamrun: handler panicked: %v", p)
		}
	}()
	return d.Handler(ctx, ev)
}

func (d *Delivery) backoff(attempt int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff(attempt)
	}
	return retry.Half(DefaultRetryBase, DefaultRetryMax, attempt)
}

func (d *Delivery) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

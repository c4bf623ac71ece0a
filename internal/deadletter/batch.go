package deadletter

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// Decoder turns one stream record into what a consumer handles. It returns
// ok=false for a record the consumer skips and an error (wrapping
// ErrPoison) for a record it can never handle.
type Decoder[T any] func(rec events.DynamoDBEventRecord) (v T, ok bool, err error)

// Item is a decoded record and the stream record it came from.
type Item[T any] struct {
	Value  T
	Record events.DynamoDBEventRecord
}

// Poisoned is a record found poison, with why.
type Poisoned struct {
	Record events.DynamoDBEventRecord
	Cause  error
}

// Outcome is what a BatchFunc made of its items.
type Outcome struct {
	// Failed are records to retry: the lowest is reported, and the event
	// source mapping re-sends it and everything after it.
	Failed []events.DynamoDBEventRecord
	// Poison are records that can never be handled after all (the cause
	// should wrap ErrPoison): they are quarantined like undecodable ones.
	Poison []Poisoned
}

// BatchFunc handles the decoded records of a batch, in stream order. An
// error fails the whole batch (as a Lambda function error does).
type BatchFunc[T any] func(ctx context.Context, items []Item[T]) (Outcome, error)

// BatchStats counts what a batch held and what the loop did with it; each
// consumer adds what its BatchFunc did.
type BatchStats struct {
	Records          int // records in the batch
	SkippedNonInsert int // MODIFY and non-TTL REMOVE records, skipped
	TTLRemoves       int // TTL deletions, skipped
	Skipped          int // INSERTs the Decoder skipped (the projector: events of non-agent state machines)
	Poison           int // records quarantined in the Sink
}

// Batch is one consumer's decode-and-quarantine loop; see the package
// documentation.
type Batch[T any] struct {
	Decode Decoder[T]
	Handle BatchFunc[T]
	Sink   Sink
	// WholeBatch: the BatchFunc's work can only be redone for the whole
	// batch. Any failure reports the batch's first record, and a failed
	// quarantine of an undecodable record stops the batch before Handle.
	WholeBatch bool
	// Concurrency is how many quarantines run at once. Default 1.
	Concurrency int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Result is what became of a batch.
type Result struct {
	Stats BatchStats
	// Failed is the SequenceNumber to report as the batch item failure
	// (the event source mapping resumes there), "" when the batch
	// succeeded.
	Failed string
	// Err is why the whole batch failed: the BatchFunc's error or, with
	// WholeBatch, the first failed quarantine. Failed is then the batch's
	// first record.
	Err error
}

// Response is the partial batch response of r.
func (r Result) Response() events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	if r.Failed != "" {
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Failed}}
	}
	return resp
}

// Run decodes recs, quarantines the poison ones, hands the rest to Handle
// (when there are any) and quarantines what Handle found poison.
func (b Batch[T]) Run(ctx context.Context, recs []events.DynamoDBEventRecord) Result {
	res := Result{Stats: BatchStats{Records: len(recs)}}
	var items []Item[T]
	var poison []Poisoned
	for _, rec := range recs {
		v, ok, err := b.Decode(rec)
		switch {
		case err != nil:
			poison = append(poison, Poisoned{Record: rec, Cause: err})
		case ok:
			items = append(items, Item[T]{Value: v, Record: rec})
		case rec.EventName != string(events.DynamoDBOperationTypeInsert) && streamimage.IsTTLDelete(rec):
			res.Stats.TTLRemoves++
		case rec.EventName != string(events.DynamoDBOperationTypeInsert):
			res.Stats.SkippedNonInsert++
		default:
			res.Stats.Skipped++
		}
	}
	b.quarantine(ctx, &res, recs, poison)
	if res.Err != nil || len(items) == 0 {
		return res
	}
	out, err := b.Handle(ctx, items)
	if err != nil {
		res.Failed, res.Err = recs[0].Change.SequenceNumber, err
		return res
	}
	for _, rec := range out.Failed {
		res.fail(b.WholeBatch, recs, rec)
	}
	b.quarantine(ctx, &res, recs, out.Poison)
	return res
}

// fail makes rec (or, whole, the batch's first record) the failure to
// report if it is the lowest so far.
func (r *Result) fail(whole bool, recs []events.DynamoDBEventRecord, rec events.DynamoDBEventRecord) {
	seq := rec.Change.SequenceNumber
	if whole {
		seq = recs[0].Change.SequenceNumber
	}
	if r.Failed == "" || streamimage.CompareSeq(seq, r.Failed) < 0 {
		r.Failed = seq
	}
}

// quarantine puts each poisoned record in the Sink, Concurrency at a time.
// A record whose quarantine failed is a failed record (with WholeBatch,
// the batch's first record, and res.Err is set).
func (b Batch[T]) quarantine(ctx context.Context, res *Result, recs []events.DynamoDBEventRecord, poison []Poisoned) {
	if len(poison) == 0 {
		return
	}
	log := b.Logger
	if log == nil {
		log = slog.Default()
	}
	errs := make([]error, len(poison))
	sem := make(chan struct{}, max(1, b.Concurrency))
	var wg sync.WaitGroup
	for i, p := range poison {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = b.Sink.Quarantine(ctx, p.Record, p.Cause)
		}()
	}
	wg.Wait()
	for i, p := range poison {
		seq := p.Record.Change.SequenceNumber
		if err := errs[i]; err != nil {
			log.ErrorContext(ctx, "poison record not quarantined; failing it", "seq", seq, "event_id", p.Record.EventID, "poison", p.Cause, "err", err)
			res.fail(b.WholeBatch, recs, p.Record)
			if b.WholeBatch && res.Err == nil {
				res.Err = err
			}
			continue
		}
		res.Stats.Poison++
		log.WarnContext(ctx, "poison record quarantined", "seq", seq, "event_id", p.Record.EventID, "err", p.Cause)
	}
}

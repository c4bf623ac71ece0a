package streamrun

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// maxGetRecords is the most records one GetRecords call returns.
const maxGetRecords = 1000

// saveTimeout bounds saving one checkpoint, which goes on after ctx is
// cancelled so that work already done is recorded.
const saveTimeout = 30 * time.Second

// pending is a fetched record not yet handed to the handler.
type pending struct {
	rec     events.DynamoDBEventRecord
	seq     string
	convErr error // streamimage.LambdaRecord failed: goes straight to OnPoison
}

// worker reads one shard, strictly sequentially.
type worker struct {
	r      *Runner
	id     string
	closed bool // the description had an EndingSequenceNumber
	log    *slog.Logger

	position    string // last record dealt with and checkpointed
	lastFetched string // last record fetched (position when nothing is pending)
	iter        *string
	iterAt      time.Time
	ended       bool // GetRecords returned no NextShardIterator
	gone        bool // the shard no longer exists
	emptyPolls  int  // consecutive GetRecords that returned nothing
	pending     []pending
	delivery    *Delivery // hands batches to the handler

	latest   bool      // start at LATEST (no checkpoint, StartingPosition Latest)
	lastTime time.Time // ApproximateCreationDateTime of lastFetched (zero: unknown)
	// gap is a gap noticed whose end is not known yet: it is recorded
	// when the next record is fetched (its time is the end), when a fetch
	// returns nothing, or when the worker stops.
	gap *opsrec.Gap
	// Heartbeat state (Config.Ops): the last one written, the records
	// handed over since, and the newest record handed over.
	beatAt, beatSince time.Time
	beatRecords       int64
	beatSeq           string
	beatTime          time.Time
}

func (r *Runner) newWorker(s *shardState) *worker {
	w := &worker{
		r: r, id: s.id, closed: s.closed,
		log:         r.log.With("shard", s.id),
		position:    s.cp.SequenceNumber,
		lastFetched: s.cp.SequenceNumber,
		latest:      s.latest,
		lastTime:    s.cp.RecordTime,
		beatSince:   r.now(),
	}
	w.checkMoved(s.cp, s.beat)
	w.delivery = &Delivery{
		Handler: r.h, BatchSize: r.cfg.BatchSize, MaxRetryAttempts: r.cfg.MaxRetryAttempts, BisectOnError: r.cfg.BisectOnError,
		OnFailure: w.quarantine, Done: w.checkpoint, Backoff: r.backoff, Logger: w.log,
		onInvoke: func(ctx context.Context, recs []events.DynamoDBEventRecord) {
			r.observe(recs)
			w.beat(ctx, recs)
		},
		onRetry:  func() { r.retries.Add(1) },
		onBisect: func() { r.bisections.Add(1) },
	}
	return w
}

// run reads the shard until it is done (or, with UntilCaughtUp, drained).
// When it stops, a gap still open is recorded and a last heartbeat written.
func (w *worker) run(ctx context.Context) (shardStatus, error) {
	defer w.stop(ctx)
	return w.read(ctx)
}

func (w *worker) read(ctx context.Context) (shardStatus, error) {
	cfg := &w.r.cfg
	w.log.Debug("streamrun: reading shard", "after", w.position)
	for {
		if err := ctx.Err(); err != nil {
			return reading, err
		}
		if err := w.fill(ctx); err != nil {
			return reading, err
		}
		if len(w.pending) == 0 {
			switch {
			case w.ended || w.gone:
				if err := w.save(ctx, Checkpoint{ShardID: w.id, SequenceNumber: w.position, Done: true, RunnerSeq: w.position}); err != nil {
					return reading, err
				}
				w.log.Debug("streamrun: shard done", "last", w.position)
				return done, nil
			case cfg.UntilCaughtUp && !w.closed && w.emptyPolls >= 2:
				return drained, nil
			}
			w.idle(ctx)
			if err := retry.Sleep(ctx, cfg.PollInterval); err != nil {
				return reading, err
			}
			continue
		}
		if p := w.pending[0]; p.convErr != nil {
			if err := w.poison(ctx, p, p.convErr); err != nil {
				return reading, err
			}
			w.pending = w.pending[1:]
			continue
		}
		n := 1
		for n < len(w.pending) && n < cfg.BatchSize && w.pending[n].convErr == nil {
			n++
		}
		if err := w.deliver(ctx, w.pending[:n]); err != nil {
			return reading, err
		}
		w.pending = w.pending[n:]
	}
}

// fill reads records into w.pending: one GetRecords when BatchWindow is 0,
// else until BatchSize records are there or the window has passed.
func (w *worker) fill(ctx context.Context) error {
	cfg := &w.r.cfg
	if cfg.BatchWindow == 0 {
		if len(w.pending) > 0 || w.ended || w.gone {
			return nil
		}
		_, err := w.fetch(ctx)
		return err
	}
	deadline := w.r.now().Add(cfg.BatchWindow)
	for len(w.pending) < cfg.BatchSize && !w.ended && !w.gone {
		got, err := w.fetch(ctx)
		if err != nil {
			return err
		}
		left := deadline.Sub(w.r.now())
		if left <= 0 || (cfg.UntilCaughtUp && !w.closed && w.emptyPolls >= 2) {
			return nil
		}
		if got == 0 {
			if err := retry.Sleep(ctx, min(cfg.PollInterval, left)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fetch calls GetRecords once successfully (retrying transient errors and
// recovering iterators) and appends what it returned to w.pending.
func (w *worker) fetch(ctx context.Context) (int, error) {
	cfg := &w.r.cfg
	failures := 0
	trimHorizon := false
	for {
		if w.iter == nil || w.r.now().Sub(w.iterAt) > w.r.iteratorMaxAge {
			if err := w.acquire(ctx, trimHorizon); err != nil {
				return 0, err
			}
			trimHorizon = false
			if w.gone || w.ended {
				return 0, nil
			}
		}
		out, err := w.r.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: w.iter, Limit: aws.Int32(maxGetRecords)})
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return 0, ctx.Err()
			case isExpired(err):
				w.r.expired.Add(1)
				w.log.Warn("streamrun: shard iterator expired, re-acquiring", "after", w.lastFetched)
				w.iter = nil
			case isTrimmed(err):
				w.r.trimmed.Add(1)
				w.log.Error("streamrun: TRIMMED: records after our position are gone from the stream (older than 24h); records may have been lost, restarting at TRIM_HORIZON",
					"after", w.lastFetched, "err", err)
				w.openGap(opsrec.GapTrimmed, "trimmed: the records after "+orStart(w.lastFetched)+" were gone from the stream (TrimmedDataAccessException) before they were read")
				w.iter, trimHorizon = nil, true
			case isNotFound(err):
				w.vanished(err)
				return 0, nil
			case transient(err):
				failures++
				d := w.r.backoff(failures)
				w.log.Warn("streamrun: GetRecords failed, retrying", "err", err, "in", d)
				if err := retry.Sleep(ctx, d); err != nil {
					return 0, err
				}
			default:
				return 0, fmt.Errorf("streamrun: shard %s: GetRecords: %w", w.id, err)
			}
			continue
		}
		w.iter, w.iterAt = out.NextShardIterator, w.r.now()
		if w.iter == nil {
			w.ended = true
		}
		got, seen := 0, false
		for _, rec := range out.Records {
			var seq string
			if rec.Dynamodb != nil {
				seq = aws.ToString(rec.Dynamodb.SequenceNumber)
			}
			if seq != "" && w.lastFetched != "" && streamimage.CompareSeq(seq, w.lastFetched) <= 0 {
				seen = true
				continue // already seen (a restart at TRIM_HORIZON)
			}
			if w.gap != nil {
				w.closeGap(ctx, seen, seq, recordTime(rec))
			}
			lr, err := streamimage.LambdaRecord(rec, cfg.StreamARN, cfg.Region)
			if err != nil {
				lr = events.DynamoDBEventRecord{
					AWSRegion: cfg.Region, EventID: aws.ToString(rec.EventID), EventName: string(rec.EventName),
					EventSource: streamimage.EventSource, EventSourceArn: cfg.StreamARN,
					Change: events.DynamoDBStreamRecord{SequenceNumber: seq},
				}
				err = fmt.Errorf("streamrun: convert record %s: %w", seq, err)
			}
			w.pending = append(w.pending, pending{rec: lr, seq: seq, convErr: err})
			if seq != "" {
				w.lastFetched, w.lastTime = seq, recordTime(rec)
			}
			got++
		}
		if got == 0 {
			w.emptyPolls++
			if w.gap != nil {
				w.closeGap(ctx, seen, "", time.Time{})
			}
		} else {
			w.emptyPolls = 0
		}
		return got, nil
	}
}

// acquire gets an iterator after the last fetched record, at TRIM_HORIZON
// when there is none or trimHorizon is set.
func (w *worker) acquire(ctx context.Context, trimHorizon bool) error {
	failures := 0
	for {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(w.r.cfg.StreamARN), ShardId: aws.String(w.id)}
		if w.latest && w.lastFetched == "" && !trimHorizon {
			in.ShardIteratorType = stypes.ShardIteratorTypeLatest
		} else if w.lastFetched == "" || trimHorizon {
			in.ShardIteratorType = stypes.ShardIteratorTypeTrimHorizon
		} else {
			in.ShardIteratorType = stypes.ShardIteratorTypeAfterSequenceNumber
			in.SequenceNumber = aws.String(w.lastFetched)
		}
		out, err := w.r.api.GetShardIterator(ctx, in)
		switch {
		case err == nil:
			w.iter, w.iterAt = out.ShardIterator, w.r.now()
			if w.iter == nil {
				w.ended = true
			}
			if in.ShardIteratorType == stypes.ShardIteratorTypeLatest {
				w.latest = false // once: a later re-acquire never skips again
				w.startedLatest(ctx)
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case isTrimmed(err) && !trimHorizon:
			w.r.trimmed.Add(1)
			w.log.Error("streamrun: TRIMMED: our position is older than the stream's trim horizon; records may have been lost, restarting at TRIM_HORIZON",
				"after", w.lastFetched, "err", err)
			w.openGap(opsrec.GapTrimmed, "trimmed: the checkpoint's position "+w.lastFetched+" is older than the stream's trim horizon (TrimmedDataAccessException): the records after it were gone before they were read")
			trimHorizon = true
		case isNotFound(err):
			w.vanished(err)
			return nil
		case transient(err):
			failures++
			d := w.r.backoff(failures)
			w.log.Warn("streamrun: GetShardIterator failed, retrying", "err", err, "in", d)
			if err := retry.Sleep(ctx, d); err != nil {
				return err
			}
		default:
			return fmt.Errorf("streamrun: shard %s: GetShardIterator %s: %w", w.id, in.ShardIteratorType, err)
		}
	}
}

// vanished handles a shard that no longer exists: its records are beyond
// reach, so it counts as done.
func (w *worker) vanished(err error) {
	w.r.trimmed.Add(1)
	w.log.Error("streamrun: TRIMMED: shard no longer exists; its unread records are lost, treating it as done",
		"after", w.lastFetched, "err", err)
	w.openGap(opsrec.GapTrimmed, "trimmed: the shard no longer exists; its records after "+orStart(w.lastFetched)+" were never read")
	w.gone, w.iter = true, nil
}

// deliver hands recs to the handler until every one of them is
// checkpointed, successfully or through OnPoison (the shard's Delivery).
func (w *worker) deliver(ctx context.Context, recs []pending) error {
	batch := make([]events.DynamoDBEventRecord, len(recs))
	for i, p := range recs {
		batch[i] = p.rec
	}
	_, err := w.delivery.Deliver(ctx, batch)
	return err
}

// observe counts an invocation and the lag of its last record.
func (r *Runner) observe(recs []events.DynamoDBEventRecord) {
	r.batches.Add(1)
	r.records.Add(int64(len(recs)))
	if t := recs[len(recs)-1].Change.ApproximateCreationDateTime.Time; !t.IsZero() {
		r.lagMillis.Store(r.now().Sub(t).Milliseconds())
	}
}

// quarantine gives a record to OnPoison (the Delivery's OnFailure).
func (w *worker) quarantine(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
	seq := rec.Change.SequenceNumber
	w.log.Error("streamrun: record exhausted its retries, sending to OnPoison", "seq", seq, "event", rec.EventID, "err", cause)
	if err := w.r.cfg.OnPoison(ctx, rec, cause); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("streamrun: shard %s: OnPoison for record %s: %w", w.id, seq, err)
	}
	w.r.poisoned.Add(1)
	t := rec.Change.ApproximateCreationDateTime.Time
	w.noteGap(ctx, opsrec.Gap{Kind: opsrec.GapDiscarded, FirstSeq: seq, LastSeq: seq, From: t, To: t, Records: 1,
		Detail: fmt.Sprintf("discarded: record %s (event %s) given to OnPoison (the dead-letter table) after its retries: %v", seq, rec.EventID, cause)})
	return nil
}

// poison gives a record to OnPoison and checkpoints past it.
func (w *worker) poison(ctx context.Context, p pending, cause error) error {
	if err := w.quarantine(ctx, p.rec, cause); err != nil {
		return err
	}
	return w.checkpoint(ctx, p.seq)
}

// checkpoint records that everything up to seq is dealt with.
func (w *worker) checkpoint(ctx context.Context, seq string) error {
	if seq == "" || (w.position != "" && streamimage.CompareSeq(seq, w.position) <= 0) {
		return nil
	}
	w.position = seq
	return w.save(ctx, Checkpoint{ShardID: w.id, SequenceNumber: seq, RunnerSeq: seq, RecordTime: w.timeOf(seq)})
}

// timeOf is the creation time of the pending or last fetched record seq
// (zero when unknown).
func (w *worker) timeOf(seq string) time.Time {
	for _, p := range w.pending {
		if p.seq == seq {
			return p.rec.Change.ApproximateCreationDateTime.Time
		}
	}
	if seq == w.lastFetched {
		return w.lastTime
	}
	return time.Time{}
}

// save writes a checkpoint, retrying transient errors. It goes on for a
// while after ctx is cancelled: the work it records is already done.
func (w *worker) save(ctx context.Context, cp Checkpoint) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := w.r.cps.Save(sctx, w.r.cfg.Consumer, cp)
		if err == nil {
			return nil
		}
		if !transient(err) || sctx.Err() != nil {
			return fmt.Errorf("streamrun: shard %s: save checkpoint %s: %w", w.id, cp.SequenceNumber, err)
		}
		d := w.r.backoff(attempt)
		w.log.Warn("streamrun: saving checkpoint failed, retrying", "err", err, "in", d)
		if err := retry.Sleep(sctx, d); err != nil {
			return fmt.Errorf("streamrun: shard %s: save checkpoint %s: %w", w.id, cp.SequenceNumber, err)
		}
	}
}

package streamrun

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// opsTimeout bounds one operations record's put, which goes on after ctx
// is cancelled (a gap noticed while stopping is still recorded).
const opsTimeout = 10 * time.Second

// peekCalls bounds the GetRecords calls of a peek at a shard's oldest
// record (a TRIM_HORIZON iterator may return empty pages first).
const peekCalls = 3

// noteGap logs a gap ("gap" in the message, with the consumer, shard and
// kind) and records it through Config.Ops. A gap that cannot be recorded
// is logged; the Run goes on (reconcile, which reads the event table,
// still finds what was missed).
func (w *worker) noteGap(ctx context.Context, g opsrec.Gap) {
	g.Consumer, g.Shard = w.r.cfg.Consumer, w.id
	if g.Noticed.IsZero() {
		g.Noticed = w.r.now()
	}
	w.r.gaps.Add(1)
	w.log.Warn("streamrun: gap: records may have been missed ("+g.Kind+")", g.LogAttrs()...)
	if w.r.cfg.Ops == nil {
		return
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opsTimeout)
	defer cancel()
	if err := w.r.cfg.Ops.PutGap(pctx, g); err != nil {
		w.log.Error("streamrun: gap not recorded (the log line above is all that is left of it)", "kind", g.Kind, "err", err)
	}
}

// openGap starts a gap whose end is the next record fetched. A gap
// already open is kept (it began earlier).
func (w *worker) openGap(kind, detail string) {
	if w.gap != nil {
		return
	}
	w.gap = &opsrec.Gap{Kind: kind, From: w.lastTime, Noticed: w.r.now(), Detail: detail}
}

// closeGap records the open gap, ending before the record seq created at
// t (seq "": no record; it ends now). seen reports that the fetch
// returned a record already read: the restart began before our position,
// so nothing was lost and a trimmed gap is dropped.
func (w *worker) closeGap(ctx context.Context, seen bool, seq string, t time.Time) {
	g := *w.gap
	w.gap = nil
	if seen && g.Kind == opsrec.GapTrimmed {
		w.log.Info("streamrun: the restart at TRIM_HORIZON began before our position: nothing was lost", "after", w.lastFetched)
		return
	}
	if seq != "" {
		g.To = t
		g.Detail += "; the first record read after it is " + seq
	} else {
		g.To = w.r.now()
		g.Detail += "; no record read after it yet"
	}
	w.noteGap(ctx, g)
}

// startedLatest records a GapLatest when the shard, just started at
// LATEST, held records: the first of them (a peek at TRIM_HORIZON) is
// where the gap begins, the start where it ends.
func (w *worker) startedLatest(ctx context.Context) {
	at := w.r.now()
	seq, t, ok := w.peek(ctx)
	if !ok {
		w.log.Info("streamrun: shard started at LATEST; it held no records")
		return
	}
	w.noteGap(ctx, opsrec.Gap{Kind: opsrec.GapLatest, FirstSeq: seq, From: t, To: at, Noticed: at,
		Detail: "started at LATEST (--starting-position latest): the records the shard held from " + seq + " on were skipped"})
}

// peek returns the shard's oldest record still in the stream, ok false
// when there is none (or it could not be read: logged).
func (w *worker) peek(ctx context.Context) (seq string, t time.Time, ok bool) {
	it, err := w.r.api.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: aws.String(w.r.cfg.StreamARN), ShardId: aws.String(w.id), ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon,
	})
	if err != nil {
		w.log.Warn("streamrun: could not look for the records a start at LATEST skipped", "err", err)
		return "", time.Time{}, false
	}
	iter := it.ShardIterator
	for range peekCalls {
		if iter == nil {
			return "", time.Time{}, false
		}
		out, err := w.r.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(1)})
		if err != nil {
			w.log.Warn("streamrun: could not look for the records a start at LATEST skipped", "err", err)
			return "", time.Time{}, false
		}
		for _, rec := range out.Records {
			if rec.Dynamodb != nil {
				return aws.ToString(rec.Dynamodb.SequenceNumber), recordTime(rec), true
			}
		}
		iter = out.NextShardIterator
	}
	return "", time.Time{}, false
}

// checkMoved opens a gap when the shard's checkpoint was moved past
// records never handed over: its SequenceNumber is past the one a Runner
// saved (RunnerSeq), or, for a checkpoint not saved by a Runner, past the
// record of the consumer's last heartbeat on the shard. The gap ends
// before the first record read after the checkpoint.
func (w *worker) checkMoved(cp Checkpoint, beat *opsrec.Progress) {
	if cp.SequenceNumber == "" || cp.Done {
		return
	}
	switch {
	case cp.RunnerSeq != "" && streamimage.CompareSeq(cp.SequenceNumber, cp.RunnerSeq) > 0:
		w.gap = &opsrec.Gap{Kind: opsrec.GapSequenceJump, LastSeq: cp.SequenceNumber, From: cp.RecordTime, Noticed: w.r.now(),
			Detail: fmt.Sprintf("checkpoint moved: the runner saved %s, the checkpoint now says %s; the records after %s up to %s were never handed over",
				cp.RunnerSeq, cp.SequenceNumber, cp.RunnerSeq, cp.SequenceNumber)}
	case cp.RunnerSeq != "" && streamimage.CompareSeq(cp.SequenceNumber, cp.RunnerSeq) < 0:
		w.log.Warn("streamrun: checkpoint moved back: records handed over already will be handed over again",
			"saved", cp.RunnerSeq, "checkpoint", cp.SequenceNumber)
	case cp.RunnerSeq == "" && beat != nil && beat.LastSeq != "" && streamimage.CompareSeq(cp.SequenceNumber, beat.LastSeq) > 0:
		w.gap = &opsrec.Gap{Kind: opsrec.GapSequenceJump, LastSeq: cp.SequenceNumber, From: beat.LastRecord, Noticed: w.r.now(),
			Detail: fmt.Sprintf("checkpoint %s was not saved by a runner and is past the record of the last heartbeat (%s): the records in between may never have been handed over",
				cp.SequenceNumber, beat.LastSeq)}
	}
}

// beat counts the records of an invocation and writes a heartbeat when the
// interval has passed (or none was written yet).
func (w *worker) beat(ctx context.Context, recs []events.DynamoDBEventRecord) {
	if w.r.cfg.Ops == nil || len(recs) == 0 {
		return
	}
	last := recs[len(recs)-1].Change
	w.beatRecords += int64(len(recs))
	w.beatSeq, w.beatTime = last.SequenceNumber, last.ApproximateCreationDateTime.Time
	now := w.r.now()
	if w.beatAt.IsZero() || now.Sub(w.beatAt) >= w.r.cfg.HeartbeatInterval {
		w.putBeat(ctx, now, false)
	}
}

// idle writes a heartbeat, lag 0, when the shard is at its tip and the
// interval has passed: a consumer with nothing to read is alive.
func (w *worker) idle(ctx context.Context) {
	if w.r.cfg.Ops == nil || len(w.pending) > 0 {
		return
	}
	if now := w.r.now(); w.beatAt.IsZero() || now.Sub(w.beatAt) >= w.r.cfg.HeartbeatInterval {
		w.putBeat(ctx, now, true)
	}
}

// putBeat writes the shard's heartbeat and starts a new count.
func (w *worker) putBeat(ctx context.Context, now time.Time, atTip bool) {
	p := opsrec.Progress{
		Consumer: w.r.cfg.Consumer, Shard: w.id, LastSeq: w.beatSeq, LastRecord: w.beatTime,
		Updated: now, Records: w.beatRecords, Since: w.beatSince,
	}
	if p.LastSeq == "" {
		p.LastSeq, p.LastRecord = w.position, w.lastTime
	}
	if !atTip && !p.LastRecord.IsZero() {
		p.Lag = now.Sub(p.LastRecord)
	}
	w.beatAt, w.beatSince, w.beatRecords = now, now, 0
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opsTimeout)
	defer cancel()
	if err := w.r.cfg.Ops.PutProgress(pctx, p); err != nil {
		w.log.Warn("streamrun: heartbeat not written", "err", err)
	}
}

// stop records a gap still open and writes a last heartbeat if records
// were handed over since the previous one.
func (w *worker) stop(ctx context.Context) {
	if w.gap != nil {
		w.closeGap(ctx, false, "", time.Time{})
	}
	if w.r.cfg.Ops != nil && w.beatRecords > 0 {
		w.putBeat(ctx, w.r.now(), false)
	}
}

// recordTime is a stream record's ApproximateCreationDateTime (zero when
// it has none).
func recordTime(rec stypes.Record) time.Time {
	if rec.Dynamodb == nil || rec.Dynamodb.ApproximateCreationDateTime == nil {
		return time.Time{}
	}
	return *rec.Dynamodb.ApproximateCreationDateTime
}

// orStart names a position for a log line: the sequence number, or the
// shard's start when there is none.
func orStart(seq string) string {
	if seq == "" {
		return "the shard's start"
	}
	return seq
}

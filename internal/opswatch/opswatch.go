// Package opswatch is what a stream consumer running in Lambda (the
// projector's and the archiver's handlers) can notice about records it may
// have missed, and its heartbeat. A Watch looks at each batch before the
// handler processes it and records, in the checkpoints table
// (opsrec.Store), with a log line a person can find ("gap" in the message,
// with the consumer, shard and kind):
//
//   - GapOnFailure: a batch marked as redriven from an on-failure
//     destination (WithRedrive: `streamfold deadletter redrive` marks every
//     batch it hands over; the records themselves are unchanged, so a
//     redrive by other means is not noticed). One gap per marked batch,
//     however many invocations its delivery takes.
//   - GapSequenceJump, about to be trimmed: the batch's first record is
//     older than Retention minus TrimMargin (23 h by default): the records
//     after it may be trimmed before the consumer reads them, and the event
//     source mapping may already be discarding them (MaximumRecordAgeInSeconds).
//     The gap spans from the batch's last record to now minus Retention plus
//     TrimMargin; while the consumer stays that far behind, the next gap is
//     recorded only once its batches have passed the previous one's end.
//   - GapSequenceJump after a stall: the batch's first record was created
//     more than StallAfter (1 h) after the last record this instance saw,
//     and it is itself more than StallAfter old: the consumer was behind,
//     and records in between were probably discarded or trimmed (a quiet
//     table gives a jump too, but then the consumer is not behind). The gap
//     spans the two records' creation times.
//
// What "shard" means here: a DynamoDB stream record in a Lambda event does
// not name its shard, and DynamoDB Streams sequence numbers are not
// consecutive, so a Lambda cannot tell its shards apart nor see a sequence
// jump exactly. A Watch keys what it keeps by the stream: "stream/<label>",
// the label of the records' EventSourceArn (StreamKey). The stall check
// compares records of whatever shards this instance was given, and its
// state lives only as long as the function instance; both are best
// effort, and reconcile, which reads the event table, is what is exact.
//
// Heartbeats: an opsrec.Progress per consumer and stream key, written at
// the first batch an instance handles and then at most once per
// HeartbeatInterval (1 min) per instance: one PutItem (one write unit, the
// item is well under 1 KB) per interval and instance, whatever the
// traffic. Concurrent instances (one per shard) overwrite the same item;
// its Records and Since are then one instance's. Redriven batches are not
// counted (their records are old by nature).
//
// The hot path costs no DynamoDB call: a batch that shows no gap and falls
// within the interval of the last heartbeat is only looked at in memory.
// Recording errors are logged and never fail the batch: the log line stays.
//
// A nil *Watch does nothing: handlers without one (under the local runner,
// which does its own, exact, noticing) call it all the same.
package opswatch

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/opsrec"
)

// Defaults of a Config.
const (
	DefaultHeartbeatInterval = time.Minute
	// DefaultRetention is DynamoDB Streams' record retention.
	DefaultRetention  = 24 * time.Hour
	DefaultTrimMargin = time.Hour
	DefaultStallAfter = time.Hour
)

// Recorder stores what a Watch notices; opsrec.Store satisfies it.
type Recorder interface {
	PutGap(ctx context.Context, g opsrec.Gap) error
	PutProgress(ctx context.Context, p opsrec.Progress) error
}

// Config configures a Watch.
type Config struct {
	// Consumer names the consumer in the records ("projector",
	// "archiver"). Required.
	Consumer string
	// HeartbeatInterval is the least time between two heartbeats of an
	// instance; negative: no heartbeats. Default 1 min.
	HeartbeatInterval time.Duration
	// Retention is the stream's record retention. Default 24 h.
	Retention time.Duration
	// TrimMargin: a batch whose first record is older than Retention
	// minus TrimMargin is about to be trimmed. Default 1 h.
	TrimMargin time.Duration
	// StallAfter is the least jump in creation time, and the least age of
	// the batch, that count as a jump after a stall. Default 1 h.
	StallAfter time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Watch notices gaps and writes heartbeats for one consumer. It is safe
// for concurrent use.
type Watch struct {
	rec Recorder
	cfg Config
	log *slog.Logger

	mu   sync.Mutex
	keys map[string]*keyState
}

// keyState is what a Watch keeps per stream key.
type keyState struct {
	lastSeq  string
	lastTime time.Time // the newest record creation time seen
	riskTo   time.Time // end of the last about-to-be-trimmed gap
	beatAt   time.Time // last heartbeat written (zero: none yet)
	since    time.Time // start of the heartbeat's count
	records  int64     // records since the last heartbeat
}

// New returns a Watch recording to rec; rec nil: gaps are only logged and
// no heartbeats are written.
func New(rec Recorder, cfg Config) (*Watch, error) {
	if cfg.Consumer == "" {
		return nil, fmt.Errorf("opswatch: Config.Consumer: is required")
	}
	if opsrec.IsReserved(cfg.Consumer) {
		return nil, fmt.Errorf("opswatch: Config.Consumer: %q is reserved for the operations records", cfg.Consumer)
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.TrimMargin <= 0 {
		cfg.TrimMargin = DefaultTrimMargin
	}
	if cfg.StallAfter <= 0 {
		cfg.StallAfter = DefaultStallAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Watch{rec: rec, cfg: cfg, log: cfg.Logger.With("component", "opswatch"), keys: map[string]*keyState{}}, nil
}

// StreamKey is the "shard" a Lambda records under: "stream/<label>", the
// label of the record's stream ARN (…/stream/<label>), or "stream/unknown".
func StreamKey(rec events.DynamoDBEventRecord) string {
	_, label, ok := strings.Cut(rec.EventSourceArn, "/stream/")
	if !ok || label == "" {
		return "stream/unknown"
	}
	return "stream/" + label
}

// Redrive marks a batch handed over again from an on-failure destination:
// the failed batch's shard and sequence range, as its on-failure record
// names them, and where it was read from.
type Redrive struct {
	Source   string // the on-failure record: "s3://…", "msgs.json message 2", …
	Shard    string
	FirstSeq string
	LastSeq  string
	// From, To and Records describe the records handed over (zero when
	// unknown).
	From, To time.Time
	Records  int

	noted atomic.Bool
}

type redriveKey struct{}

// WithRedrive marks ctx: the batches handed to a handler under it are
// redriven (r). Use one *Redrive per failed batch: its gap is recorded
// once.
func WithRedrive(ctx context.Context, r *Redrive) context.Context {
	return context.WithValue(ctx, redriveKey{}, r)
}

// RedriveOf returns the mark of ctx, nil when there is none.
func RedriveOf(ctx context.Context) *Redrive {
	r, _ := ctx.Value(redriveKey{}).(*Redrive)
	return r
}

// Batch looks at a batch before it is processed: records the gaps it shows
// and, when due, a heartbeat. It never fails; errors are logged.
func (w *Watch) Batch(ctx context.Context, recs []events.DynamoDBEventRecord) {
	if w == nil || len(recs) == 0 {
		return
	}
	now := w.cfg.Now()
	if rd := RedriveOf(ctx); rd != nil {
		if rd.noted.CompareAndSwap(false, true) {
			w.note(ctx, w.redriveGap(rd, recs, now))
		}
		return
	}
	key := StreamKey(recs[0])
	first, last := recs[0].Change, recs[len(recs)-1].Change
	firstT, lastT := first.ApproximateCreationDateTime.Time, last.ApproximateCreationDateTime.Time

	var gaps []opsrec.Gap
	var beat *opsrec.Progress
	w.mu.Lock()
	st := w.keys[key]
	if st == nil {
		st = &keyState{since: now}
		w.keys[key] = st
	}
	if !firstT.IsZero() {
		age := now.Sub(firstT)
		if !st.lastTime.IsZero() && firstT.Sub(st.lastTime) > w.cfg.StallAfter && age > w.cfg.StallAfter {
			gaps = append(gaps, opsrec.Gap{
				Consumer: w.cfg.Consumer, Kind: opsrec.GapSequenceJump, Shard: key,
				From: st.lastTime, To: firstT, Noticed: now,
				Detail: fmt.Sprintf("after a stall: the batch's first record (%s, %s old) was created %s after the last record seen (%s); records in between were probably discarded or trimmed",
					first.SequenceNumber, age.Round(time.Second), firstT.Sub(st.lastTime).Round(time.Second), st.lastSeq),
			})
		}
		if risk := w.cfg.Retention - w.cfg.TrimMargin; age > risk && firstT.After(st.riskTo) {
			from := lastT
			if from.IsZero() {
				from = firstT
			}
			to := now.Add(-risk)
			if to.Before(from) {
				to = from
			}
			st.riskTo = to
			gaps = append(gaps, opsrec.Gap{
				Consumer: w.cfg.Consumer, Kind: opsrec.GapSequenceJump, Shard: key,
				From: from, To: to, Noticed: now,
				Detail: fmt.Sprintf("about to be trimmed: the batch's first record (%s) is %s old, within %s of the stream's %s retention; the records after %s may be trimmed or discarded before they are read",
					first.SequenceNumber, age.Round(time.Second), w.cfg.TrimMargin, w.cfg.Retention, last.SequenceNumber),
			})
		}
	}
	if !lastT.IsZero() && lastT.After(st.lastTime) {
		st.lastTime, st.lastSeq = lastT, last.SequenceNumber
	}
	st.records += int64(len(recs))
	if w.rec != nil && w.cfg.HeartbeatInterval > 0 && (st.beatAt.IsZero() || now.Sub(st.beatAt) >= w.cfg.HeartbeatInterval) {
		p := opsrec.Progress{
			Consumer: w.cfg.Consumer, Shard: key, LastSeq: last.SequenceNumber, LastRecord: lastT,
			Updated: now, Records: st.records, Since: st.since,
		}
		if !lastT.IsZero() {
			p.Lag = now.Sub(lastT)
		}
		beat = &p
		st.beatAt, st.since, st.records = now, now, 0
	}
	w.mu.Unlock()

	for _, g := range gaps {
		w.note(ctx, g)
	}
	if beat != nil {
		if err := w.rec.PutProgress(ctx, *beat); err != nil {
			w.log.WarnContext(ctx, "opswatch: heartbeat not written", "consumer", w.cfg.Consumer, "shard", key, "err", err)
		}
	}
}

// CreatedSpan returns the earliest and latest creation time of recs
// (records without one are skipped; zero times when none has one).
func CreatedSpan(recs []events.DynamoDBEventRecord) (from, to time.Time) {
	for _, r := range recs {
		t := r.Change.ApproximateCreationDateTime.Time
		if t.IsZero() {
			continue
		}
		if from.IsZero() || t.Before(from) {
			from = t
		}
		if t.After(to) {
			to = t
		}
	}
	return from, to
}

// redriveGap is the GapOnFailure of a redriven batch.
func (w *Watch) redriveGap(rd *Redrive, recs []events.DynamoDBEventRecord, now time.Time) opsrec.Gap {
	g := opsrec.Gap{
		Consumer: w.cfg.Consumer, Kind: opsrec.GapOnFailure, Shard: rd.Shard, FirstSeq: rd.FirstSeq, LastSeq: rd.LastSeq,
		From: rd.From, To: rd.To, Records: rd.Records, Noticed: now,
		Detail: "records redriven from the on-failure destination (" + rd.Source + "): the event source mapping once gave them up",
	}
	if g.Shard == "" {
		g.Shard = StreamKey(recs[0])
	}
	if g.From.IsZero() && g.To.IsZero() {
		g.From, g.To = CreatedSpan(recs)
	}
	if g.FirstSeq == "" {
		g.FirstSeq, g.LastSeq = recs[0].Change.SequenceNumber, recs[len(recs)-1].Change.SequenceNumber
	}
	if g.Records == 0 {
		g.Records = len(recs)
	}
	return g
}

// note logs a gap and records it.
func (w *Watch) note(ctx context.Context, g opsrec.Gap) {
	w.log.WarnContext(ctx, "gap: records may have been missed ("+g.Kind+")", GapAttrs(g)...)
	if w.rec == nil {
		return
	}
	if err := w.rec.PutGap(ctx, g); err != nil {
		w.log.ErrorContext(ctx, "opswatch: gap not recorded (the log line above is all that is left of it)", "consumer", g.Consumer, "kind", g.Kind, "shard", g.Shard, "err", err)
	}
}

// GapAttrs are a gap's log attributes: consumer, shard, kind, the bounds
// known and the detail.
func GapAttrs(g opsrec.Gap) []any {
	return append([]any{"consumer", g.Consumer, "shard", g.Shard}, g.LogAttrs()...)
}

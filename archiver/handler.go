package archiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/emf"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// ErrPoison wraps every reason a stream record can never be archived as an
// event (an undecodable image, an invalid event). Such records are kept
// under errors/ instead. It is deadletter.ErrPoison, the one poison
// sentinel of every consumer.
var ErrPoison = deadletter.ErrPoison

// Handler is the archiver's Lambda handler (and what a local stream runner
// calls): a DynamoDB stream batch of the event table in, a partial batch
// response out. It is safe for concurrent use (one batch per shard).
type Handler struct {
	a   *Archive
	log *slog.Logger

	metrics      io.Writer // EmitMetrics; nil: none
	deployment   string
	metricsMu    sync.Mutex
	onQuarantine func(rec events.DynamoDBEventRecord)
	watch        *opswatch.Watch
}

// Metric of an archive that is gone (GoneError): one CloudWatch
// embedded-metric-format line per failed batch, namespace UnavailableNamespace,
// metric UnavailableMetric, dimension Deployment; the table and location
// are fields of the line. terraform/alarms.tf alarms on the first one.
const (
	UnavailableNamespace = "Streamfold"
	UnavailableMetric    = "ArchiveUnavailable"
)

// EmitMetrics makes Handle write the UnavailableMetric line to w (a Lambda
// function's standard output) for each batch that fails because the
// archive is gone, with the Deployment dimension deployment. It returns h.
func (h *Handler) EmitMetrics(w io.Writer, deployment string) *Handler {
	h.metrics, h.deployment = w, deployment
	return h
}

// OnQuarantine makes the handler call fn with each record it has stored
// under errors/ (after the store succeeded; a record quarantined again on
// a redelivery is passed again). Set it before the first batch. It returns h.
func (h *Handler) OnQuarantine(fn func(rec events.DynamoDBEventRecord)) *Handler {
	h.onQuarantine = fn
	return h
}

// Watch makes Process look at each batch before it is archived: the gaps
// a Lambda can notice and the consumer's heartbeat (see package opswatch).
// The Lambda function sets it; under the local runner, which notices gaps
// itself, it is left unset. Set it before the first batch. It returns h.
func (h *Handler) Watch(w *opswatch.Watch) *Handler {
	h.watch = w
	return h
}

// NewHandler returns the handler writing to a; log may be nil.
func NewHandler(a *Archive, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{a: a, log: log}
}

// BatchStats counts what one batch held and what became of it: the shared
// decode-and-quarantine counts (Poison: records archived under errors/) and
// what was written.
type BatchStats struct {
	deadletter.BatchStats
	Archived int // INSERTs archived as events
	Objects  int // data objects written
	Bytes    int64
}

// DecodeRecord turns one stream record into the record to archive. It returns
// ok=false for records that are not events (every non-INSERT record, TTL
// deletions included) and an error wrapping ErrPoison for records that can
// never be archived as events.
func DecodeRecord(rec events.DynamoDBEventRecord) (Record, bool, error) {
	ev, payload, ok, err := streamimage.Event(rec)
	if err != nil {
		return Record{}, false, fmt.Errorf("archiver: %w: %w", ErrPoison, err)
	}
	if !ok {
		return Record{}, false, nil
	}
	if err := checkSeq(rec.Change.SequenceNumber); err != nil {
		return Record{}, false, fmt.Errorf("archiver: %w: %w", ErrPoison, err)
	}
	if err := checkTime("time", ev.Time); err != nil {
		return Record{}, false, fmt.Errorf("archiver: %w: event %s/%s: %w", ErrPoison, ev.Subject, ev.ID, err)
	}
	return Record{Event: ev, Seq: rec.Change.SequenceNumber, StreamEventID: rec.EventID, payload: payload}, true, nil
}

// Handle archives one batch. Events are written with WriteBatch; poison
// records are stored under errors/ and do not fail the batch; non-INSERT
// records are counted and skipped. If any S3 write fails, the whole batch
// fails: the response names the batch's first record, so the event source
// mapping re-sends the batch from its start, and the retry rewrites the
// same objects (see the package doc). Handle never returns an error.
//
// When the archive is gone (a *GoneError: the bucket, or the table metadata
// the catalog points at, does not exist), the batch fails the same way,
// and Handle also logs an error naming the table and the missing location
// and writes the UnavailableMetric line (EmitMetrics): the event source
// mapping retries until the records expire, so a person must be told.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp, _ := h.Process(ctx, ev)
	return resp, nil
}

// Process is Handle that also returns why the batch failed (nil when it did
// not). A local runner can stop on a permanent cause (a *GoneError reports
// Permanent) rather than retry it; Lambda cannot, which is why Handle drops
// it.
func (h *Handler) Process(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	h.watch.Batch(ctx, ev.Records)
	st, err := h.ArchiveRecords(ctx, ev.Records)
	attrs := []any{"records", st.Records, "archived", st.Archived, "skipped_non_insert", st.SkippedNonInsert,
		"ttl_removes", st.TTLRemoves, "poison", st.Poison, "objects", st.Objects, "bytes", st.Bytes,
		"ms", time.Since(start).Milliseconds()}
	var resp events.DynamoDBEventResponse
	if err != nil {
		first := ev.Records[0].Change.SequenceNumber
		var gone *GoneError
		if errors.As(err, &gone) {
			h.log.ErrorContext(ctx, "archive gone: the catalog points at metadata or a bucket that does not exist; the batch fails until it is restored",
				append(attrs, "table", gone.Table, "location", gone.Location, "first_seq", first, "err", err)...)
			h.emitUnavailable(gone, start)
		} else {
			h.log.ErrorContext(ctx, "batch failed; retrying from its first record", append(attrs, "first_seq", first, "err", err)...)
		}
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: first}}
		return resp, err
	}
	h.log.InfoContext(ctx, "batch", attrs...)
	return resp, nil
}

// emitUnavailable writes the UnavailableMetric line of a gone archive.
func (h *Handler) emitUnavailable(g *GoneError, at time.Time) {
	if h.metrics == nil {
		return
	}
	h.metricsMu.Lock()
	defer h.metricsMu.Unlock()
	_ = emf.Write(h.metrics, emf.Datum{
		Namespace: UnavailableNamespace, Metric: UnavailableMetric, Value: 1, Time: at,
		Dims:   []emf.Dim{{Name: "Deployment", Value: h.deployment}},
		Fields: map[string]string{"Table": g.Table, "Location": g.Location},
	})
}

// ArchiveRecords is Handle without the Lambda response: it archives the
// records (poison ones under errors/, non-INSERTs skipped) through the
// shared decode-and-quarantine loop (deadletter.Batch, WholeBatch) and
// returns what it did, or the first write error. A caller that gets an
// error must deliver the same records again, starting with the first (see
// the package doc); one that buffers several stream batches may pass them
// at once.
func (h *Handler) ArchiveRecords(ctx context.Context, recs []events.DynamoDBEventRecord) (BatchStats, error) {
	var st BatchStats
	b := deadletter.Batch[Record]{
		Decode:      DecodeRecord,
		Sink:        errorsSink{a: h.a, then: h.onQuarantine},
		WholeBatch:  true,
		Concurrency: h.a.cfg.Concurrency,
		Logger:      h.log,
		Handle: func(ctx context.Context, items []deadletter.Item[Record]) (deadletter.Outcome, error) {
			batch := make([]Record, len(items))
			for i, it := range items {
				batch[i] = it.Value
			}
			ws, err := h.a.WriteBatch(ctx, batch)
			if err != nil {
				return deadletter.Outcome{}, err
			}
			st.Archived, st.Objects, st.Bytes = ws.Records, ws.Objects, ws.Bytes
			return deadletter.Outcome{}, nil
		},
	}
	res := b.Run(ctx, recs)
	st.BatchStats = res.Stats
	return st, res.Err
}

// errorsSink is the archiver's deadletter.Sink: the archive's errors/
// prefix, which `streamfold archive errors` reads. Quarantining a record
// again overwrites its object.
type errorsSink struct {
	a    *Archive
	then func(rec events.DynamoDBEventRecord) // OnQuarantine; nil: none
}

func (s errorsSink) Quarantine(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
	if err := s.a.putError(ctx, newErrorRecord(rec, cause, s.a.cfg.Now().UTC())); err != nil {
		return err
	}
	if s.then != nil {
		s.then(rec)
	}
	return nil
}

// newErrorRecord describes a poison record. SeenAt, which dates its key, is
// the record's ApproximateCreationDateTime when it has one (the same on
// every delivery, so a re-delivered poison record overwrites its object),
// else now. A record that cannot even be rendered as JSON is kept without
// its body, the reason saying why: a poison record never fails its batch.
func newErrorRecord(rec events.DynamoDBEventRecord, cause error, now time.Time) ErrorRecord {
	reason := cause.Error()
	raw, err := json.Marshal(rec)
	if err != nil {
		raw = nil
		reason += "; the record itself could not be encoded: " + err.Error()
	}
	seen := rec.Change.ApproximateCreationDateTime.Time
	if seen.IsZero() {
		seen = now
	}
	return ErrorRecord{
		SequenceNumber: rec.Change.SequenceNumber, EventID: rec.EventID, EventName: rec.EventName,
		StreamARN: rec.EventSourceArn, Reason: reason, SeenAt: seen.UTC(), Record: raw,
	}
}

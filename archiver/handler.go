package archiver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
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
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	st, err := h.ArchiveRecords(ctx, ev.Records)
	attrs := []any{"records", st.Records, "archived", st.Archived, "skipped_non_insert", st.SkippedNonInsert,
		"ttl_removes", st.TTLRemoves, "poison", st.Poison, "objects", st.Objects, "bytes", st.Bytes,
		"ms", time.Since(start).Milliseconds()}
	var resp events.DynamoDBEventResponse
	if err != nil {
		first := ev.Records[0].Change.SequenceNumber
		h.log.ErrorContext(ctx, "batch failed; retrying from its first record", append(attrs, "first_seq", first, "err", err)...)
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: first}}
		return resp, nil
	}
	h.log.InfoContext(ctx, "batch", attrs...)
	return resp, nil
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
		Sink:        errorsSink{a: h.a},
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
type errorsSink struct{ a *Archive }

func (s errorsSink) Quarantine(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
	return s.a.putError(ctx, newErrorRecord(rec, cause, s.a.cfg.Now().UTC()))
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

package projector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// ErrPoison wraps every reason a record can never be projected (an
// undecodable image, an unknown type, invalid data). Poison records go to
// the dead-letter table instead of blocking the shard.
var ErrPoison = errors.New("projector: poison record")

// deadLetterPutter is where poison records go.
type deadLetterPutter interface {
	Put(ctx context.Context, d DeadLetter) error
}

// HandlerConfig configures a Handler.
type HandlerConfig struct {
	// Consumer names this consumer in the dead-letter table. Default "projector".
	Consumer string
	// Now is the clock for dead-letter timestamps. Default time.Now.
	Now func() time.Time
}

// Handler is the Lambda handler of the projector (and what `streamfold run`
// calls): DynamoDB stream batch in, partial batch response out.
type Handler struct {
	proj *Projector
	dl   deadLetterPutter
	cfg  HandlerConfig
	log  *slog.Logger
}

// NewHandler returns a Handler.
func NewHandler(p *Projector, dl deadLetterPutter, cfg HandlerConfig, log *slog.Logger) *Handler {
	if cfg.Consumer == "" {
		cfg.Consumer = "projector"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Handler{proj: p, dl: dl, cfg: cfg, log: log}
}

// BatchStats counts what one batch held and what became of it.
type BatchStats struct {
	Records, Inserts, SkippedNonInsert, TTLRemoves, NonAgent, Poison int
	Aggregates, Changed, Unchanged, Commits, FailedAggregates        int
	// PoisonAggregates counts aggregates whose records can never be
	// applied (see Outcome.Poison): their records are dead-lettered.
	PoisonAggregates int
	// Conflicts counts commits refused for a version conflict (retried).
	Conflicts       int
	LowestFailedSeq string
}

// Decode turns a stream record into a projector input. It returns
// (Input{}, false, nil) for records that are not projected (non-INSERT
// records, Step Functions events of non-agent state machines) and an error
// wrapping ErrPoison for records that can never be projected.
func Decode(rec events.DynamoDBEventRecord) (Input, bool, error) {
	ev, payload, ok, err := streamimage.Event(rec)
	if err != nil {
		return Input{}, false, fmt.Errorf("%w: %w", ErrPoison, err)
	}
	if !ok {
		return Input{}, false, nil
	}
	in, ok, err := inputFrom(ev, payload, rec.Change.SequenceNumber)
	if err != nil {
		return Input{}, false, fmt.Errorf("%w: %w", ErrPoison, err)
	}
	return in, ok, nil
}

// InputOf validates an event and turns it into a projector input at stream
// position seq. It returns (Input{}, false, nil) for events the projector
// skips (Step Functions events of non-agent state machines) and an error for
// events that can never be projected. The rebuild from the archive and test
// fixtures use it; Decode does the same for stream records.
func InputOf(ev schema.Event, seq string) (Input, bool, error) {
	payload, err := schema.Validate(&ev)
	if err != nil {
		return Input{}, false, fmt.Errorf("event %s/%s: %w", ev.Subject, ev.ID, err)
	}
	return inputFrom(ev, payload, seq)
}

// inputFrom is InputOf for an event already validated into payload.
func inputFrom(ev schema.Event, payload schema.Payload, seq string) (Input, bool, error) {
	if sc, ok := payload.(*schema.ExecutionStatusChange); ok && !sc.IsAgent() {
		return Input{}, false, nil
	}
	kind, ok := KindFor(ev.Type)
	if !ok {
		return Input{}, false, fmt.Errorf("event type %q has no projection", ev.Type)
	}
	return Input{Seq: seq, Event: ev, Payload: payload, Kind: kind}, true, nil
}

// Handle projects one batch. Poison records are dead-lettered and counted;
// if the dead-letter write itself fails, the record counts as failed. On
// failure it reports the lowest failed SequenceNumber as the only batch item
// failure, so that the event source mapping re-sends it and everything after
// it; re-sent records that were already applied change nothing.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	st := BatchStats{Records: len(ev.Records)}
	var inputs []Input
	seqOf := map[string][]string{} // subject -> seqs
	recsOf := map[string][]events.DynamoDBEventRecord{}
	lowest := ""
	fail := func(seq string) {
		if lowest == "" || streamimage.CompareSeq(seq, lowest) < 0 {
			lowest = seq
		}
	}
	for _, rec := range ev.Records {
		in, ok, err := Decode(rec)
		switch {
		case err != nil:
			st.Poison++
			d, derr := NewDeadLetter(h.cfg.Consumer, "poison", rec, err, h.cfg.Now())
			if derr == nil {
				derr = h.dl.Put(ctx, d)
			}
			if derr != nil {
				h.log.ErrorContext(ctx, "dead letter write failed", "seq", rec.Change.SequenceNumber, "err", derr)
				fail(rec.Change.SequenceNumber)
			} else {
				h.log.WarnContext(ctx, "poison record dead-lettered", "seq", rec.Change.SequenceNumber, "event_id", rec.EventID, "err", err)
			}
		case !ok:
			switch {
			case rec.EventName != "INSERT" && streamimage.IsTTLDelete(rec):
				st.TTLRemoves++
			case rec.EventName != "INSERT":
				st.SkippedNonInsert++
			default:
				st.NonAgent++
			}
		default:
			st.Inserts++
			inputs = append(inputs, in)
			seqOf[in.Event.Subject] = append(seqOf[in.Event.Subject], in.Seq)
			recsOf[in.Event.Subject] = append(recsOf[in.Event.Subject], rec)
		}
	}
	st.Aggregates = len(seqOf)
	if len(inputs) > 0 {
		out := h.proj.Project(ctx, inputs)
		st.Changed, st.Unchanged, st.Commits, st.FailedAggregates = out.Changed, out.Unchanged, out.Commits, len(out.Failed)
		st.Conflicts, st.PoisonAggregates = out.Conflicts, len(out.Poison)
		for subj, err := range out.Poison {
			// Records that can never be applied go to the dead letters with
			// the reason; the rest of the batch goes on.
			for _, rec := range recsOf[subj] {
				d, derr := NewDeadLetter(h.cfg.Consumer, "poison", rec, fmt.Errorf("%w: %w", ErrPoison, err), h.cfg.Now())
				if derr == nil {
					derr = h.dl.Put(ctx, d)
				}
				if derr != nil {
					h.log.ErrorContext(ctx, "dead letter write failed", "seq", rec.Change.SequenceNumber, "err", derr)
					fail(rec.Change.SequenceNumber)
					continue
				}
				st.Poison++
				h.log.WarnContext(ctx, "aggregate poisoned, record dead-lettered", "subject", subj, "seq", rec.Change.SequenceNumber, "err", err)
			}
		}
		for subj, err := range out.Failed {
			h.log.ErrorContext(ctx, "aggregate not projected", "subject", subj, "err", err)
			for _, s := range seqOf[subj] {
				fail(s)
			}
		}
	}
	st.LowestFailedSeq = lowest
	h.log.InfoContext(ctx, "batch",
		"records", st.Records, "inserts", st.Inserts, "skipped_non_insert", st.SkippedNonInsert,
		"ttl_removes", st.TTLRemoves, "non_agent", st.NonAgent, "poison", st.Poison,
		"aggregates", st.Aggregates, "changed", st.Changed, "unchanged", st.Unchanged,
		"commits", st.Commits, "conflicts", st.Conflicts, "failed_aggregates", st.FailedAggregates, "poison_aggregates", st.PoisonAggregates,
		"lowest_failed_seq", st.LowestFailedSeq, "ms", time.Since(start).Milliseconds())
	var resp events.DynamoDBEventResponse
	if lowest != "" {
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: lowest}}
	}
	return resp, nil
}

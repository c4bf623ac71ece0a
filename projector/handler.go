package projector

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// ErrPoison wraps every reason a record can never be projected (an
// undecodable image, an unknown type, invalid data). Poison records go to
// the dead-letter table instead of blocking the shard. It is
// deadletter.ErrPoison, the one poison sentinel of every consumer.
var ErrPoison = deadletter.ErrPoison

// HandlerConfig configures a Handler.
type HandlerConfig struct {
	// Consumer names this consumer in the dead-letter table. Default "projector".
	Consumer string
	// Now is the clock for dead-letter timestamps. Default time.Now.
	Now func() time.Time
	// Watch, when set, looks at each batch before it is projected: the
	// gaps a Lambda can notice and the consumer's heartbeat (see package
	// opswatch). The Lambda function sets it; under the local runner,
	// which notices gaps itself, it is nil.
	Watch *opswatch.Watch
}

// Handler is the Lambda handler of the projector (and what `streamfold run`
// calls): DynamoDB stream batch in, partial batch response out.
type Handler struct {
	proj *Projector
	dl   deadletter.Putter
	cfg  HandlerConfig
	log  *slog.Logger
}

// NewHandler returns a Handler.
func NewHandler(p *Projector, dl deadletter.Putter, cfg HandlerConfig, log *slog.Logger) *Handler {
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

// BatchStats counts what one batch held and what became of it: the shared
// decode-and-quarantine counts (Skipped counts the Step Functions events of
// non-agent state machines) and what the projection did.
type BatchStats struct {
	deadletter.BatchStats
	Inserts                                                   int
	Aggregates, Changed, Unchanged, Commits, FailedAggregates int
	// PoisonAggregates counts aggregates whose records can never be
	// applied (see Outcome.Poison): their records are dead-lettered.
	PoisonAggregates int
	// Conflicts counts commits refused for a version conflict (retried).
	Conflicts int
	// Late counts records not projected because they were recorded after
	// their aggregate expired (Outcome.Late); Quarantined the records
	// dead-lettered alone (Outcome.Quarantined), also counted in Poison.
	Late, Quarantined int
	LowestFailedSeq   string
}

// Decode turns a stream record into a projector input. It returns
// (Input{}, false, nil) for records that are not projected (non-INSERT
// records, Step Functions events of non-agent state machines) and an error
// wrapping ErrPoison for records that can never be projected.
func Decode(rec events.DynamoDBEventRecord) (Input, bool, error) {
	ev, payload, ok, err := streamimage.Event(rec)
	if err != nil {
		return Input{}, false, fmt.Errorf("projector: %w: %w", ErrPoison, err)
	}
	if !ok {
		return Input{}, false, nil
	}
	in, ok, err := inputFrom(ev, payload, rec.Change.SequenceNumber)
	if err != nil {
		return Input{}, false, fmt.Errorf("projector: %w: %w", ErrPoison, err)
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

// Handle projects one batch through the shared decode-and-quarantine loop
// (deadletter.Batch): poison records are dead-lettered and counted; if the
// dead-letter write itself fails, the record counts as failed. On failure it
// reports the lowest failed SequenceNumber as the only batch item failure,
// so that the event source mapping re-sends it and everything after it;
// re-sent records that were already applied change nothing.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	h.cfg.Watch.Batch(ctx, ev.Records)
	var st BatchStats
	b := deadletter.Batch[Input]{
		Decode: Decode,
		Sink:   deadletter.TableSink{Table: h.dl, Consumer: h.cfg.Consumer, Reason: deadletter.ReasonPoison, Now: h.cfg.Now},
		Logger: h.log,
		Handle: func(ctx context.Context, items []deadletter.Item[Input]) (deadletter.Outcome, error) {
			return h.project(ctx, items, &st), nil
		},
	}
	res := b.Run(ctx, ev.Records)
	st.BatchStats, st.LowestFailedSeq = res.Stats, res.Failed
	h.log.InfoContext(ctx, "batch",
		"records", st.Records, "inserts", st.Inserts, "skipped_non_insert", st.SkippedNonInsert,
		"ttl_removes", st.TTLRemoves, "non_agent", st.Skipped, "poison", st.Poison,
		"aggregates", st.Aggregates, "changed", st.Changed, "unchanged", st.Unchanged,
		"commits", st.Commits, "conflicts", st.Conflicts, "failed_aggregates", st.FailedAggregates, "poison_aggregates", st.PoisonAggregates,
		"late", st.Late, "quarantined", st.Quarantined,
		"lowest_failed_seq", st.LowestFailedSeq, "ms", time.Since(start).Milliseconds())
	return res.Response(), nil
}

// project folds the decoded records and says which records failed (those of
// the aggregates not projected) and which can never be applied (those of
// the poisoned aggregates, dead-lettered with the reason).
func (h *Handler) project(ctx context.Context, items []deadletter.Item[Input], st *BatchStats) deadletter.Outcome {
	inputs := make([]Input, len(items))
	recsOf := map[string][]events.DynamoDBEventRecord{} // subject -> records
	for i, it := range items {
		inputs[i] = it.Value
		recsOf[it.Value.Event.Subject] = append(recsOf[it.Value.Event.Subject], it.Record)
	}
	st.Inserts, st.Aggregates = len(items), len(recsOf)
	out := h.proj.Project(ctx, inputs)
	st.Changed, st.Unchanged, st.Commits, st.FailedAggregates = out.Changed, out.Unchanged, out.Commits, len(out.Failed)
	st.Conflicts, st.PoisonAggregates = out.Conflicts, len(out.Poison)
	st.Late, st.Quarantined = out.Late, len(out.Quarantined)
	var res deadletter.Outcome
	for _, i := range sortedKeys(out.Quarantined) {
		err := out.Quarantined[i]
		h.log.WarnContext(ctx, "record quarantined", "subject", inputs[i].Event.Subject, "id", inputs[i].Event.ID, "err", err)
		res.Poison = append(res.Poison, deadletter.Poisoned{Record: items[i].Record, Cause: fmt.Errorf("projector: %w: %w", ErrPoison, err)})
	}
	for subj, err := range out.Poison {
		h.log.WarnContext(ctx, "aggregate poisoned, dead-lettering its records", "subject", subj, "records", len(recsOf[subj]), "err", err)
		for _, rec := range recsOf[subj] {
			res.Poison = append(res.Poison, deadletter.Poisoned{Record: rec, Cause: fmt.Errorf("projector: %w: %w", ErrPoison, err)})
		}
	}
	for subj, err := range out.Failed {
		h.log.ErrorContext(ctx, "aggregate not projected", "subject", subj, "err", err)
		res.Failed = append(res.Failed, recsOf[subj]...)
	}
	return res
}

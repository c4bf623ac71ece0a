package projector

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// Admission: before any record is folded, Project checks what can be
// decided from the record alone. A record that fails is quarantined by
// itself (Outcome.Quarantined, by its index in the inputs): the other
// records of its aggregate are folded as if it had never come, so one bad
// record never takes its aggregate's valid ones into the dead letters and
// contributes to no counter.
//
//   - Future events: an event whose time is more than Config.MaxFutureSkew
//     ahead of its recordedat (when streamfold appended it). Ingest refuses
//     these; one that reaches the event table another way would otherwise
//     win every last-writer attribute of its aggregate and date counter
//     rows in the future.
//   - A validation task whose taskId equals its executionId: seed 001 keys
//     both the execution's item and the task's item pk=<id>, sk=metadata,
//     and the execution owns it (see docs/projector.md, "Ownership"). Every
//     event of such a task carries the colliding ids (executionId is
//     required), so each is quarantined whatever the arrival order, and the
//     execution's item and daily metrics are the same either way.

// DefaultMaxFutureSkew is Config.MaxFutureSkew's default.
const DefaultMaxFutureSkew = 24 * time.Hour

// MaxMaxFutureSkew bounds Config.MaxFutureSkew (366 days, as
// ingest.MaxMaxFutureSkew: a deployment that lets ingest accept an event
// can let the projector project it).
const MaxMaxFutureSkew = 366 * 24 * time.Hour

// ErrFutureEvent is wrapped by FutureEventError.
var ErrFutureEvent = errors.New("projector: event time is ahead of its recordedat by more than the allowed skew")

// ErrKeyOwnedByExecution is returned for a validation task whose taskId
// equals its executionId: the item pk=<id>, sk=metadata is the execution's.
var ErrKeyOwnedByExecution = errors.New("projector: a task's id equals its execution's id")

// FutureEventError says which event is dated how far ahead of its
// recordedat, and the limit. It unwraps to ErrFutureEvent.
type FutureEventError struct {
	ID         string
	Time       time.Time
	RecordedAt time.Time
	MaxSkew    time.Duration
}

func (e *FutureEventError) Error() string {
	return fmt.Sprintf("projector: event %s: time %s is %s ahead of its recordedat %s, more than the %s allowed (Config.MaxFutureSkew)",
		e.ID, e.Time.UTC().Format(time.RFC3339Nano), e.Time.Sub(e.RecordedAt), e.RecordedAt.UTC().Format(time.RFC3339Nano), e.MaxSkew)
}

func (e *FutureEventError) Unwrap() error { return ErrFutureEvent }

// Permanent reports that the record can never be projected.
func (e *FutureEventError) Permanent() bool { return true }

// admit decides whether one input may be folded (pure). A nil error admits
// it; an error (ErrFutureEvent, ErrKeyOwnedByExecution) quarantines it alone.
// An event without a recordedat (never appended: unit fixtures, raw files)
// has no skew to check.
func admit(in Input, maxSkew time.Duration) error {
	e := in.Event
	if e.RecordedAt != nil && !e.RecordedAt.IsZero() && e.Time.Sub(*e.RecordedAt) > maxSkew {
		return &FutureEventError{ID: e.ID, Time: e.Time, RecordedAt: *e.RecordedAt, MaxSkew: maxSkew}
	}
	if in.Kind == KindTask {
		if t, ok := payloadOf(e, in.Payload).(*schema.TaskEvent); ok && t.TaskID != "" && t.TaskID == t.ExecutionID {
			return fmt.Errorf("%w: event %s of %s: the workflows item pk=%s, sk=metadata belongs to %s, the execution",
				ErrKeyOwnedByExecution, e.ID, e.Subject, t.TaskID, (&schema.AlbumExecutionEvent{ExecutionID: t.ExecutionID}).Subject())
		}
	}
	return nil
}

package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/streamfold/streamfold/schema"
)

// AdapterOutcome is what StepFunctionsAdapter.Handle did with one event.
type AdapterOutcome int

// Adapter outcomes.
const (
	// Skipped: the state machine is not an agent (it lacks schema.AgentTags);
	// nothing was written.
	Skipped AdapterOutcome = iota + 1
	// Appended: the event was new and is now in the event table.
	Appended
	// AlreadyAppended: the event was there already (an EventBridge
	// redelivery); nothing was written.
	AlreadyAppended
)

func (o AdapterOutcome) String() string {
	switch o {
	case Skipped:
		return "skipped"
	case Appended:
		return "appended"
	case AlreadyAppended:
		return "already_appended"
	}
	return "unknown"
}

// MarshalText makes the outcome a Lambda handler returns read as its name.
func (o AdapterOutcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// StepFunctionsAdapter turns the account-wide EventBridge stream of Step
// Functions execution status changes into events, keeping only agent state
// machines (seed 002): it looks up the state machine's tags, skips machines
// without schema.AgentTags, and appends the others with their tags in
// data.stateMachineTags. It is safe for concurrent use if its TagSource is.
type StepFunctionsAdapter struct {
	appender EventAppender
	tags     TagSource
	log      *slog.Logger
	payloads PayloadPolicy
}

// AdapterOption configures a StepFunctionsAdapter.
type AdapterOption func(*StepFunctionsAdapter)

// WithPayloadPolicy sets what becomes of an execution's input, output and
// cause (default DefaultPayloadPolicy, hash).
func WithPayloadPolicy(p PayloadPolicy) AdapterOption {
	return func(s *StepFunctionsAdapter) { s.payloads = p }
}

// NewStepFunctionsAdapter returns an adapter appending through a and reading
// tags from tags. A nil log discards.
func NewStepFunctionsAdapter(a EventAppender, tags TagSource, log *slog.Logger, opts ...AdapterOption) *StepFunctionsAdapter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &StepFunctionsAdapter{appender: a, tags: tags, log: log}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Handle is the Lambda handler body for one EventBridge event.
//
// Errors: an event that is not a Step Functions status change wraps
// ErrNotStepFunctionsEvent; an agent event that fails validation wraps its
// *schema.ValidationError. Both are permanent (errors.As finds a
// Permanent() bool that reports true), as is ErrStateMachineNotFound. Tag
// lookup and append failures are transient: returning them lets Lambda retry
// the delivery, and the append is idempotent.
//
// Only agent events are validated; a non-agent event is skipped whatever its
// detail holds, so that machines streamfold does not index cannot fail it.
func (s *StepFunctionsAdapter) Handle(ctx context.Context, ev EventBridgeEvent) (AdapterOutcome, error) {
	out, arn, err := s.handle(ctx, ev)
	level := slog.LevelInfo
	switch {
	case err != nil:
		level = slog.LevelError
		if isPermanent(err) {
			level = slog.LevelWarn
		}
	case out == Skipped:
		level = slog.LevelDebug
	}
	attrs := []slog.Attr{
		slog.String("id", ev.ID),
		slog.String("stateMachineArn", arn),
		slog.String("outcome", out.String()),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()), slog.Bool("permanent", isPermanent(err)))
	}
	s.log.LogAttrs(ctx, level, "step functions event", attrs...)
	return out, err
}

func (s *StepFunctionsAdapter) handle(ctx context.Context, ev EventBridgeEvent) (AdapterOutcome, string, error) {
	if err := checkStepFunctionsEvent(ev); err != nil {
		return 0, "", &permanentError{err: err}
	}
	var head struct {
		StateMachineArn string `json:"stateMachineArn"`
	}
	if err := json.Unmarshal(ev.Detail, &head); err != nil || head.StateMachineArn == "" {
		// Without the ARN there is no telling whether it is an agent: let
		// validation name what is wrong.
		_, verr := FromEventBridge(ev, nil, s.payloads)
		if verr == nil {
			verr = errors.New("detail.stateMachineArn: is required")
		}
		return 0, "", s.invalid(ev, verr)
	}
	arn := head.StateMachineArn
	if len(arn) > schema.MaxARNBytes {
		// No tag lookup for an ARN no row can hold: validation names it.
		if _, verr := FromEventBridge(ev, nil, s.payloads); verr != nil {
			return 0, "", s.invalid(ev, verr)
		}
	}
	tags, err := s.tags.Tags(ctx, arn)
	if err != nil {
		return 0, arn, fmt.Errorf("ingest: step functions event %s: tags: %w", ev.ID, err)
	}
	if !schema.IsAgent(tags) {
		return Skipped, arn, nil
	}
	e, err := FromEventBridge(ev, tags, s.payloads)
	if err != nil {
		return 0, arn, s.invalid(ev, err)
	}
	res, err := s.appender.Append(ctx, []schema.Event{e})
	if len(res.Outcomes) == 1 {
		switch res.Outcomes[0] {
		case Accepted:
			return Appended, arn, nil
		case Duplicate:
			return AlreadyAppended, arn, nil
		case Rejected, Conflict:
			if len(res.Errors) == 1 && res.Errors[0] != nil {
				err = res.Errors[0]
			}
			if err == nil {
				err = errors.New("rejected by the appender")
			}
			return 0, arn, s.invalid(ev, err)
		}
		if err == nil && len(res.Errors) == 1 {
			err = res.Errors[0]
		}
	}
	if err == nil {
		err = fmt.Errorf("append returned %d outcomes for 1 event", len(res.Outcomes))
	}
	return 0, arn, fmt.Errorf("ingest: step functions event %s: append: %w", ev.ID, err)
}

// invalid wraps a validation error; it stays permanent through the wrapping
// because errors.As finds the *schema.ValidationError.
func (s *StepFunctionsAdapter) invalid(ev EventBridgeEvent, err error) error {
	err = fmt.Errorf("ingest: step functions event %s: %w", ev.ID, err)
	if !isPermanent(err) {
		err = &permanentError{err: err}
	}
	return err
}

// isPermanent reports whether err, or an error it wraps, says it is permanent.
func isPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

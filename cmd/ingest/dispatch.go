package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/functionurl"
)

// ErrUnrecognizedEvent is returned, wrapped, for an invocation payload that
// is neither a function URL request nor an EventBridge event. It is
// permanent: retrying the same payload cannot help.
var ErrUnrecognizedEvent = errors.New("ingest: unrecognized invocation: neither a function URL request (requestContext.http.method) nor an EventBridge event (source, detail-type)")

// kind is what an invocation payload is.
type kind int

const (
	kindUnknown     kind = iota
	kindFunctionURL      // an HTTP request through the function URL
	kindEventBridge      // an EventBridge event (Step Functions status change)
)

func (k kind) String() string {
	switch k {
	case kindFunctionURL:
		return "function_url"
	case kindEventBridge:
		return "eventbridge"
	}
	return "unknown"
}

// classify tells the two invocation shapes apart from the raw JSON: a
// function URL request (payload format 2.0) always carries
// requestContext.http.method; an EventBridge event always carries source and
// detail-type, which a function URL request never has at the top level.
func classify(raw json.RawMessage) kind {
	var probe struct {
		Source         string `json:"source"`
		DetailType     string `json:"detail-type"`
		RequestContext *struct {
			HTTP *struct {
				Method string `json:"method"`
			} `json:"http"`
		} `json:"requestContext"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return kindUnknown
	}
	switch {
	case probe.RequestContext != nil && probe.RequestContext.HTTP != nil && probe.RequestContext.HTTP.Method != "":
		return kindFunctionURL
	case probe.Source != "" && probe.DetailType != "":
		return kindEventBridge
	}
	return kindUnknown
}

// dispatcher is the Lambda handler: one function serves every producer.
//
//   - A function URL request is served by http (ingest.HTTPHandler: POST
//     /webhooks/github, /events, /eventbridge, routed by path) through
//     package internal/functionurl; the HTTP status is the answer, and the
//     invocation itself never fails, so a bad request is never retried by
//     Lambda. An event that is not a valid request answers 400
//     {"error":...}, the handler's error shape.
//   - An EventBridge event goes to sfn (stepFunctions): a transient error
//     is returned so that Lambda's asynchronous retries and the on-failure
//     destination see it (the append is idempotent, so a retry is
//     harmless); an event that can never be appended is dead-lettered and
//     the invocation succeeds.
//
// It is safe for concurrent use if its parts are.
type dispatcher struct {
	http http.Handler
	sfn  *stepFunctions
}

// Handle is the Lambda entry point.
func (d *dispatcher) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	switch classify(raw) {
	case kindFunctionURL:
		var req events.LambdaFunctionURLRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("ingest: function URL request: %w", err)
		}
		return functionurl.Serve(ctx, d.http, req, writeBadEvent), nil
	case kindEventBridge:
		res, err := d.sfn.Handle(ctx, raw)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	return nil, fmt.Errorf("%w (%d bytes)", ErrUnrecognizedEvent, len(raw))
}

// writeBadEvent answers a function URL event that is not a valid request
// (functionurl.BadRequestFunc) in the ingest handler's error shape,
// {"error":msg}.
func writeBadEvent(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// Outcomes of an EventBridge invocation besides the adapter's.
const (
	outcomeDeadLettered = "dead_lettered"
	// outcomeConflict: the event's id is stored with different content;
	// the appender kept both versions as a dead letter (reason conflict).
	outcomeConflict = "conflict"
)

// stepFunctionsResult is the invocation result for an EventBridge event.
type stepFunctionsResult struct {
	// Outcome is the adapter's (appended, already_appended, skipped) or
	// dead_lettered.
	Outcome string `json:"outcome"`
	// Reason and Error say why a dead-lettered event can never be
	// appended (ingest.DeadLetterReason).
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
}

// deadLetterPutter is what stepFunctions needs of *deadletter.Table.
type deadLetterPutter interface {
	Put(ctx context.Context, d deadletter.Letter) error
}

// stepFunctions handles the EventBridge invocations: one event each,
// through ingest.StepFunctionsAdapter.
//
// An event that can never be appended (the adapter's error is permanent:
// not a Step Functions event, a state machine that no longer exists, an
// agent's event that fails validation or is too large to store; or a
// payload that does not decode as an EventBridge event) is not returned as
// an invocation error, which Lambda would retry twice and then send to the
// failure queue without saying why: it is written to the dead-letters
// table (consumer ingest.DeadLetterConsumer, the reason, the error, the
// event byte for byte and the tags found; see ingest.StepFunctionsDeadLetter)
// and the invocation succeeds with outcome dead_lettered. If that write
// fails, the invocation fails and Lambda retries it. Transient errors (tag
// lookup, append) are returned.
type stepFunctions struct {
	appender    ingest.EventAppender
	tags        ingest.TagSource
	deadLetters deadLetterPutter
	log         *slog.Logger
	now         func() time.Time
	// payloads is what is kept of an execution's input, output and cause.
	payloads ingest.PayloadPolicy
}

// Handle handles one EventBridge invocation payload.
func (s *stepFunctions) Handle(ctx context.Context, raw json.RawMessage) (stepFunctionsResult, error) {
	var ev ingest.EventBridgeEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return s.deadLetter(ctx, raw, ev, nil, ingest.ReasonMalformed, fmt.Errorf("ingest: EventBridge event: %w", err))
	}
	found := &recordingTags{next: s.tags}
	out, err := ingest.NewStepFunctionsAdapter(s.appender, found, s.log, ingest.WithPayloadPolicy(s.payloads)).Handle(ctx, ev)
	switch {
	case err == nil:
		return stepFunctionsResult{Outcome: out.String()}, nil
	case !isPermanent(err):
		return stepFunctionsResult{}, err
	case errors.Is(err, ingest.ErrConflict):
		// The appender kept both versions in the dead letters already.
		s.log.WarnContext(ctx, "step functions event conflicts with a stored event", "id", ev.ID, "error", err.Error())
		return stepFunctionsResult{Outcome: outcomeConflict, Reason: ingest.ReasonConflict, Error: err.Error()}, nil
	}
	return s.deadLetter(ctx, raw, ev, found.found(), ingest.DeadLetterReason(err), err)
}

// deadLetter writes the event to the dead letters; see stepFunctions.
func (s *stepFunctions) deadLetter(ctx context.Context, raw json.RawMessage, ev ingest.EventBridgeEvent, tags map[string]string, reason string, cause error) (stepFunctionsResult, error) {
	d, err := newDeadLetter(raw, ev, tags, reason, cause, s.now())
	if err == nil {
		err = s.deadLetters.Put(ctx, d)
	}
	if err != nil {
		return stepFunctionsResult{}, fmt.Errorf("ingest: dead-letter event %s (%s: %v): %w", ev.ID, reason, cause, err)
	}
	s.log.WarnContext(ctx, "step functions event dead-lettered", "id", ev.ID, "reason", reason, "error", cause.Error(), "position", d.Position)
	return stepFunctionsResult{Outcome: outcomeDeadLettered, Reason: reason, Error: cause.Error()}, nil
}

// newDeadLetter builds the dead letter of an EventBridge event: consumer
// ingest.DeadLetterConsumer, keyed by ingest.DeadLetterPosition, the
// detail-type as its event name, no stream position.
func newDeadLetter(raw json.RawMessage, ev ingest.EventBridgeEvent, tags map[string]string, reason string, cause error, now time.Time) (deadletter.Letter, error) {
	rec, err := ingest.StepFunctionsDeadLetter{Event: raw, Tags: tags}.Record()
	if err != nil {
		return deadletter.Letter{}, err
	}
	return deadletter.Letter{
		Consumer:      ingest.DeadLetterConsumer,
		Position:      ingest.DeadLetterPosition(ev, raw),
		EventID:       ev.ID,
		EventName:     ev.DetailType,
		Reason:        reason,
		Error:         cause.Error(),
		Record:        rec,
		QuarantinedAt: now.UTC(),
		Status:        "quarantined",
	}, nil
}

// isPermanent reports whether err, or an error it wraps, says it is permanent.
func isPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// recordingTags is the tag source of one invocation: it asks next and
// remembers what it found, for the dead letter.
type recordingTags struct {
	next ingest.TagSource

	mu   sync.Mutex
	tags map[string]string
}

func (r *recordingTags) Tags(ctx context.Context, arn string) (map[string]string, error) {
	tags, err := r.next.Tags(ctx, arn)
	if err == nil {
		r.mu.Lock()
		r.tags = maps.Clone(tags)
		if r.tags == nil {
			r.tags = map[string]string{}
		}
		r.mu.Unlock()
	}
	return tags, err
}

func (r *recordingTags) found() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tags
}

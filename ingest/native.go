package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// ErrPing is returned by FromGitHubDelivery for a "ping" delivery, which GitHub
// sends when a webhook is created. It carries no event; answer it with 200.
var ErrPing = errors.New("ingest: github ping delivery")

// ErrUnsupportedGitHubEvent is returned, wrapped with the event name, by
// FromGitHubDelivery for an X-GitHub-Event other than workflow_job and ping.
// Such deliveries are acknowledged and ignored.
var ErrUnsupportedGitHubEvent = errors.New("ingest: unsupported github event")

// ErrMissingHeader is returned, wrapped with the header name, by
// FromGitHubDelivery when X-GitHub-Event or X-GitHub-Delivery is absent.
var ErrMissingHeader = errors.New("ingest: missing github delivery header")

// ErrNotStepFunctionsEvent is returned, wrapped with the offending source and
// detail-type, by FromEventBridge for an EventBridge event that is not a Step
// Functions execution status change.
var ErrNotStepFunctionsEvent = errors.New("ingest: not a Step Functions execution status change")

// ErrNoNativeForm is returned, wrapped with the reason, by ToGitHubDelivery and
// ToEventBridge for an event that the native shape cannot carry exactly: the
// wrong type, or a source or time that the native form does not reproduce.
var ErrNoNativeForm = errors.New("ingest: event has no exact native form")

// GitHub webhook header names.
const (
	HeaderGitHubEvent    = "X-GitHub-Event"
	HeaderGitHubDelivery = "X-GitHub-Delivery"
	HeaderHubSignature   = "X-Hub-Signature-256"
)

// GitHub webhook event names this package knows.
const (
	GitHubEventWorkflowJob = "workflow_job"
	GitHubEventPing        = "ping"
)

// EventBridge source and detail-type of a Step Functions execution status change.
const (
	SourceStepFunctions             = "aws.states"
	DetailTypeExecutionStatusChange = "Step Functions Execution Status Change"
)

// stateMachineTagsField is the detail member that FromEventBridge sets.
const stateMachineTagsField = "stateMachineTags"

// GitHubDelivery is one webhook delivery as emit reads it:
// {"headers":{"X-GitHub-Event":..,"X-GitHub-Delivery":..},"body":{...}}.
type GitHubDelivery struct {
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// Header returns the value of the named header, matching its name
// case-insensitively, and "" when it is absent.
func (d GitHubDelivery) Header(name string) string {
	if v, ok := d.Headers[name]; ok {
		return v
	}
	for k, v := range d.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// FromGitHubDelivery turns a workflow_job delivery into an envelope: id is the
// X-GitHub-Delivery header, type is schema.WorkflowJobTypePrefix plus the
// payload's action (the legacy "started" of older GitHub Enterprise Server
// versions gives github.workflow_job.in_progress, see schema.JobAction),
// source is "https://github.com/<owner>" (the repository owner's login, else
// the organization's), time is the payload's WorkflowJobWebhook.EventTime
// (receivedAt when the payload has none of created_at, started_at and
// completed_at), data is the body, byte for byte, and subject is derived
// from it. Payloads without created_at or run_attempt are accepted with the
// fallbacks schema.WorkflowJobWebhook documents.
//
// The envelope is validated: a bad payload gives a *schema.ValidationError
// naming every broken field (an unknown action is reported on data.action).
// A ping gives ErrPing, any other event ErrUnsupportedGitHubEvent, and a
// missing X-GitHub-Event or X-GitHub-Delivery header ErrMissingHeader.
func FromGitHubDelivery(d GitHubDelivery, receivedAt time.Time) (schema.Event, error) {
	switch ev := strings.TrimSpace(d.Header(HeaderGitHubEvent)); ev {
	case "":
		return schema.Event{}, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderGitHubEvent)
	case GitHubEventPing:
		return schema.Event{}, ErrPing
	case GitHubEventWorkflowJob:
	default:
		return schema.Event{}, fmt.Errorf("%w: %q", ErrUnsupportedGitHubEvent, ev)
	}
	id := strings.TrimSpace(d.Header(HeaderGitHubDelivery))
	if id == "" {
		return schema.Event{}, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderGitHubDelivery)
	}
	if fe := objectError(d.Body); fe != nil {
		return schema.Event{}, &schema.ValidationError{Errors: []*schema.FieldError{fe}}
	}
	// Read action and owner on their own, so that a malformed field elsewhere
	// cannot hide them; schema.Validate reports every malformed field below.
	var h deliveryHead
	var syntaxErr *json.SyntaxError
	if err := json.Unmarshal(d.Body, &h); errors.As(err, &syntaxErr) {
		return schema.Event{}, &schema.ValidationError{Errors: []*schema.FieldError{{Field: "data", Rule: "is not valid JSON: " + err.Error()}}}
	}
	e := schema.Event{
		ID:     id,
		Source: h.source(),
		Type:   schema.WorkflowJobTypePrefix + schema.JobAction(h.Action),
		Data:   d.Body,
	}
	var p schema.WorkflowJobWebhook
	if json.Unmarshal(d.Body, &p) == nil {
		e.Time = p.EventTime()
	}
	if e.Time.IsZero() {
		e.Time = receivedAt
	}
	if _, err := schema.Validate(&e); err != nil {
		return schema.Event{}, actionError(err, h.Action)
	}
	return e, nil
}

// ToGitHubDelivery is the inverse of FromGitHubDelivery, for simulate --native:
// FromGitHubDelivery(ToGitHubDelivery(e)) gives back e as schema.Validate
// normalises it (RecordedAt, which the writer sets, is not carried). The event
// must be a valid workflow_job event whose source and time are the ones
// FromGitHubDelivery derives from its data; otherwise the error wraps
// ErrNoNativeForm or is the *schema.ValidationError.
func ToGitHubDelivery(e schema.Event) (GitHubDelivery, error) {
	if !strings.HasPrefix(e.Type, schema.WorkflowJobTypePrefix) {
		return GitHubDelivery{}, fmt.Errorf("%w: type %q is not a workflow_job event", ErrNoNativeForm, e.Type)
	}
	payload, err := schema.Validate(&e)
	if err != nil {
		return GitHubDelivery{}, err
	}
	p := payload.(*schema.WorkflowJobWebhook)
	if want := headOf(p).source(); e.Source != want {
		return GitHubDelivery{}, fmt.Errorf("%w: source %q is not the %q that the delivery implies", ErrNoNativeForm, e.Source, want)
	}
	if want := p.EventTime(); !e.Time.Equal(want) {
		return GitHubDelivery{}, fmt.Errorf("%w: time %s is not the %s that the delivery implies", ErrNoNativeForm,
			e.Time.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	return GitHubDelivery{
		Headers: map[string]string{HeaderGitHubEvent: GitHubEventWorkflowJob, HeaderGitHubDelivery: e.ID},
		Body:    bytes.Clone(e.Data),
	}, nil
}

// deliveryHead is the part of a workflow_job body that the envelope's type
// and source come from.
type deliveryHead struct {
	Action     string `json:"action"`
	Repository struct {
		FullName string `json:"full_name"`
		Owner    struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
	Organization struct {
		Login string `json:"login"`
	} `json:"organization"`
}

func headOf(p *schema.WorkflowJobWebhook) deliveryHead {
	var h deliveryHead
	h.Action = p.Action
	h.Repository.FullName = p.Repository.FullName
	if p.Repository.Owner != nil {
		h.Repository.Owner.Login = p.Repository.Owner.Login
	}
	if p.Organization != nil {
		h.Organization.Login = p.Organization.Login
	}
	return h
}

// source is "https://github.com/" plus the repository owner's login, the
// organization's login, or the owner part of the repository's full name, in
// that order of preference.
func (h deliveryHead) source() string {
	owner := h.Repository.Owner.Login
	if owner == "" {
		owner = h.Organization.Login
	}
	if owner == "" {
		owner, _, _ = strings.Cut(h.Repository.FullName, "/")
	}
	if owner == "" {
		// Only an invalid payload (no repository) lacks an owner; validation
		// reports data.repository.full_name, so do not add a source error.
		return "https://github.com"
	}
	return "https://github.com/" + owner
}

// actionError rewrites the "unknown event type" error that an unknown action
// produces into an error on data.action, which is what the sender got wrong.
func actionError(err error, action string) error {
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for i, fe := range ve.Errors {
		if fe.Field != "type" || !errors.Is(fe, schema.ErrUnknownType) {
			continue
		}
		actions := workflowJobActions()
		rule := "is required (one of " + strings.Join(actions, ", ") + ")"
		if action != "" {
			rule = "must be one of " + strings.Join(actions, ", ") + `, got "` + action + `"`
		}
		ve.Errors[i] = &schema.FieldError{Field: "data.action", Rule: rule, Err: schema.ErrUnknownType}
	}
	return ve
}

// workflowJobActions lists the actions of the known workflow_job event types.
func workflowJobActions() []string {
	var out []string
	for _, t := range schema.Types() {
		if a, ok := strings.CutPrefix(t, schema.WorkflowJobTypePrefix); ok {
			out = append(out, a)
		}
	}
	return out
}

// objectError reports a body that is empty or not a JSON object, in the words
// schema.Validate uses.
func objectError(body []byte) *schema.FieldError {
	b := bytes.TrimSpace(body)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		return &schema.FieldError{Field: "data", Rule: "is required"}
	case b[0] != '{':
		return &schema.FieldError{Field: "data", Rule: "must be a JSON object"}
	}
	return nil
}

// EventBridgeEvent is the native EventBridge envelope (seed 002). Its JSON
// form is the one EventBridge delivers to Lambda, the same as aws-lambda-go's
// events.EventBridgeEvent.
type EventBridgeEvent struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       time.Time       `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// FromEventBridge turns a Step Functions execution status change into an
// envelope: id is the EventBridge id, source "aws.states", type
// schema.TypeExecutionStatusChange, time the EventBridge time, and data the
// detail with its stateMachineTags member set to tags and its input,
// output and cause treated as payloads says (PayloadPolicy; "" is the
// default, PayloadsHash). Every other detail member is kept, byte for byte
// and in order; a nil tags map with PayloadsKeep leaves the detail
// untouched. The envelope is validated (*schema.ValidationError). An event
// of another source or detail-type gives ErrNotStepFunctionsEvent.
func FromEventBridge(ev EventBridgeEvent, tags map[string]string, payloads PayloadPolicy) (schema.Event, error) {
	if err := checkStepFunctionsEvent(ev); err != nil {
		return schema.Event{}, err
	}
	data := ev.Detail
	// A detail that is not a JSON object is left for Validate to report.
	if rewritten, err := rewriteDetail(ev.Detail, tags, payloads); err == nil {
		data = rewritten
	}
	e := schema.Event{
		ID:     ev.ID,
		Source: SourceStepFunctions,
		Type:   schema.TypeExecutionStatusChange,
		Time:   ev.Time,
		Data:   data,
	}
	if _, err := schema.Validate(&e); err != nil {
		return schema.Event{}, err
	}
	return e, nil
}

// ToEventBridge is the inverse of FromEventBridge, for simulate --native: the
// event becomes a "Step Functions Execution Status Change" whose region and
// account come from the execution ARN, whose resources are [executionArn], and
// whose detail is the event's data unchanged (stateMachineTags included, if
// present). FromEventBridge(ToEventBridge(e), nil) gives back e as
// schema.Validate normalises it (RecordedAt is not carried). The event must be
// a valid execution status change with source "aws.states"; otherwise the
// error wraps ErrNoNativeForm or is the *schema.ValidationError.
func ToEventBridge(e schema.Event) (EventBridgeEvent, error) {
	if e.Type != schema.TypeExecutionStatusChange {
		return EventBridgeEvent{}, fmt.Errorf("%w: type %q is not %q", ErrNoNativeForm, e.Type, schema.TypeExecutionStatusChange)
	}
	if e.Source != SourceStepFunctions {
		return EventBridgeEvent{}, fmt.Errorf("%w: source %q is not %q", ErrNoNativeForm, e.Source, SourceStepFunctions)
	}
	payload, err := schema.Validate(&e)
	if err != nil {
		return EventBridgeEvent{}, err
	}
	p := payload.(*schema.ExecutionStatusChange)
	// Validate guarantees arn:partition:states:region:account:execution:machine:name.
	parts := strings.Split(p.ExecutionArn, ":")
	return EventBridgeEvent{
		Version:    "0",
		ID:         e.ID,
		DetailType: DetailTypeExecutionStatusChange,
		Source:     SourceStepFunctions,
		Account:    parts[4],
		Time:       e.Time,
		Region:     parts[3],
		Resources:  []string{p.ExecutionArn},
		Detail:     bytes.Clone(e.Data),
	}, nil
}

// checkStepFunctionsEvent returns ErrNotStepFunctionsEvent, wrapped, unless the
// event is a Step Functions execution status change.
func checkStepFunctionsEvent(ev EventBridgeEvent) error {
	if ev.Source != SourceStepFunctions || ev.DetailType != DetailTypeExecutionStatusChange {
		return fmt.Errorf("%w: source %q, detail-type %q", ErrNotStepFunctionsEvent, ev.Source, ev.DetailType)
	}
	return nil
}

// rewriteDetail returns the JSON object detail with its stateMachineTags
// member replaced by (or, when absent, appended as) tags, unless tags is
// nil, and its payload members under payloads (applyPayloadPolicy). Every
// other member keeps its position and its exact bytes; a detail nothing
// changes is returned as is.
func rewriteDetail(detail []byte, tags map[string]string, payloads PayloadPolicy) ([]byte, error) {
	var value []byte
	if tags != nil {
		var err error
		if value, err = marshalNoEscape(tags); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(detail))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("detail is not a JSON object")
	}
	var buf bytes.Buffer
	buf.Grow(len(detail) + len(value) + len(stateMachineTagsField) + 4)
	buf.WriteByte('{')
	replaced, changed, n := false, false, 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("detail has a non-string key")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		switch {
		case key == stateMachineTagsField && tags != nil:
			if replaced {
				continue // a duplicate member would override the tags on decode
			}
			raw, replaced, changed = value, true, true
		case payloadMembers[key]:
			var c bool
			raw, c = applyPayloadPolicy(payloads, raw)
			changed = changed || c
		}
		if err := writeMember(&buf, n, key, raw); err != nil {
			return nil, err
		}
		n++
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("detail is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("detail has trailing data")
	}
	if tags != nil && !replaced {
		if err := writeMember(&buf, n, stateMachineTagsField, value); err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return detail, nil
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeMember(buf *bytes.Buffer, n int, key string, value []byte) error {
	k, err := marshalNoEscape(key)
	if err != nil {
		return err
	}
	if n > 0 {
		buf.WriteByte(',')
	}
	buf.Write(k)
	buf.WriteByte(':')
	buf.Write(value)
	return nil
}

// marshalNoEscape is json.Marshal without HTML escaping of <, > and &.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// errTagSource is a TagSource that always fails.
type errTagSource struct{ err error }

func (s errTagSource) Tags(context.Context, string) (map[string]string, error) { return nil, s.err }

func TestStepFunctionsAdapterHandle(t *testing.T) {
	running := loadEventBridge(t, "eventbridge/seed002_running.json")
	succeeded := loadEventBridge(t, "eventbridge/seed002_succeeded.json")
	agentTags := StaticTags{agentMachine: {"Type": "Agent", "Application": "StepFunctionsAgent", "Environment": "prod"}}
	throttled := errors.New("ThrottlingException: Rate exceeded")

	tests := []struct {
		name          string
		event         EventBridgeEvent
		tags          TagSource
		appender      func(a *recordingAppender)
		want          AdapterOutcome
		wantErr       string
		wantIs        error
		wantPermanent bool
		wantAppended  int
	}{
		{name: "seed 002 RUNNING of an agent is appended", event: running, tags: agentTags,
			want: Appended, wantAppended: 1},
		{name: "seed 002 SUCCEEDED of an agent is appended", event: succeeded, tags: agentTags,
			want: Appended, wantAppended: 1},
		{name: "machine with only Type=Agent is skipped", event: running,
			tags: StaticTags{agentMachine: {"Type": "Agent"}}, want: Skipped},
		{name: "machine with Application but another Type is skipped", event: running,
			tags: StaticTags{agentMachine: {"Type": "Workflow", "Application": "StepFunctionsAgent"}}, want: Skipped},
		{name: "untagged machine is skipped", event: running, tags: StaticTags{}, want: Skipped},
		{name: "invalid detail of a non-agent machine is skipped, not validated",
			event: withDetail(running, `{"stateMachineArn":"`+agentMachine+`","status":"PENDING_REDRIVE"}`),
			tags:  StaticTags{}, want: Skipped},
		{name: "redelivered event is already appended", event: running, tags: agentTags,
			appender: func(a *recordingAppender) { a.outcome = Duplicate }, want: AlreadyAppended, wantAppended: 1},
		{name: "tag lookup failure is returned for a retry", event: running, tags: errTagSource{throttled},
			wantErr: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: tags: ThrottlingException: Rate exceeded",
			wantIs:  throttled},
		{name: "deleted state machine is permanent", event: running,
			tags:    errTagSource{&permanentError{err: ErrStateMachineNotFound}},
			wantErr: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: tags: ingest: state machine not found",
			wantIs:  ErrStateMachineNotFound, wantPermanent: true},
		{name: "invalid agent event is a permanent validation error",
			event: withDetail(running, `{"executionArn":"arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123","stateMachineArn":"`+agentMachine+`","name":"abc123","status":"RUNNING","startDate":0}`),
			tags:  agentTags,
			wantErr: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: " +
				"data.startDate: must be a positive epoch-milliseconds time",
			wantPermanent: true},
		{name: "detail without a state machine ARN is a permanent validation error",
			event: withDetail(running, `{"name":"abc123"}`), tags: agentTags,
			wantErr: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: " +
				"data.executionArn: is required; data.stateMachineArn: is required; " +
				"data.status: is required (one of RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED); " +
				"data.startDate: must be a positive epoch-milliseconds time",
			wantPermanent: true},
		{name: "another EventBridge event is permanent", event: withSource(running, "aws.ec2"), tags: agentTags,
			wantErr: `ingest: not a Step Functions execution status change: source "aws.ec2", detail-type "Step Functions Execution Status Change"`,
			wantIs:  ErrNotStepFunctionsEvent, wantPermanent: true},
		{name: "failed append is returned for a retry", event: running, tags: agentTags,
			appender: func(a *recordingAppender) { a.outcome, a.err = Failed, throttled },
			wantErr:  "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: append: ThrottlingException: Rate exceeded",
			wantIs:   throttled, wantAppended: 1},
		{name: "append error is returned for a retry", event: running, tags: agentTags,
			appender: func(a *recordingAppender) { a.err = context.DeadlineExceeded },
			wantErr:  "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: append: context deadline exceeded",
			wantIs:   context.DeadlineExceeded, wantAppended: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &recordingAppender{}
			if tt.appender != nil {
				tt.appender(a)
			}
			s := NewStepFunctionsAdapter(a, tt.tags, nil)
			got, err := s.Handle(context.Background(), tt.event)
			if got != tt.want {
				t.Errorf("outcome = %v, want %v", got, tt.want)
			}
			if errText(err) != tt.wantErr {
				t.Errorf("error = %q, want %q", errText(err), tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if err != nil && isPermanent(err) != tt.wantPermanent {
				t.Errorf("permanent = %v, want %v", isPermanent(err), tt.wantPermanent)
			}
			if got := len(a.appended()); got != tt.wantAppended {
				t.Errorf("appended %d events, want %d", got, tt.wantAppended)
			}
		})
	}
}

func withDetail(ev EventBridgeEvent, detail string) EventBridgeEvent {
	ev.Detail = json.RawMessage(detail)
	return ev
}

func withSource(ev EventBridgeEvent, source string) EventBridgeEvent {
	ev.Source = source
	return ev
}

// TestStepFunctionsAdapterSeed002Lifecycle runs seed 002's example lifecycle
// through a TagCache: both events of the agent are appended as valid events
// of one subject carrying the tags, with a single tag lookup; a non-agent
// machine's events are skipped.
func TestStepFunctionsAdapterSeed002Lifecycle(t *testing.T) {
	l := newCountingLister()
	clock := &fakeClock{now: time.Date(2025, 9, 29, 12, 34, 50, 0, time.UTC)}
	a := &recordingAppender{}
	var logs bytes.Buffer
	s := NewStepFunctionsAdapter(a, NewTagCache(l, 0, clock.Now), slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))

	etl := loadEventBridge(t, "eventbridge/seed002_running.json")
	etl.ID = "etl-1"
	etl.Detail = json.RawMessage(strings.ReplaceAll(string(etl.Detail), "my-agent-prod", "nightly-etl"))

	steps := []struct {
		ev   EventBridgeEvent
		want AdapterOutcome
	}{
		{loadEventBridge(t, "eventbridge/seed002_running.json"), Appended},
		{etl, Skipped},
		{loadEventBridge(t, "eventbridge/seed002_succeeded.json"), Appended},
		{loadEventBridge(t, "eventbridge/seed002_succeeded.json"), AlreadyAppended}, // EventBridge redelivery
	}
	for i, step := range steps {
		got, err := s.Handle(context.Background(), step.ev)
		if err != nil || got != step.want {
			t.Fatalf("step %d (%s): %v, %v; want %v", i, step.ev.ID, got, err, step.want)
		}
	}
	if got := l.count(agentMachine); got != 1 {
		t.Errorf("%d tag lookups of the agent, want 1", got)
	}
	if got := strings.Count(strings.TrimSpace(logs.String()), "\n") + 1; got != len(steps) {
		t.Errorf("%d log lines, want %d", got, len(steps))
	}

	events := a.appended()
	if len(events) != 3 {
		t.Fatalf("appended %d events, want 3", len(events))
	}
	wantStatus := []string{"RUNNING", "SUCCEEDED", "SUCCEEDED"}
	for i, e := range events {
		payload, err := schema.Validate(&e)
		if err != nil {
			t.Fatalf("event %d does not validate: %v", i, err)
		}
		p := payload.(*schema.ExecutionStatusChange)
		if e.Subject != "states/execution/arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123" {
			t.Errorf("event %d subject = %q", i, e.Subject)
		}
		if p.Status != wantStatus[i] || !p.IsAgent() {
			t.Errorf("event %d: status %s, tags %v", i, p.Status, p.StateMachineTags)
		}
		if !reflect.DeepEqual(p.StateMachineTags, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}) {
			t.Errorf("event %d tags = %v", i, p.StateMachineTags)
		}
	}
	if stop := events[1]; !strings.Contains(string(stop.Data), `"stopDate":1234567900000`) {
		t.Errorf("SUCCEEDED data lost its stopDate: %s", stop.Data)
	}
}

func TestAdapterOutcomeString(t *testing.T) {
	for o, want := range map[AdapterOutcome]string{Skipped: "skipped", Appended: "appended", AlreadyAppended: "already_appended", 0: "unknown"} {
		if got := o.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", o, got, want)
		}
	}
	if b, err := json.Marshal(Appended); err != nil || string(b) != `"appended"` {
		t.Errorf("json.Marshal(Appended) = %s, %v", b, err)
	}
}

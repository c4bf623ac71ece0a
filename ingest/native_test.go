package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// readTestdata returns a file under testdata/.
func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jobDelivery is a workflow_job delivery of a testdata body.
func jobDelivery(t *testing.T, fixture, deliveryID string) GitHubDelivery {
	t.Helper()
	return GitHubDelivery{
		Headers: map[string]string{"X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": deliveryID},
		Body:    readTestdata(t, fixture),
	}
}

// editJSON decodes a JSON object, applies edit and re-encodes it.
func editJSON(t *testing.T, b []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sub returns the nested object at path, creating nothing.
func sub(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

// loadEventBridge decodes a testdata EventBridge event.
func loadEventBridge(t *testing.T, name string) EventBridgeEvent {
	t.Helper()
	var ev EventBridgeEvent
	if err := json.Unmarshal(readTestdata(t, name), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestFromGitHubDeliveryConvertsFixtures(t *testing.T) {
	received := time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		fixture  string
		wantType string
		wantTime string
	}{
		{"github/workflow_job_queued.json", schema.TypeJobQueued, "2025-01-15T10:00:01Z"},
		{"github/workflow_job_in_progress.json", schema.TypeJobInProgress, "2025-01-15T10:00:25Z"},
		{"github/workflow_job_completed.json", schema.TypeJobCompleted, "2025-01-15T10:05:30Z"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			d := jobDelivery(t, tt.fixture, "9f0c3c1e-d2a1-11ef-8b8a-4b1c2d3e4f50")
			e, err := FromGitHubDelivery(d, received)
			if err != nil {
				t.Fatalf("FromGitHubDelivery: %v", err)
			}
			want := schema.Event{
				SpecVersion: "1.0",
				ID:          "9f0c3c1e-d2a1-11ef-8b8a-4b1c2d3e4f50",
				Source:      "https://github.com/runs-on",
				Type:        tt.wantType,
				Subject:     "github/12345/job/31275968012",
				Time:        mustTime(t, tt.wantTime),
				Data:        d.Body,
			}
			if !reflect.DeepEqual(e, want) {
				t.Errorf("event =\n%+v\nwant\n%+v", e, want)
			}
			if !bytes.Equal(e.Data, readTestdata(t, tt.fixture)) {
				t.Error("data is not the body byte for byte")
			}
		})
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts.UTC()
}

func TestFromGitHubDeliveryHeadersAreCaseInsensitive(t *testing.T) {
	d := jobDelivery(t, "github/workflow_job_queued.json", "")
	d.Headers = map[string]string{"x-github-event": "workflow_job", "X-Github-Delivery": "delivery-1"}
	e, err := FromGitHubDelivery(d, time.Now())
	if err != nil {
		t.Fatalf("FromGitHubDelivery: %v", err)
	}
	if e.ID != "delivery-1" {
		t.Errorf("id = %q, want delivery-1", e.ID)
	}
}

func TestFromGitHubDeliverySourceFallsBackFromOwnerToOrganizationToFullName(t *testing.T) {
	queued := readTestdata(t, "github/workflow_job_queued.json")
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"repository owner login", func(m map[string]any) {
			sub(m, "repository", "owner")["login"] = "octo-user"
		}, "https://github.com/octo-user"},
		{"organization login without repository owner", func(m map[string]any) {
			delete(sub(m, "repository"), "owner")
			sub(m, "organization")["login"] = "octo-org"
		}, "https://github.com/octo-org"},
		{"full name owner without owner or organization", func(m map[string]any) {
			delete(sub(m, "repository"), "owner")
			delete(m, "organization")
		}, "https://github.com/runs-on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := GitHubDelivery{
				Headers: map[string]string{"X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": "d"},
				Body:    editJSON(t, queued, tt.edit),
			}
			e, err := FromGitHubDelivery(d, time.Now())
			if err != nil {
				t.Fatalf("FromGitHubDelivery: %v", err)
			}
			if e.Source != tt.want {
				t.Errorf("source = %q, want %q", e.Source, tt.want)
			}
		})
	}
}

func TestFromGitHubDeliveryRejects(t *testing.T) {
	queued := readTestdata(t, "github/workflow_job_queued.json")
	completed := readTestdata(t, "github/workflow_job_completed.json")
	headers := func(event, delivery string) map[string]string {
		h := map[string]string{}
		if event != "" {
			h["X-GitHub-Event"] = event
		}
		if delivery != "" {
			h["X-GitHub-Delivery"] = delivery
		}
		return h
	}
	tests := []struct {
		name     string
		d        GitHubDelivery
		wantIs   error // sentinel, or nil for a *schema.ValidationError
		wantText string
	}{
		{"ping", GitHubDelivery{headers("ping", "d"), []byte(`{"zen":"Design for failure.","hook_id":1}`)},
			ErrPing, "ingest: github ping delivery"},
		{"push is unsupported", GitHubDelivery{headers("push", "d"), []byte(`{}`)},
			ErrUnsupportedGitHubEvent, `ingest: unsupported github event: "push"`},
		{"missing event header", GitHubDelivery{headers("", "d"), queued},
			ErrMissingHeader, "ingest: missing github delivery header: X-GitHub-Event"},
		{"missing delivery header", GitHubDelivery{headers("workflow_job", ""), queued},
			ErrMissingHeader, "ingest: missing github delivery header: X-GitHub-Delivery"},
		{"blank delivery header", GitHubDelivery{headers("workflow_job", "  "), queued},
			ErrMissingHeader, "ingest: missing github delivery header: X-GitHub-Delivery"},
		{"empty body", GitHubDelivery{headers("workflow_job", "d"), nil},
			nil, "data: is required"},
		{"array body", GitHubDelivery{headers("workflow_job", "d"), []byte(`[1]`)},
			nil, "data: must be a JSON object"},
		{"truncated body", GitHubDelivery{headers("workflow_job", "d"), []byte(`{"action":"queued"`)},
			nil, "data: is not valid JSON: unexpected end of JSON input"},
		{"job id zero", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			sub(m, "workflow_job")["id"] = 0
		})}, nil, "data.workflow_job.id: must be a positive integer"},
		{"job id missing", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			delete(sub(m, "workflow_job"), "id")
		})}, nil, "data.workflow_job.id: must be a positive integer"},
		{"job id is a string", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			sub(m, "workflow_job")["id"] = "31275968012"
		})}, nil, "data.workflow_job.id: must be a JSON number, got string"},
		{"completed without conclusion", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, completed, func(m map[string]any) {
			sub(m, "workflow_job")["conclusion"] = nil
		})}, nil, "data.workflow_job.conclusion: is required when action is completed"},
		{"unknown action", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			m["action"] = "requested"
		})}, nil, `data.action: must be one of completed, in_progress, queued, waiting, got "requested"`},
		{"missing action", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			delete(m, "action")
		})}, nil, "data.action: is required (one of completed, in_progress, queued, waiting)"},
		{"several broken fields at once", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			sub(m, "workflow_job")["run_attempt"] = 0
			sub(m, "workflow_job")["name"] = ""
			sub(m, "repository")["full_name"] = "runs-on"
		})}, nil, "data.workflow_job.run_attempt: must be at least 1; data.workflow_job.name: is required; " +
			`data.repository.full_name: must be "owner/name"`},
		{"run_attempt zero is not a missing one", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			sub(m, "workflow_job")["run_attempt"] = 0
		})}, nil, "data.workflow_job.run_attempt: must be at least 1"},
		{"run_attempt as text", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			sub(m, "workflow_job")["run_attempt"] = "1"
		})}, nil, "data.workflow_job.run_attempt: must be a JSON number, got string"},
		{"started without started_at", GitHubDelivery{headers("workflow_job", "d"), editJSON(t, queued, func(m map[string]any) {
			m["action"] = "started"
			delete(sub(m, "workflow_job"), "started_at")
		})}, nil, "data.workflow_job.started_at: is required when action is in_progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromGitHubDelivery(tt.d, time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC))
			if err == nil {
				t.Fatal("FromGitHubDelivery succeeded, want an error")
			}
			if err.Error() != tt.wantText {
				t.Errorf("error = %q, want %q", err, tt.wantText)
			}
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) {
					t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
				}
				return
			}
			var ve *schema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *schema.ValidationError", err)
			}
			if !ve.Permanent() {
				t.Error("validation error is not permanent")
			}
		})
	}
}

func TestGitHubDeliveryRoundTripIsExact(t *testing.T) {
	for _, fixture := range []string{
		"github/workflow_job_queued.json",
		"github/workflow_job_in_progress.json",
		"github/workflow_job_completed.json",
	} {
		t.Run(fixture, func(t *testing.T) {
			d := jobDelivery(t, fixture, "72d3162e-cc78-11e3-81ab-4c9367dc0958")
			e, err := FromGitHubDelivery(d, time.Now())
			if err != nil {
				t.Fatalf("FromGitHubDelivery: %v", err)
			}
			back, err := ToGitHubDelivery(e)
			if err != nil {
				t.Fatalf("ToGitHubDelivery: %v", err)
			}
			if !reflect.DeepEqual(back, d) {
				t.Errorf("delivery round trip:\n got headers %v, body equal %v\nwant headers %v",
					back.Headers, bytes.Equal(back.Body, d.Body), d.Headers)
			}
			again, err := FromGitHubDelivery(back, time.Now().Add(time.Hour))
			if err != nil {
				t.Fatalf("FromGitHubDelivery(ToGitHubDelivery(e)): %v", err)
			}
			if !reflect.DeepEqual(again, e) {
				t.Errorf("event round trip:\n got %+v\nwant %+v", again, e)
			}
			// The JSON form emit reads also round-trips.
			b, err := json.Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			var decoded GitHubDelivery
			if err := json.Unmarshal(b, &decoded); err != nil {
				t.Fatal(err)
			}
			viaJSON, err := FromGitHubDelivery(decoded, time.Now())
			if err != nil {
				t.Fatalf("FromGitHubDelivery(JSON delivery): %v", err)
			}
			if viaJSON.ID != e.ID || viaJSON.Subject != e.Subject || !viaJSON.Time.Equal(e.Time) {
				t.Errorf("JSON round trip = %+v, want %+v", viaJSON, e)
			}
		})
	}
}

func TestToGitHubDeliveryRejectsEventsWithoutExactNativeForm(t *testing.T) {
	valid, err := FromGitHubDelivery(jobDelivery(t, "github/workflow_job_queued.json", "d-1"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sfnEvent, err := FromEventBridge(loadEventBridge(t, "eventbridge/seed002_running.json"), nil, PayloadsKeep)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		edit     func(e *schema.Event)
		wantIs   error
		wantText string
	}{
		{"not a workflow_job event", func(e *schema.Event) { *e = sfnEvent }, ErrNoNativeForm,
			`ingest: event has no exact native form: type "aws.states.execution_status_change" is not a workflow_job event`},
		{"source differs from the repository owner", func(e *schema.Event) { e.Source = "https://ghes.example.com/runs-on" }, ErrNoNativeForm,
			`ingest: event has no exact native form: source "https://ghes.example.com/runs-on" is not the "https://github.com/runs-on" that the delivery implies`},
		{"time differs from the payload's", func(e *schema.Event) { e.Time = e.Time.Add(time.Second) }, ErrNoNativeForm,
			"ingest: event has no exact native form: time 2025-01-15T10:00:02Z is not the 2025-01-15T10:00:01Z that the delivery implies"},
		{"invalid payload", func(e *schema.Event) { e.Type = schema.TypeJobCompleted }, nil,
			`data.action: must match the event type "github.workflow_job.completed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := valid
			tt.edit(&e)
			_, err := ToGitHubDelivery(e)
			checkError(t, "ToGitHubDelivery", err, tt.wantText, tt.wantIs)
		})
	}
}

func TestFromEventBridgeSeed002(t *testing.T) {
	agentTags := map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}
	tests := []struct {
		fixture      string
		wantID       string
		wantTime     string
		wantStatus   string
		wantStopDate *int64
	}{
		{"eventbridge/seed002_running.json", "6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01", "2009-02-13T23:31:30Z", "RUNNING", nil},
		{"eventbridge/seed002_succeeded.json", "0d7e4a53-5b1f-4e2a-9c6d-8b3f1e2a4c77", "2009-02-13T23:31:40Z", "SUCCEEDED", ptr(int64(1234567900000))},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			e, err := FromEventBridge(loadEventBridge(t, tt.fixture), agentTags, PayloadsKeep)
			if err != nil {
				t.Fatalf("FromEventBridge: %v", err)
			}
			if e.ID != tt.wantID || e.Source != "aws.states" || e.Type != schema.TypeExecutionStatusChange ||
				!e.Time.Equal(mustTime(t, tt.wantTime)) ||
				e.Subject != "states/execution/arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123" {
				t.Errorf("envelope = %+v", e)
			}
			// The envelope validates on its own, as the appender will check it.
			again := e
			payload, err := schema.Validate(&again)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			p := payload.(*schema.ExecutionStatusChange)
			if p.Status != tt.wantStatus || p.StartDate != 1234567890000 || !reflect.DeepEqual(p.StopDate, tt.wantStopDate) {
				t.Errorf("payload = %+v", p)
			}
			if !p.IsAgent() || !reflect.DeepEqual(p.StateMachineTags, agentTags) {
				t.Errorf("stateMachineTags = %v, want %v", p.StateMachineTags, agentTags)
			}
			if got := schema.AgentName(p.StateMachineArn); got != "my-agent" {
				t.Errorf("AgentName = %q, want my-agent", got)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestFromEventBridgeKeepsEveryDetailMember(t *testing.T) {
	tests := []struct {
		name   string
		detail string
		tags   map[string]string
		want   string
	}{
		{
			name:   "nil tags leave the detail untouched",
			detail: "{\n  \"executionArn\": \"arn:aws:states:us-west-2:123:execution:m:e\",\n  \"stateMachineArn\": \"arn:aws:states:us-west-2:123:stateMachine:m\", \"name\": \"e\", \"status\": \"RUNNING\", \"startDate\": 1, \"stopDate\": null}",
			tags:   nil,
			want:   "{\n  \"executionArn\": \"arn:aws:states:us-west-2:123:execution:m:e\",\n  \"stateMachineArn\": \"arn:aws:states:us-west-2:123:stateMachine:m\", \"name\": \"e\", \"status\": \"RUNNING\", \"startDate\": 1, \"stopDate\": null}",
		},
		{
			name:   "tags are appended after the other members, kept in order and byte for byte",
			detail: `{"executionArn":"arn:aws:states:us-west-2:123:execution:m:e","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:m","name":"e","status":"RUNNING","startDate":1000,"redriveCount":0,"billingDetails":{"billedDurationInMilliseconds":1.0e2},"input":"{\"a\":\"<b>&\"}","inputDetails":{ "included" : true },"stopDate":null}`,
			tags:   map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent", "Owner": "a&b <team>"},
			want:   `{"executionArn":"arn:aws:states:us-west-2:123:execution:m:e","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:m","name":"e","status":"RUNNING","startDate":1000,"redriveCount":0,"billingDetails":{"billedDurationInMilliseconds":1.0e2},"input":"{\"a\":\"<b>&\"}","inputDetails":{ "included" : true },"stopDate":null,"stateMachineTags":{"Application":"StepFunctionsAgent","Owner":"a&b <team>","Type":"Agent"}}`,
		},
		{
			name:   "existing tags are replaced in place and a duplicate member is dropped",
			detail: `{"stateMachineTags":{"Stale":"x"},"executionArn":"arn:aws:states:us-west-2:123:execution:m:e","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:m","name":"e","status":"RUNNING","startDate":1,"stateMachineTags":null}`,
			tags:   map[string]string{"Type": "Agent"},
			want:   `{"stateMachineTags":{"Type":"Agent"},"executionArn":"arn:aws:states:us-west-2:123:execution:m:e","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:m","name":"e","status":"RUNNING","startDate":1}`,
		},
		{
			name:   "empty tags are written as an empty object",
			detail: `{"executionArn":"arn:aws:states:us-west-2:123:execution:m:e","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:m","name":"e","status":"RUNNING","startDate":1}`,
			tags:   map[string]string{},
			want:   `{"executionArn":"arn:aws:states:us-west-2:123:execution:m:e","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:m","name":"e","status":"RUNNING","startDate":1,"stateMachineTags":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := EventBridgeEvent{
				ID: "id-1", Source: "aws.states", DetailType: "Step Functions Execution Status Change",
				Time: time.Date(2025, 9, 29, 12, 34, 50, 0, time.UTC), Detail: json.RawMessage(tt.detail),
			}
			e, err := FromEventBridge(ev, tt.tags, PayloadsKeep)
			if err != nil {
				t.Fatalf("FromEventBridge: %v", err)
			}
			if string(e.Data) != tt.want {
				t.Errorf("data =\n%s\nwant\n%s", e.Data, tt.want)
			}
		})
	}
}

func TestFromEventBridgeKeepsRealDetailMembers(t *testing.T) {
	ev := loadEventBridge(t, "eventbridge/execution_failed_full.json")
	e, err := FromEventBridge(ev, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}, PayloadsKeep)
	if err != nil {
		t.Fatalf("FromEventBridge: %v", err)
	}
	var before, after map[string]json.RawMessage
	if err := json.Unmarshal(ev.Detail, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(e.Data, &after); err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 {
		t.Errorf("data has %d members, want the detail's %d plus stateMachineTags", len(after), len(before))
	}
	for k, v := range before {
		if !bytes.Equal(after[k], v) {
			t.Errorf("member %s = %s, want %s", k, after[k], v)
		}
	}
	if got := string(after["stateMachineTags"]); got != `{"Application":"StepFunctionsAgent","Type":"Agent"}` {
		t.Errorf("stateMachineTags = %s", got)
	}
}

func TestFromEventBridgeRejects(t *testing.T) {
	running := loadEventBridge(t, "eventbridge/seed002_running.json")
	tests := []struct {
		name     string
		edit     func(ev *EventBridgeEvent)
		wantIs   error
		wantText string
	}{
		{"another source", func(ev *EventBridgeEvent) { ev.Source = "aws.ec2" }, ErrNotStepFunctionsEvent,
			`ingest: not a Step Functions execution status change: source "aws.ec2", detail-type "Step Functions Execution Status Change"`},
		{"another detail-type", func(ev *EventBridgeEvent) { ev.DetailType = "AWS API Call via CloudTrail" }, ErrNotStepFunctionsEvent,
			`ingest: not a Step Functions execution status change: source "aws.states", detail-type "AWS API Call via CloudTrail"`},
		{"running with a stop date", func(ev *EventBridgeEvent) {
			ev.Detail = json.RawMessage(`{"executionArn":"arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:my-agent-prod","name":"abc123","status":"RUNNING","startDate":1234567890000,"stopDate":1234567900000}`)
		}, nil, "data.stopDate: must be absent while status is RUNNING"},
		{"succeeded without a stop date", func(ev *EventBridgeEvent) {
			ev.Detail = json.RawMessage(`{"executionArn":"arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123","stateMachineArn":"arn:aws:states:us-west-2:123:stateMachine:my-agent-prod","name":"abc123","status":"SUCCEEDED","startDate":1234567890000}`)
		}, nil, "data.stopDate: is required when status is SUCCEEDED"},
		{"detail is not an object", func(ev *EventBridgeEvent) { ev.Detail = json.RawMessage(`"RUNNING"`) }, nil,
			"data: must be a JSON object"},
		{"missing id and time", func(ev *EventBridgeEvent) { ev.ID = ""; ev.Time = time.Time{} }, nil,
			"id: is required; time: is required (RFC 3339)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := running
			tt.edit(&ev)
			_, err := FromEventBridge(ev, map[string]string{"Type": "Agent"}, PayloadsKeep)
			if err == nil {
				t.Fatal("FromEventBridge succeeded, want an error")
			}
			if err.Error() != tt.wantText {
				t.Errorf("error = %q, want %q", err, tt.wantText)
			}
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) {
					t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
				}
			} else if ve := (*schema.ValidationError)(nil); !errors.As(err, &ve) {
				t.Errorf("error %T is not a *schema.ValidationError", err)
			}
		})
	}
}

func TestEventBridgeRoundTripIsExact(t *testing.T) {
	for _, fixture := range []string{
		"eventbridge/seed002_running.json",
		"eventbridge/seed002_succeeded.json",
		"eventbridge/execution_failed_full.json",
	} {
		for _, tags := range []map[string]string{nil, {"Type": "Agent", "Application": "StepFunctionsAgent"}} {
			name := fixture + "/without tags"
			if tags != nil {
				name = fixture + "/with tags"
			}
			t.Run(name, func(t *testing.T) {
				ev := loadEventBridge(t, fixture)
				e, err := FromEventBridge(ev, tags, PayloadsKeep)
				if err != nil {
					t.Fatalf("FromEventBridge: %v", err)
				}
				back, err := ToEventBridge(e)
				if err != nil {
					t.Fatalf("ToEventBridge: %v", err)
				}
				// The native event comes back as EventBridge sent it, except
				// for the tags, which stay in the detail.
				wantEv := ev
				wantEv.Detail = e.Data
				if !reflect.DeepEqual(back, wantEv) {
					t.Errorf("EventBridge round trip:\n got %+v\nwant %+v", back, wantEv)
				}
				if tags == nil && !bytes.Equal(back.Detail, ev.Detail) {
					t.Errorf("detail changed without tags:\n got %s\nwant %s", back.Detail, ev.Detail)
				}
				again, err := FromEventBridge(back, nil, PayloadsKeep)
				if err != nil {
					t.Fatalf("FromEventBridge(ToEventBridge(e), PayloadsKeep): %v", err)
				}
				if !reflect.DeepEqual(again, e) {
					t.Errorf("event round trip:\n got %+v\nwant %+v", again, e)
				}
				// Re-tagging a simulated event with the same tags is a no-op.
				if tags != nil {
					retagged, err := FromEventBridge(back, tags, PayloadsKeep)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(retagged, e) {
						t.Errorf("retagged event:\n got %s\nwant %s", retagged.Data, e.Data)
					}
				}
			})
		}
	}
}

func TestToEventBridgeRejectsEventsWithoutExactNativeForm(t *testing.T) {
	valid, err := FromEventBridge(loadEventBridge(t, "eventbridge/seed002_running.json"), nil, PayloadsKeep)
	if err != nil {
		t.Fatal(err)
	}
	job, err := FromGitHubDelivery(jobDelivery(t, "github/workflow_job_queued.json", "d-1"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		edit     func(e *schema.Event)
		wantIs   error
		wantText string
	}{
		{"workflow_job event", func(e *schema.Event) { *e = job }, ErrNoNativeForm,
			`ingest: event has no exact native form: type "github.workflow_job.queued" is not "aws.states.execution_status_change"`},
		{"another source", func(e *schema.Event) { e.Source = "streamfold/simulate" }, ErrNoNativeForm,
			`ingest: event has no exact native form: source "streamfold/simulate" is not "aws.states"`},
		{"invalid detail", func(e *schema.Event) {
			e.Data = json.RawMessage(strings.Replace(string(e.Data), `"RUNNING"`, `"PAUSED"`, 1))
		}, nil, `data.status: must be one of RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, got "PAUSED"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := valid
			tt.edit(&e)
			_, err := ToEventBridge(e)
			checkError(t, "ToEventBridge", err, tt.wantText, tt.wantIs)
		})
	}
}

// ghesFixtures are the deliveries of older GitHub Enterprise Server versions
// (testdata/github_ghes: no created_at, no run_attempt, the action
// "started") and what they become.
var ghesFixtures = []struct {
	fixture, delivery, wantType, wantTime string
}{
	{"github_ghes/workflow_job_queued.json", "5d1e7f00-f5d2-11eb-8a1b-2a3c4d5e6f70", schema.TypeJobQueued, "2021-08-05T10:34:51Z"},
	{"github_ghes/workflow_job_started.json", "6a2f8e10-f5d2-11eb-9b2c-3b4d5e6f7081", schema.TypeJobInProgress, "2021-08-05T10:34:58Z"},
	{"github_ghes/workflow_job_completed.json", "7b3a9f20-f5d2-11eb-8c3d-4c5e6f708192", schema.TypeJobCompleted, "2021-08-05T10:38:16Z"},
}

// checkGHESEvent checks an event made of a GHES fixture's body.
func checkGHESEvent(t *testing.T, e schema.Event, delivery, wantType, wantTime string, body []byte) {
	t.Helper()
	want := schema.Event{
		SpecVersion: "1.0", ID: delivery, Source: "https://github.com/Octocoders", Type: wantType,
		Subject: "github/0/job/289782451", Time: mustTime(t, wantTime), Data: body,
	}
	got := e
	got.RecordedAt = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("event =\n%+v\nwant\n%+v", got, want)
	}
	p, err := schema.Validate(&e)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	wj := p.(*schema.WorkflowJobWebhook)
	if wj.Action != strings.TrimPrefix(wantType, schema.WorkflowJobTypePrefix) || wj.WorkflowJob.RunAttempt != 1 || wj.WorkflowJob.CreatedAt != nil {
		t.Errorf("payload action %q, run_attempt %d, created_at %v; want the type's action, 1 and none",
			wj.Action, wj.WorkflowJob.RunAttempt, wj.WorkflowJob.CreatedAt)
	}
}

// TestFromGitHubDeliveryGHES: older GHES deliveries are accepted with the
// documented fallbacks, their data kept byte for byte (action "started"
// included), and they go back to the same native delivery.
func TestFromGitHubDeliveryGHES(t *testing.T) {
	for _, tt := range ghesFixtures {
		t.Run(tt.fixture, func(t *testing.T) {
			d := jobDelivery(t, tt.fixture, tt.delivery)
			e, err := FromGitHubDelivery(d, time.Date(2021, 8, 5, 11, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatalf("FromGitHubDelivery: %v", err)
			}
			checkGHESEvent(t, e, tt.delivery, tt.wantType, tt.wantTime, readTestdata(t, tt.fixture))
			back, err := ToGitHubDelivery(e)
			if err != nil {
				t.Fatalf("ToGitHubDelivery: %v", err)
			}
			if !reflect.DeepEqual(back.Headers, map[string]string{HeaderGitHubEvent: "workflow_job", HeaderGitHubDelivery: tt.delivery}) ||
				!bytes.Equal(back.Body, d.Body) {
				t.Errorf("native delivery differs: %v", back.Headers)
			}
		})
	}
	// Without started_at either, a queued body's time is when it was received.
	d := jobDelivery(t, "github_ghes/workflow_job_queued.json", "d-no-times")
	d.Body = editJSON(t, d.Body, func(m map[string]any) { delete(sub(m, "workflow_job"), "started_at") })
	received := time.Date(2021, 8, 5, 11, 0, 0, 0, time.UTC)
	e, err := FromGitHubDelivery(d, received)
	if err != nil {
		t.Fatalf("FromGitHubDelivery: %v", err)
	}
	if !e.Time.Equal(received) {
		t.Errorf("time = %s, want the received time %s", e.Time, received)
	}
}

// TestWebhookHandlerGHES posts the older GHES deliveries to the webhook
// handler over HTTP, signed as GitHub signs them (HMAC-SHA256 of the exact
// fixture bytes): each is accepted (202), not refused (400).
func TestWebhookHandlerGHES(t *testing.T) {
	h, a, _ := newTestWebhook(t, 0)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for i, tt := range ghesFixtures {
		body := readTestdata(t, tt.fixture)
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/github", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "GitHub-Hookshot/044aadd")
		// What a GitHub Enterprise Server adds to its deliveries.
		req.Header.Set("X-GitHub-Enterprise-Host", "ghe.example.com")
		req.Header.Set("X-GitHub-Enterprise-Version", "3.3.0")
		req.Header.Set(HeaderGitHubEvent, "workflow_job")
		req.Header.Set(HeaderGitHubDelivery, tt.delivery)
		req.Header.Set(HeaderHubSignature, sign(testSecret, body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || string(bytes.TrimSpace(reply)) != `{"id":"`+tt.delivery+`","status":"accepted"}` {
			t.Fatalf("%s: %d %s, want 202 accepted", tt.fixture, resp.StatusCode, reply)
		}
		got := a.appended()
		if len(got) != i+1 {
			t.Fatalf("%s: %d events appended, want %d", tt.fixture, len(got), i+1)
		}
		checkGHESEvent(t, got[i], tt.delivery, tt.wantType, tt.wantTime, body)
	}
}

// TestEmitGHES emits the older GHES deliveries as `streamfold emit` reads
// them ({"headers":...,"body":...} lines): all three accepted, none
// rejected.
func TestEmitGHES(t *testing.T) {
	var in bytes.Buffer
	var bodies [][]byte
	for _, tt := range ghesFixtures {
		var body bytes.Buffer
		if err := json.Compact(&body, readTestdata(t, tt.fixture)); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, body.Bytes())
		fmt.Fprintf(&in, `{"headers":{"X-GitHub-Event":"workflow_job","X-GitHub-Delivery":%q},"body":%s}`+"\n", tt.delivery, body.Bytes())
	}
	a := &recordingAppender{}
	sum, err := Emit(context.Background(), &in, a, EmitConfig{Now: func() time.Time { return time.Date(2021, 8, 5, 11, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Accepted != 3 || len(sum.Rejected) != 0 || len(sum.Failed) != 0 {
		t.Fatalf("emit summary %+v, want 3 accepted", sum)
	}
	for i, tt := range ghesFixtures {
		checkGHESEvent(t, a.appended()[i], tt.delivery, tt.wantType, tt.wantTime, bodies[i])
	}
}

// TestEmitRedrive emits a redriven execution's EventBridge events (the
// redrive fixtures of testdata/eventbridge, in the order EventBridge may
// deliver them) as `streamfold emit` reads native lines: all accepted, the
// redrive members decoded.
func TestEmitRedrive(t *testing.T) {
	fixtures := []struct {
		name   string
		status string
		count  int
	}{
		{"eventbridge/redrive_attempt1_running.json", "RUNNING", 1},
		{"eventbridge/redrive_attempt0_running.json", "RUNNING", 0},
		{"eventbridge/redrive_attempt1_succeeded.json", "SUCCEEDED", 1},
		{"eventbridge/execution_failed_full.json", "FAILED", 0},
	}
	var in bytes.Buffer
	for _, f := range fixtures {
		if err := json.Compact(&in, readTestdata(t, f.name)); err != nil {
			t.Fatal(err)
		}
		in.WriteByte('\n')
	}
	tags := StaticTags{"arn:aws:states:us-east-1:123456789012:stateMachine:research-agent-prod": {"Type": "Agent", "Application": "StepFunctionsAgent"}}
	a := &recordingAppender{}
	sum, err := Emit(context.Background(), &in, a, EmitConfig{Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Accepted != 4 || len(sum.Rejected) != 0 || sum.Skipped != 0 {
		t.Fatalf("emit summary %+v, want 4 accepted", sum)
	}
	for i, f := range fixtures {
		e := a.appended()[i]
		p, err := schema.Validate(&e)
		if err != nil {
			t.Fatal(err)
		}
		d := p.(*schema.ExecutionStatusChange)
		if d.Status != f.status || d.RedriveCount != f.count || (f.count > 0) != (d.RedriveDate != nil) || d.StartDate != 1759149290000 {
			t.Errorf("%s: status %s, redriveCount %d, redriveDate %v, startDate %d", f.name, d.Status, d.RedriveCount, d.RedriveDate, d.StartDate)
		}
	}
}

// checkError checks that op failed with err, whose text is wantText and
// which wraps wantIs when that is set.
func checkError(t *testing.T, op string, err error, wantText string, wantIs error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded, want an error", op)
	}
	if err.Error() != wantText {
		t.Errorf("error = %q, want %q", err, wantText)
	}
	if wantIs != nil && !errors.Is(err, wantIs) {
		t.Errorf("errors.Is(%v, %v) = false", err, wantIs)
	}
}

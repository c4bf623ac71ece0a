package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

func TestValidateSeedExamples(t *testing.T) {
	wantSubjects := map[string]string{
		"seed002-running":                      "states/execution/arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123",
		"seed001-extracted":                    "albums/execution/6f1c1f9e-3b7a-4a53-9d55-2a0b8f4f1c01",
		"seed001-task":                         "albums/task/task-abc123",
		"2f9c2b70-0a41-11f0-8f1e-6b6a5c1f0d01": "github/12345/job/67890",
		"seed003-scheduled":                    "github/12345/job/67890",
		"seed003-deployment":                   "github/12345/deployment/789",
		"seed004-failed":                       "messages/550e8400-e29b-41d4-a716-446655440000",
	}
	events := testenv.LoadEvents(t, "testdata/valid.ndjson")
	seen := map[string]bool{}
	for _, e := range events {
		t.Run(e.ID, func(t *testing.T) {
			p, err := schema.Validate(&e)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if p.Subject() != e.Subject {
				t.Fatalf("subject %q, payload says %q", e.Subject, p.Subject())
			}
			if want, ok := wantSubjects[e.ID]; ok && e.Subject != want {
				t.Fatalf("subject = %q, want %q", e.Subject, want)
			}
			if e.SpecVersion != "1.0" {
				t.Fatalf("specversion = %q", e.SpecVersion)
			}
		})
		seen[e.Type] = true
	}
	for _, domain := range []string{"aws.states.", "album.", "github.", "runson.", "rez."} {
		found := false
		for typ := range seen {
			found = found || strings.HasPrefix(typ, domain)
		}
		if !found {
			t.Errorf("no fixture for %s*", domain)
		}
	}
}

// base returns a valid event of the given fixture id, for mutation.
func base(t *testing.T, id string) schema.Event {
	t.Helper()
	for _, e := range testenv.LoadEvents(t, "testdata/valid.ndjson") {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no fixture %s", id)
	return schema.Event{}
}

// withData replaces data fields (a nil value deletes the field).
func withData(t *testing.T, e schema.Event, set map[string]any) schema.Event {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Data, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	e.Data = b
	return e
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T) schema.Event
		want string
	}{
		{"album year out of range", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed001-extracted"), map[string]any{"year": 1850})
		}, "data.year: must be between 1900 and 2100"},
		{"album name too long and artist missing", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed001-extracted"), map[string]any{"albumName": strings.Repeat("x", 201), "artist": nil})
		}, "data.albumName: must be at most 200 characters; data.artist: is required"},
		{"data not UTF-8", func(t *testing.T) schema.Event {
			e := base(t, "seed004-created")
			e.Data = append(append([]byte(nil), e.Data[:len(e.Data)-1]...), []byte(",\"x\":\"\xe5\"}")...)
			return e
		}, "data: must be UTF-8 (RFC 8259)"},
		{"year wrong JSON type", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed001-extracted"), map[string]any{"year": "1973"})
		}, "data.year: must be a JSON number, got string"},
		{"fractional integer", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed002-running"), map[string]any{"startDate": 1.5})
		}, "data.startDate: must be an integer, got number 1.5"},
		{"price confidence above 1", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed001-priced"), map[string]any{"priceConfidence": 1.5})
		}, "data.priceConfidence: must be between 0 and 1"},
		{"workflow type unknown and execution id not uuid", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed001-started"), map[string]any{"workflowType": "lambda", "executionId": "exec-123"})
		}, `data.workflowType: must be one of step-functions, durable-functions, got "lambda"; data.executionId: must be a UUID`},
		{"completed without cost", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed001-completed"), map[string]any{"estimatedCost": nil})
		}, "data.estimatedCost: is required when the execution completes"},
		{"sfn terminal without stopDate", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed002-succeeded"), map[string]any{"stopDate": nil})
		}, "data.stopDate: is required when status is SUCCEEDED"},
		{"sfn unknown status", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed002-running"), map[string]any{"status": "PENDING"})
		}, `data.status: must be one of RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, got "PENDING"`},
		{"job id missing", func(t *testing.T) schema.Event {
			e := base(t, "2f9c2b70-0a41-11f0-8f1e-6b6a5c1f0d01")
			e.Data = []byte(strings.Replace(string(e.Data), `"id":67890,`, "", 1))
			return e
		}, "data.workflow_job.id: must be a positive integer"},
		{"action does not match type", func(t *testing.T) schema.Event {
			e := base(t, "2f9c2b70-0a41-11f0-8f1e-6b6a5c1f0d01")
			e.Type = schema.TypeJobWaiting
			return e
		}, `data.action: must match the event type "github.workflow_job.waiting"`},
		{"runner lifecycle unknown", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed003-scheduled"), map[string]any{"instance_lifecycle": "reserved"})
		}, `data.instance_lifecycle: must be one of on-demand, spot, got "reserved"`},
		{"message failed without error", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed004-failed"), map[string]any{"error_message": nil})
		}, "data.error_message: is required"},
		{"message stage unknown", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed004-created"), map[string]any{"stage": "qa"})
		}, `data.stage: must be one of dev, stage, prod, got "qa"`},
		{"hello without text", func(t *testing.T) schema.Event {
			return withData(t, base(t, "seed004-created"), map[string]any{"payload": map[string]any{"priority": "default"}})
		}, "data.payload.text: is required for scheduled_hello"},
		{"envelope fields missing", func(t *testing.T) schema.Event {
			e := base(t, "seed004-created")
			e.ID, e.Source = "", ""
			e.Time = time.Time{}
			return e
		}, "id: is required; source: is required; time: is required (RFC 3339)"},
		{"unknown type", func(t *testing.T) schema.Event {
			e := base(t, "seed004-created")
			e.Type = "rez.message.archived"
			return e
		}, `type: unknown event type "rez.message.archived"`},
		{"data not an object", func(t *testing.T) schema.Event {
			e := base(t, "seed004-created")
			e.Data = []byte(`[1,2]`)
			return e
		}, "data: must be a JSON object"},
		{"subject disagrees with data", func(t *testing.T) schema.Event {
			e := base(t, "seed004-created")
			e.Subject = "messages/other"
			return e
		}, `subject: must be "messages/550e8400-e29b-41d4-a716-446655440000" (derived from data), got "messages/other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.make(t)
			_, err := schema.Validate(&e)
			if err == nil {
				t.Fatalf("Validate: no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("Validate error\n got: %s\nwant: %s", err, tt.want)
			}
			var ve *schema.ValidationError
			if !errors.As(err, &ve) || !ve.Permanent() {
				t.Fatalf("error %T is not a permanent *ValidationError", err)
			}
		})
	}
}

func TestUnknownTypeIsMatchable(t *testing.T) {
	e := schema.Event{ID: "x", Source: "s", Type: "nope", Time: base(t, "seed004-created").Time, Data: []byte(`{}`)}
	_, err := schema.Validate(&e)
	if !errors.Is(err, schema.ErrUnknownType) {
		t.Fatalf("errors.Is(%v, ErrUnknownType) = false", err)
	}
}

func TestAgentName(t *testing.T) {
	tests := []struct{ arn, want string }{
		{"arn:aws:states:us-west-2:123:stateMachine:my-agent-prod", "my-agent"},
		{"arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123", "my-agent"},
		{"arn:aws:states:us-west-2:123:stateMachine:research-agent-dev", "research-agent"},
		{"arn:aws:states:us-west-2:123:stateMachine:plain", "plain"},
		{"arn:aws:states:us-west-2:123:stateMachine:-prod", "-prod"},
		{"not-an-arn", ""},
	}
	for _, tt := range tests {
		if got := schema.AgentName(tt.arn); got != tt.want {
			t.Errorf("AgentName(%q) = %q, want %q", tt.arn, got, tt.want)
		}
	}
}

func TestItemRoundTrip(t *testing.T) {
	for _, e := range testenv.LoadEvents(t, "testdata/valid.ndjson") {
		if _, err := schema.Validate(&e); err != nil {
			t.Fatal(err)
		}
		now := e.Time.Add(3)
		e.RecordedAt = &now
		item, err := schema.Item(e, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := schema.EventFromItem(item)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(e)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Fatalf("round trip\n got: %s\nwant: %s", b, a)
		}
	}
}

func TestAlbumOutcomeBounds(t *testing.T) {
	for _, tc := range []struct {
		data, want string
	}{
		{`{"workflowType":"step-functions","executionId":"3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b","durationMs":31622400001,"estimatedCost":0.1}`, "data.durationMs: must be between 0 and 31622400000 (366 days)"},
		{`{"workflowType":"step-functions","executionId":"3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b","durationMs":1,"estimatedCost":0.0000000001}`, "data.estimatedCost: must have at most 9 decimal places (nano-dollars)"},
		{`{"workflowType":"step-functions","executionId":"3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b","durationMs":1,"estimatedCost":0.000000001}`, ""},
	} {
		e := schema.Event{ID: "x", Source: "streamfold.albums/step-functions", Type: schema.TypeAlbumExecutionCompleted, Time: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Data: []byte(tc.data)}
		_, err := schema.Validate(&e)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.data, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want %q", tc.data, err, tc.want)
		}
	}
}

package schema_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

func TestJobAction(t *testing.T) {
	for in, want := range map[string]string{
		"started": "in_progress", "in_progress": "in_progress", "queued": "queued",
		"waiting": "waiting", "completed": "completed", "requested": "requested", "": "",
	} {
		if got := schema.JobAction(in); got != want {
			t.Errorf("JobAction(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWorkflowJobOlderGHES: the fallbacks for payloads of older GitHub
// Enterprise Server versions, as decoded and validated.
func TestWorkflowJobOlderGHES(t *testing.T) {
	const repo = `"repository":{"full_name":"Codertocat/Hello-World","owner":{"login":"Octocoders"}}`
	tests := []struct {
		name        string
		typ         string
		data        string
		wantAction  string
		wantAttempt int
		wantTime    string // EventTime, "" for none
		wantErr     string
	}{
		{"no run_attempt, no created_at", schema.TypeJobQueued,
			`{"action":"queued","workflow_job":{"id":1,"run_id":2,"name":"tests","status":"queued","started_at":"2021-08-05T10:34:51Z"},` + repo + `}`,
			"queued", 1, "2021-08-05T10:34:51Z", ""},
		{"run_attempt null", schema.TypeJobQueued,
			`{"action":"queued","workflow_job":{"id":1,"run_id":2,"run_attempt":null,"name":"tests","created_at":"2021-08-05T10:34:50Z"},` + repo + `}`,
			"queued", 1, "2021-08-05T10:34:50Z", ""},
		{"run_attempt kept when sent", schema.TypeJobQueued,
			`{"action":"queued","workflow_job":{"id":1,"run_id":2,"run_attempt":3,"name":"tests","created_at":"2021-08-05T10:34:50Z"},` + repo + `}`,
			"queued", 3, "2021-08-05T10:34:50Z", ""},
		{"queued without any time", schema.TypeJobQueued,
			`{"action":"queued","workflow_job":{"id":1,"run_id":2,"name":"tests"},` + repo + `}`,
			"queued", 1, "", ""},
		{"started is in_progress", schema.TypeJobInProgress,
			`{"action":"started","workflow_job":{"id":1,"run_id":2,"name":"tests","status":"in_progress","started_at":"2021-08-05T10:34:58Z"},` + repo + `}`,
			"in_progress", 1, "2021-08-05T10:34:58Z", ""},
		{"started under the type started is no event type", "github.workflow_job.started",
			`{"action":"started","workflow_job":{"id":1,"run_id":2,"name":"tests","started_at":"2021-08-05T10:34:58Z"},` + repo + `}`,
			"", 0, "", `type: unknown event type "github.workflow_job.started"`},
		{"started under the type queued", schema.TypeJobQueued,
			`{"action":"started","workflow_job":{"id":1,"run_id":2,"name":"tests","started_at":"2021-08-05T10:34:58Z"},` + repo + `}`,
			"", 0, "", `data.action: must match the event type "github.workflow_job.queued"`},
		{"run_attempt 0 is refused, not defaulted", schema.TypeJobQueued,
			`{"action":"queued","workflow_job":{"id":1,"run_id":2,"run_attempt":0,"name":"tests"},` + repo + `}`,
			"", 0, "", "data.workflow_job.run_attempt: must be at least 1"},
		{"completed without created_at", schema.TypeJobCompleted,
			`{"action":"completed","workflow_job":{"id":1,"run_id":2,"name":"tests","conclusion":"success","started_at":"2021-08-05T10:34:58Z","completed_at":"2021-08-05T10:38:16Z"},` + repo + `}`,
			"completed", 1, "2021-08-05T10:38:16Z", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := schema.Event{ID: "d", Source: "https://github.com/Octocoders", Type: tt.typ,
				Time: time.Date(2021, 8, 5, 11, 0, 0, 0, time.UTC), Data: json.RawMessage(tt.data)}
			p, err := schema.Validate(&e)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Validate error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			wj := p.(*schema.WorkflowJobWebhook)
			if wj.Action != tt.wantAction || wj.WorkflowJob.RunAttempt != tt.wantAttempt {
				t.Errorf("action %q, run_attempt %d; want %q, %d", wj.Action, wj.WorkflowJob.RunAttempt, tt.wantAction, tt.wantAttempt)
			}
			got := ""
			if et := wj.EventTime(); !et.IsZero() {
				got = et.Format(time.RFC3339)
			}
			if got != tt.wantTime {
				t.Errorf("EventTime = %q, want %q", got, tt.wantTime)
			}
		})
	}
}

// TestWorkflowJobDecodeIntoUsedValue: decoding into a value that already
// holds a payload gives the new payload alone, fallbacks included.
func TestWorkflowJobDecodeIntoUsedValue(t *testing.T) {
	var p schema.WorkflowJobWebhook
	if err := json.Unmarshal([]byte(`{"action":"completed","workflow_job":{"id":1,"run_attempt":4,"conclusion":"success"}}`), &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"action":"started","workflow_job":{"id":2}}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Action != "in_progress" || p.WorkflowJob.ID != 2 || p.WorkflowJob.RunAttempt != 1 || p.WorkflowJob.Conclusion != nil {
		t.Errorf("decoded %+v, want the second payload alone with run_attempt 1", p)
	}
}

package seed003

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

func TestFoldWebhookIndexKeys(t *testing.T) {
	created := time.Date(2025, 1, 15, 10, 0, 1, 123e6, time.UTC)
	started := created.Add(24 * time.Second)
	received := created.Add(time.Second)
	wh := func(action string) *schema.WorkflowJobWebhook {
		p := &schema.WorkflowJobWebhook{
			Action:       action,
			WorkflowJob:  schema.WorkflowJob{ID: 67890, RunID: 54321, RunAttempt: 1, Name: "build", WorkflowName: "CI", CreatedAt: &created, Labels: []string{"runs-on"}},
			Repository:   schema.GitHubRepo{FullName: "runs-on/test", DefaultBranch: "main"},
			Installation: &schema.GitHubID{ID: 12345},
		}
		if action != "queued" {
			p.WorkflowJob.StartedAt = &started
		}
		return p
	}
	raw := json.RawMessage(`{"repository":{"custom_properties":{"team":"backend"}}}`)
	queued := foldWebhook(nil, wh("queued"), raw, received)
	running := foldWebhook(queued, wh("in_progress"), raw, received.Add(time.Minute))
	late := foldWebhook(running, wh("queued"), raw, received.Add(2*time.Minute))
	tests := []struct {
		name string
		it   Item
		want map[string]string
	}{
		{"queued", queued, map[string]string{attrPK: "12345#67890", gsi1PK: "12345#queued", gsi2PK: "12345#runs-on/test", gsi3PK: "12345#54321#1", attrCreated: "2025-01-15T10:00:01.123Z", "status": "queued", "received_at": "2025-01-15T10:00:02.123Z"}},
		{"in_progress moves GSI1", running, map[string]string{gsi1PK: "12345#in_progress", "status": "in_progress", "started_at": "2025-01-15T10:00:25.123Z", "received_at": "2025-01-15T10:00:02.123Z"}},
		{"a late queued does not move it back", late, map[string]string{gsi1PK: "12345#in_progress", "status": "in_progress", "last_updated_at": "2025-01-15T10:02:02.123Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, want := range tt.want {
				if got := str(tt.it, name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
	if _, ok := running["overall_queue_duration_in_ms"]; !ok {
		t.Error("in_progress: no overall_queue_duration_in_ms")
	}
	if _, ok := queued["custom_properties"]; !ok {
		t.Error("queued: no custom_properties")
	}
	if ch := changes(running, late); len(ch) != 0 {
		t.Errorf("late queued changes %v, want none", ch)
	}
}

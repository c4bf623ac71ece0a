package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/query/querytest"
)

// TestAPIIntegration serves the fixture from DynamoDB Local over a real
// HTTP server and checks each route family end to end.
func TestAPIIntegration(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	ctx := context.Background()
	if err := querytest.Load(ctx, c.DynamoDB, n, querytest.Fixture(), querytest.FixtureRecordedAt); err != nil {
		t.Fatal(err)
	}
	q, err := query.New(c.DynamoDB, n, query.Config{CursorKey: cursorKey, JobFold: func() query.JobFold { return projector.NewJobFold() }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Queries: q, Token: token, Now: func() time.Time { return fixedNow }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return res.StatusCode, body
	}

	// Paging my-agent's executions one per page: newest first, all three.
	var arns []string
	path := "/api/executions?agent=my-agent&limit=1"
	for pages := 0; ; pages++ {
		status, body := get(path)
		if status != 200 || pages > 5 {
			t.Fatalf("%s: %d %v", path, status, body)
		}
		for _, it := range body["items"].([]any) {
			arns = append(arns, it.(map[string]any)["executionArn"].(string))
		}
		next := body["next"].(string)
		if next == "" {
			break
		}
		path = "/api/executions?agent=my-agent&limit=1&cursor=" + url.QueryEscape(next)
	}
	want := []string{
		"arn:aws:states:us-west-2:123456789012:execution:my-agent-prod:ghi789",
		"arn:aws:states:us-west-2:123456789012:execution:my-agent-prod:def456",
		"arn:aws:states:us-west-2:123456789012:execution:my-agent-prod:abc123",
	}
	if len(arns) != len(want) || arns[0] != want[0] || arns[1] != want[1] || arns[2] != want[2] {
		t.Fatalf("my-agent executions %v, want %v", arns, want)
	}

	checks := []struct {
		path  string
		check func(map[string]any) bool
	}{
		{"/api/executions/" + url.PathEscape(want[1]), func(b map[string]any) bool { return b["status"] == "FAILED" && b["durationSeconds"] == float64(120) }},
		{"/api/executions?status=RUNNING", func(b map[string]any) bool { return len(b["items"].([]any)) == 1 }},
		{"/api/workflows/executions/3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b", func(b map[string]any) bool {
			return b["execution"].(map[string]any)["status"] == "completed" && len(b["albums"].([]any)) == 2
		}},
		{"/api/workflows/running", func(b map[string]any) bool { return len(b["items"].([]any)) == 1 }},
		{"/api/workflows/tasks/pending?workflowType=durable-functions", func(b map[string]any) bool {
			items := b["items"].([]any)
			return len(items) == 1 && items[0].(map[string]any)["taskId"] == "task-xyz789"
		}},
		{"/api/metrics?date=2030-01-15&workflowType=step-functions", func(b map[string]any) bool {
			return b["executionCount"] == float64(2) && b["successCount"] == float64(1)
		}},
		{"/api/metrics/compare?date=2030-01-15", func(b map[string]any) bool {
			return b["stepFunctions"] != nil && b["durableFunctions"] != nil && b["ratios"].(map[string]any)["executionCount"] == 1.0
		}},
		{"/api/jobs/12345/67890", func(b map[string]any) bool { return b["status"] == "completed" && b["was_interrupted"] == true }},
		{"/api/jobs?installation=12345&stuckHours=6", func(b map[string]any) bool {
			items := b["items"].([]any)
			return len(items) == 1 && items[0].(map[string]any)["job_id"] == float64(67999)
		}},
		{"/api/jobs?installation=12345&repo=runs-on/test&since=2030-01-01T00:00:00Z", func(b map[string]any) bool {
			st := b["stats"].(map[string]any)
			return st["jobs"] == float64(4) && st["completed"] == float64(2) && st["failed"] == float64(1) && st["successRate"] == 0.5
		}},
		{"/api/runs/12345/54321/1", func(b map[string]any) bool { return b["complete"] == false && len(b["jobs"].([]any)) == 3 }},
		{"/api/jobs/12345/67895/duplicates", func(b map[string]any) bool {
			g := b["groups"].([]any)
			return len(g) == 1 && g[0].(map[string]any)["action"] == "queued" && g[0].(map[string]any)["count"] == float64(2)
		}},
		{"/api/jobs/12345/67890/timeline", func(b map[string]any) bool { return len(b["events"].([]any)) >= 10 }},
		{"/api/messages/550e8400-e29b-41d4-a716-446655440000", func(b map[string]any) bool { return b["status"] == "completed" }},
		{"/api/messages?stage=dev", func(b map[string]any) bool { return len(b["items"].([]any)) == 2 }},
		{"/api/messages?status=failed&stage=dev", func(b map[string]any) bool { return len(b["items"].([]any)) == 1 }},
	}
	for _, ck := range checks {
		status, body := get(ck.path)
		if status != 200 || !ck.check(body) {
			b, _ := json.Marshal(body)
			t.Errorf("%s: %d %s", ck.path, status, b)
		}
	}
	if status, body := get("/api/jobs/12345/1"); status != 404 || body["error"].(map[string]any)["code"] != "not_found" {
		t.Errorf("missing job: %d %v", status, body)
	}
}

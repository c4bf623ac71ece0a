package projector_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// ghesDeliveries returns the older GitHub Enterprise Server deliveries of
// ingest/testdata/github_ghes (no created_at, no run_attempt, the action
// "started"), converted as the webhook handler converts them.
func ghesDeliveries(t testing.TB) (queued, started, completed foldEvent) {
	t.Helper()
	received := time.Date(2021, 8, 5, 10, 40, 0, 0, time.UTC)
	load := func(name, id string) foldEvent {
		body, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "github_ghes", name))
		if err != nil {
			t.Fatal(err)
		}
		e, err := ingest.FromGitHubDelivery(ingest.GitHubDelivery{
			Headers: map[string]string{ingest.HeaderGitHubEvent: ingest.GitHubEventWorkflowJob, ingest.HeaderGitHubDelivery: id},
			Body:    body,
		}, received)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := schema.Validate(&e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return foldEvent{e, p}
	}
	return load("workflow_job_queued.json", "5d1e7f00-f5d2-11eb-8a1b-2a3c4d5e6f70"),
		load("workflow_job_started.json", "6a2f8e10-f5d2-11eb-9b2c-3b4d5e6f7081"),
		load("workflow_job_completed.json", "7b3a9f20-f5d2-11eb-8c3d-4c5e6f708192")
}

// ghesJobItem is the workflow_jobs item of the whole GHES lifecycle, every
// attribute (ttl aside, which counts from when the events were recorded).
var ghesJobItem = map[string]any{
	"pk": "0#289782451", "sk": "v", "installation_id": 0, "job_id": 289782451,
	"run_id": 2202229078, "run_attempt": 1, // no run_attempt: 1
	"org_name": "Octocoders", "repo_full_name": "Codertocat/Hello-World", "repo_is_private": false,
	"default_branch": "master", "job_name": "tests", "head_sha": "3484a3fb816e0859fd6e1cea078d76385ff50625",
	"job_html_url": "https://github.com/octo-org/octo-repo/runs/1291536064",
	"status":       "completed", "conclusion": "success",
	"created_at":                   "2021-08-05T10:34:51.000Z", // no created_at: the earliest known time, the queued body's started_at
	"started_at":                   "2021-08-05T10:34:58.000Z",
	"completed_at":                 "2021-08-05T10:38:16.000Z",
	"overall_queue_duration_in_ms": 7000,
	"runner_id":                    5, "runner_name": "GitHub Actions 5", "runner_group_id": 2,
	"labels":          &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ubuntu-latest"}}},
	"was_interrupted": false,
	// What the old payloads lack stays absent.
	"workflow_name": nil, "head_branch": nil, "workflow_id": nil, "scheduled_at": nil, "internal_queue_duration_in_ms": nil,
}

// TestJobGHESFallbacks folds the older GHES deliveries in several orders:
// they are accepted, "started" counts as in_progress, run_attempt is 1, and
// created_at is the earliest time known of the job until a delivery that
// carries created_at says otherwise.
func TestJobGHESFallbacks(t *testing.T) {
	queued, started, completed := ghesDeliveries(t)
	if started.E.Type != schema.TypeJobInProgress {
		t.Fatalf("started delivery has type %s, want %s", started.E.Type, schema.TypeJobInProgress)
	}
	modern := foldEv(t, "d-modern", schema.TypeJobCompleted, "2021-08-05T10:38:16Z", map[string]any{
		"action": "completed",
		"workflow_job": map[string]any{"id": 289782451, "run_id": 2202229078, "run_attempt": 1, "name": "tests", "status": "completed",
			"conclusion": "success", "created_at": "2021-08-05T10:34:40Z", "started_at": "2021-08-05T10:34:58Z", "completed_at": "2021-08-05T10:38:16Z"},
		"repository": map[string]any{"full_name": "Codertocat/Hello-World", "owner": map[string]any{"login": "Octocoders"}},
	})
	// A queued body without started_at either: its time is when the
	// delivery was received (FromGitHubDelivery's fallback).
	bare := foldEv(t, "d-bare", schema.TypeJobQueued, "2021-08-05T10:40:00Z", map[string]any{
		"action":       "queued",
		"workflow_job": map[string]any{"id": 289782451, "run_id": 2202229078, "name": "tests", "status": "queued"},
		"repository":   map[string]any{"full_name": "Codertocat/Hello-World", "owner": map[string]any{"login": "Octocoders"}},
	})
	tests := []struct {
		name  string
		order []foldEvent
		want  map[string]any
	}{
		{"queued without any time: the delivery's", []foldEvent{bare}, map[string]any{"status": "queued", "run_attempt": 1,
			"created_at": "2021-08-05T10:40:00.000Z"}},
		{"queued without any time, then started", []foldEvent{bare, started}, map[string]any{"status": "in_progress",
			"created_at": "2021-08-05T10:34:58.000Z"}},
		{"queued", []foldEvent{queued}, map[string]any{"status": "queued", "run_attempt": 1,
			"created_at": "2021-08-05T10:34:51.000Z", "started_at": nil, "overall_queue_duration_in_ms": nil}},
		{"started: in_progress", []foldEvent{started}, map[string]any{"status": "in_progress", "run_attempt": 1,
			"created_at": "2021-08-05T10:34:58.000Z", "started_at": "2021-08-05T10:34:58.000Z", "overall_queue_duration_in_ms": 0}},
		{"started, then the queued delivery", []foldEvent{started, queued}, map[string]any{"status": "in_progress",
			"created_at": "2021-08-05T10:34:51.000Z", "overall_queue_duration_in_ms": 7000}},
		{"whole lifecycle", []foldEvent{queued, started, completed}, ghesJobItem},
		{"whole lifecycle backwards", []foldEvent{completed, started, queued}, ghesJobItem},
		{"completed alone", []foldEvent{completed}, map[string]any{"status": "completed", "conclusion": "success",
			"created_at": "2021-08-05T10:34:58.000Z", "completed_at": "2021-08-05T10:38:16.000Z"}},
		{"a later delivery with created_at wins", []foldEvent{queued, started, completed, modern}, map[string]any{
			"created_at": "2021-08-05T10:34:40.000Z", "overall_queue_duration_in_ms": 18000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, _ := foldOne(t, tt.order...)
			job, share := jobItems(t, items)
			foldWant(t, job, tt.want)
			foldWant(t, share, map[string]any{"pk": "0#2202229078#1", "installation_id": nil, "total_jobs": 1})
			foldRoundTrip(t, projector.KindJob, a)
			foldCheckKeys(t, a)
		})
	}
}

// TestJobGHESThroughTheStream appends the older GHES deliveries to DynamoDB
// Local (TTL on), in an order that starts with the legacy "started",
// projects them from the real stream and checks the job item attribute by
// attribute, and its run row.
func TestJobGHESThroughTheStream(t *testing.T) {
	p := newPipeline(t)
	queued, started, completed := ghesDeliveries(t)
	p.append(t, []schema.Event{started.E, completed.E, queued.E})
	if _, err := p.run(t, context.Background(), nil, streamrun.Config{BatchSize: 2}); err != nil {
		t.Fatal(err)
	}
	if letters, _ := p.dl.List(context.Background(), "projector"); len(letters) > 0 {
		t.Fatalf("GHES deliveries were dead-lettered: %+v", letters)
	}
	S := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := schema.StripInternal(p.get(t, schema.TableWorkflowJobs, map[string]types.AttributeValue{"pk": S("0#289782451"), "sk": S("v")}))
	foldWant(t, item, ghesJobItem)
	present := 0
	for _, v := range ghesJobItem {
		if v != nil {
			present++
		}
	}
	// Besides those: received_at, last_updated_at (when the appender
	// recorded the first and the last webhook) and ttl.
	if len(item) != present+3 {
		t.Errorf("job item has %d attributes, want %d: %v", len(item), present+3, foldAttrs(item))
	}
	stored := p.stored(t)
	if len(stored) != 3 {
		t.Fatalf("%d events stored, want 3", len(stored))
	}
	first, last := *stored[0].RecordedAt, *stored[0].RecordedAt
	for _, e := range stored {
		if e.RecordedAt.Before(first) {
			first = *e.RecordedAt
		}
		if e.RecordedAt.After(last) {
			last = *e.RecordedAt
		}
	}
	foldWant(t, item, map[string]any{"received_at": schema.FormatItemTime(first), "last_updated_at": schema.FormatItemTime(last)})
	if ttl, ok := item[schema.AttrTTL].(*types.AttributeValueMemberN); !ok {
		t.Errorf("ttl = %v, want a number", item[schema.AttrTTL])
	} else if n, err := strconv.ParseInt(ttl.Value, 10, 64); err != nil || n <= time.Now().Unix() {
		t.Errorf("ttl = %s is not in the future: the 2021 job would vanish at once", ttl.Value)
	}
	run := p.runSummary(t, "0#2202229078#1")
	foldWant(t, run, map[string]any{"installation_id": 0, "run_id": 2202229078, "run_attempt": 1, "total_jobs": 1,
		"completed_jobs": 1, "success_jobs": 1, "status": "completed", "conclusion": "success", "repo_full_name": "Codertocat/Hello-World"})
	ref, counters := reference(t, stored)
	compareViews(t, ref, actual(t, p.c, p.n, counters))
}

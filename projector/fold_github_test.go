package projector_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// foldJobEvents returns the events of one subject of the seed 003 fixture,
// in file order.
// fixtureJob is the events of job 67890 of installation 12345 in
// seed003_jobs.ndjson, in the file's order.
func fixtureJob(t *testing.T) []schema.Event {
	t.Helper()
	var evs []schema.Event
	for _, f := range foldJobEvents(t, schema.JobSubject(12345, 67890)) {
		evs = append(evs, f.E)
	}
	return evs
}

func foldJobEvents(t *testing.T, subject string) []foldEvent {
	t.Helper()
	var out []foldEvent
	for _, e := range foldLoad(t, filepath.Join("testdata", "fold", "seed003_jobs.ndjson")) {
		if e.E.Subject == subject {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no events of %s", subject)
	}
	return out
}

func foldByID(t *testing.T, evs []foldEvent, ids ...string) []foldEvent {
	t.Helper()
	var out []foldEvent
	for _, id := range ids {
		found := false
		for _, e := range evs {
			if e.E.ID == id {
				out = append(out, e)
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("no event %s", id)
		}
	}
	return out
}

// TestJobLifecycle follows seed 003's job 12345#67890 through prefixes of
// its events, in several orders.
func TestJobLifecycle(t *testing.T) {
	evs := foldJobEvents(t, schema.JobSubject(12345, 67890))
	tests := []struct {
		name string
		ids  []string
		want map[string]any
	}{
		{"queued, same delivery twice, and again under another id",
			[]string{"d-queued-1", "d-queued-2", "d-queued-1"},
			map[string]any{
				"pk": "12345#67890", "sk": "v", "installation_id": 12345, "job_id": 67890, "run_id": 54321, "run_attempt": 1,
				"status": "queued", "created_at": "2025-01-15T10:00:01.000Z", "received_at": "2025-01-15T10:00:01.800Z",
				"last_updated_at": "2025-01-15T10:00:40.000Z", "org_name": "runs-on", "repo_full_name": "runs-on/test",
				"repo_is_private": true, "workflow_name": "CI", "job_name": "build", "default_branch": "main",
				"ttl": 1744711240, "was_interrupted": false, "started_at": nil, "conclusion": nil, "scheduled_at": nil,
				"workflow_id": nil, "instance_id": nil, "usage_in_seconds": nil,
			}},
		{"scheduled by RunsOn",
			[]string{"r-scheduled-1", "d-queued-1"},
			map[string]any{"status": "scheduled", "scheduled_at": "2025-01-15T10:00:05.000Z", "instance_type": "m7i.large", "instance_lifecycle": "spot"}},
		{"late queued after scheduled stays scheduled",
			[]string{"r-scheduled-1", "d-queued-2"},
			map[string]any{"status": "scheduled"}},
		{"spot interruption, then rescheduled on demand",
			[]string{"r-scheduled-1", "r-attached-1", "r-interrupted-1", "r-rescheduled-1", "r-scheduled-2", "r-attached-2"},
			map[string]any{
				"status": "scheduled", "was_interrupted": true, "instance_id": "i-0bbbbbbbbbbbbbbbb",
				"instance_lifecycle": "on-demand", "fleet_id": "fleet-2", "scheduled_at": "2025-01-15T10:00:05.000Z",
				"usage_in_seconds": &types.AttributeValueMemberN{Value: "20"}, "usage_in_dollars": &types.AttributeValueMemberN{Value: "0.00056"},
				"created_at": nil, "received_at": nil, "ttl": 1744711258, // 90 days after the latest recordedat
			}},
		{"in_progress before queued ends in_progress",
			[]string{"d-in-progress", "d-queued-1"},
			map[string]any{
				"status": "in_progress", "started_at": "2025-01-15T10:01:10.000Z", "runner_id": 412,
				"runner_name": "runs-on--i-0bbbbbbbbbbbbbbbb--x7k2p", "runner_group_id": 1,
				"overall_queue_duration_in_ms": 69000, "received_at": "2025-01-15T10:00:01.800Z",
			}},
		{"completed",
			[]string{"r-terminated-2", "d-completed", "d-in-progress", "r-attached-2", "d-queued-2", "r-scheduled-1", "r-interrupted-1",
				"r-scheduled-2", "r-terminated-1", "r-attached-1", "r-rescheduled-1", "d-queued-1", "r-terminated-1"},
			map[string]any{
				"status": "completed", "conclusion": "success", "completed_at": "2025-01-15T10:05:30.000Z",
				"started_at": "2025-01-15T10:01:10.000Z", "scheduled_at": "2025-01-15T10:00:05.000Z",
				"internal_queue_duration_in_ms": 65000, "overall_queue_duration_in_ms": 69000,
				"was_interrupted": true, "instance_id": "i-0bbbbbbbbbbbbbbbb", "instance_type": "m7i.large",
				"instance_lifecycle": "on-demand", "fleet_id": "fleet-2",
				// 20 s of the interrupted spot instance + 287 s of the on-demand one; its second
				// terminated report does not count twice.
				"usage_in_seconds": &types.AttributeValueMemberN{Value: "307"},
				"usage_in_dollars": &types.AttributeValueMemberN{Value: "0.008596"},
				"last_updated_at":  "2025-01-15T10:05:46.100Z",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, _ := foldOne(t, foldByID(t, evs, tt.ids...)...)
			if len(items) != 1 {
				t.Fatalf("items = %v, want one workflow-jobs item", items)
			}
			job := items[0].Item
			foldWant(t, job, tt.want)
			share, ok, err := schema.JobShare(job)
			if err != nil {
				t.Fatal(err)
			}
			if _, webhook := job["created_at"]; !webhook {
				// Runner events alone name the run, but the job is in no
				// GSI yet: it counts in its run from its first webhook.
				if ok {
					t.Fatalf("a job without a webhook counts in its run: %v", share)
				}
			} else {
				foldWant(t, share, map[string]any{"pk": "12345#54321#1", "sk": "job#67890", "job_id": 67890, "total_jobs": 1})
			}
			foldRoundTrip(t, projector.KindJob, a)
			foldCheckKeys(t, a)
		})
	}
}

func TestJobLateQueued(t *testing.T) {
	evs := foldJobEvents(t, schema.JobSubject(12345, 67893))
	_, items, _ := foldOne(t, foldByID(t, evs, "d2-in-progress", "d2-queued")...)
	foldWant(t, items[0].Item, map[string]any{"status": "in_progress", "received_at": "2025-01-15T10:00:30.400Z"})
	_, items, cs := foldOne(t, foldByID(t, evs, "d2-in-progress", "d2-queued", "d2-completed")...)
	job, share := jobItems(t, items)
	foldWant(t, job, map[string]any{"status": "completed", "conclusion": "failure"})
	if len(cs) != 0 {
		t.Fatalf("contributions = %v, want none (the run's share is an item)", cs)
	}
	foldWant(t, share, map[string]any{"pk": "12345#54321#1", "sk": "job#67893",
		"total_jobs": 1, "completed_jobs": 1, "failed_jobs": 1, "success_jobs": nil, "waiting_jobs": nil,
		"installation_id": 12345, "run_id": 54321, "run_attempt": 1, "job_id": 67893,
		"repo_full_name": "runs-on/test", "workflow_name": "CI", "head_sha": "8c4f1a9e2b7d3f60c5e1a2b3c4d5e6f708192a3b", "head_branch": "main"})
}

// jobItems returns a job's workflow-jobs item, its only item, and the
// share of its run's summary the item stands for (schema.JobShare),
// failing unless the item is marked as one.
func jobItems(t *testing.T, items []projector.Item) (job, share map[string]types.AttributeValue) {
	t.Helper()
	if len(items) != 1 || items[0].Table != schema.TableWorkflowJobs {
		t.Fatalf("items = %v, want one workflow-jobs item", items)
	}
	share, ok, err := schema.JobShare(items[0].Item)
	if err != nil || !ok {
		t.Fatalf("job item %v: share %v, %v; want the item to be its share of its run", items[0].Item, ok, err)
	}
	return items[0].Item, share
}

func TestJobWaitingOnDeployment(t *testing.T) {
	evs := foldJobEvents(t, schema.JobSubject(12345, 67895))
	_, items, _ := foldOne(t, evs...)
	job, share := jobItems(t, items)
	// queued, waiting, then queued again after the approval: still waiting
	// until a runner is scheduled.
	foldWant(t, job, map[string]any{"status": "waiting", "deployment_id": 789})
	foldWant(t, share, map[string]any{"total_jobs": 1, "waiting_jobs": 1, "completed_jobs": nil})
}

func TestJobRunnerOnly(t *testing.T) {
	// A job known only from a runner event without run_id: an item with no
	// created_at (so in no GSI) and no run summary contribution.
	e := foldEv(t, "r1", schema.TypeRunnerAttached, "2026-01-05T10:00:00Z", map[string]any{
		"installation_id": 0, "job_id": 15001, "instance_id": "i-0123", "instance_type": "c7g.large",
	})
	a, items, cs := foldOne(t, e)
	foldWant(t, items[0].Item, map[string]any{
		"pk": "0#15001", "installation_id": 0, "status": nil, "created_at": nil, "repo_full_name": nil, "run_id": nil,
		"instance_id": "i-0123", "ttl": 1775383200,
	})
	if len(cs) != 0 || len(items) != 1 {
		t.Fatalf("contributions = %v, items %v: want none, and no share of a run", cs, items)
	}
	foldCheckKeys(t, a)
}

func TestJobWorkflowIDAndGHES(t *testing.T) {
	// A GHES delivery (no installation object) that carries workflow_id.
	e := foldEv(t, "g1", schema.TypeJobQueued, "2026-01-05T10:00:00Z", map[string]any{
		"action": "queued",
		"workflow_job": map[string]any{"id": 15002, "run_id": 4001, "run_attempt": 2, "workflow_id": 77, "name": "lint",
			"created_at": "2026-01-05T10:00:00Z", "labels": []string{}},
		"repository": map[string]any{"full_name": "corp/monorepo", "private": true, "owner": map[string]any{"login": "corp"}},
	})
	_, items, _ := foldOne(t, e)
	job, share := jobItems(t, items)
	foldWant(t, job, map[string]any{
		"pk": "0#15002", "installation_id": 0, "workflow_id": 77, "org_name": "corp", "run_attempt": 2, "labels": nil,
	})
	foldWant(t, share, map[string]any{"pk": "0#4001#2", "sk": "job#15002"})
}

func TestDeployment(t *testing.T) {
	var evs []foldEvent
	for _, e := range foldLoad(t, filepath.Join("testdata", "fold", "seed003_jobs.ndjson")) {
		if e.E.Subject == schema.DeploymentSubject(12345, 789) {
			evs = append(evs, e)
		}
	}
	_, items, _ := foldOne(t, evs...)
	foldWant(t, items[0].Item, map[string]any{
		"pk": "12345#789", "sk": "v", "status": "approved", "created_at": "2025-01-15T10:04:12.000Z",
		"approved_at": "2025-01-15T10:10:00.000Z", "rejected_at": nil, "requires_approval": true, "environment": "production",
	})

	dep := func(id, typ, at string, jobs ...int64) foldEvent {
		return foldEv(t, id, typ, at, map[string]any{"installation_id": 1, "deployment_id": 5, "repo_full_name": "a/b",
			"environment": "production", "requires_approval": true, "job_ids": jobs})
	}
	pending := dep("p", schema.TypeDeploymentPending, "2026-01-05T10:00:00Z", 30, 10)
	rejected := dep("r", schema.TypeDeploymentRejected, "2026-01-05T10:05:00Z", 20, 10)
	for _, order := range [][]foldEvent{{pending, rejected}, {rejected, pending, rejected}} {
		a, items, _ := foldOne(t, order...)
		foldWant(t, items[0].Item, map[string]any{
			"status": "rejected", "rejected_at": "2026-01-05T10:05:00.000Z", "created_at": "2026-01-05T10:00:00.000Z",
			"job_ids": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberN{Value: "10"}, &types.AttributeValueMemberN{Value: "20"}, &types.AttributeValueMemberN{Value: "30"}}},
			"ttl": 1775383500, // 90 days after the latest recordedat (the rejection's)
		})
		foldRoundTrip(t, projector.KindDeployment, a)
	}
}

// TestJobNamedInTwoRuns: GitHub never moves a job to another run, but a
// producer can send one job id under two runs. The job counts in the run
// with the greatest id (its item names that run), and its share of the
// other run is written empty (over any share an older projector wrote),
// so that it never counts twice, whatever order the events come in.
func TestJobNamedInTwoRuns(t *testing.T) {
	webhook := func(id string, run int64) foldEvent {
		return foldEv(t, id, schema.TypeJobQueued, "2026-01-05T10:00:00Z", map[string]any{
			"action":       "queued",
			"installation": map[string]any{"id": 7},
			"workflow_job": map[string]any{"id": 15003, "run_id": run, "run_attempt": 1, "name": "lint",
				"created_at": "2026-01-05T10:00:00Z", "labels": []string{}},
			"repository": map[string]any{"full_name": "corp/monorepo", "private": true, "owner": map[string]any{"login": "corp"}},
		})
	}
	first, second := webhook("w1", 4001), webhook("w2", 4002)
	var want []projector.Item
	for i, order := range [][]foldEvent{{first, second}, {second, first}} {
		_, items, _ := foldOne(t, order...)
		if len(items) != 2 {
			t.Fatalf("order %d: items %v, want the job (its share of run 4002) and an empty share of run 4001", i, items)
		}
		share, ok, err := schema.JobShare(items[0].Item)
		if err != nil || !ok {
			t.Fatalf("order %d: job item not a share: %v, %v", i, ok, err)
		}
		foldWant(t, share, map[string]any{"pk": "7#4002#1", "sk": "job#15003", "total_jobs": 1})
		foldWant(t, items[1].Item, map[string]any{"pk": "7#4001#1", "sk": "job#15003", "total_jobs": nil, "repo_full_name": nil})
		sum, err := schema.SummarizeRun([]map[string]types.AttributeValue{items[1].Item}, nil)
		if err != nil || sum != nil {
			t.Fatalf("order %d: run 4001 sums to %v, %v; want nothing", i, sum, err)
		}
		if i == 0 {
			want = items
		} else if !reflect.DeepEqual(foldItemsCanon(items), foldItemsCanon(want)) {
			t.Fatalf("the order of the events changed the items")
		}
	}
}

func foldItemsCanon(items []projector.Item) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		out = append(out, projector.CanonicalItem(it.Item))
	}
	return out
}

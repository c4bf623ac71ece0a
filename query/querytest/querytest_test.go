package querytest

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestFixtureProjects: every fixture event is valid and projects into each
// domain's tables (on the in-memory store).
func TestFixtureProjects(t *testing.T) {
	evs := Fixture()
	inputs, err := Inputs(evs, FixtureRecordedAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != len(evs) {
		t.Fatalf("%d inputs from %d events", len(inputs), len(evs))
	}
	mem := projector.NewMemStore()
	if err := Project(t.Context(), mem, inputs); err != nil {
		t.Fatal(err)
	}
	for table, min := range map[string]int{schema.TableExecutions: 5, schema.TableWorkflows: 8, schema.TableWorkflowJobs: 4, schema.TableMessages: 3, schema.TableMetrics: 2} {
		if got := len(mem.Items(table)); got < min {
			t.Errorf("%s: %d items, want at least %d", table, got, min)
		}
	}
	var jobs []map[string]types.AttributeValue
	for _, it := range mem.Items(schema.TableWorkflowJobs) {
		jobs = append(jobs, it)
	}
	if runs, err := schema.SummarizeRuns(nil, jobs); err != nil || len(runs) < 2 {
		t.Errorf("%d run summaries (%v), want at least 2", len(runs), err)
	}
	for _, e := range evs {
		if e.Time.Before(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("event %s is dated %s: fixture dates must lie in 2030 so that no TTL expires them", e.ID, e.Time)
		}
	}
}

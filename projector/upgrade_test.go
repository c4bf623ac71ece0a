package projector_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestUpgradeFromRunSummaryRows: a projector before run job items kept one
// summary row per run (sk "v") and recorded each job's contribution to it
// with the job's state. Emulated here by the contributions hook (the old
// counting rule) and the items hook (no shares). After the
// upgrade, jobs that change take their contribution back from the old row
// and write their shares, jobs that do not change stay counted by the old
// row, and the run's summary, summed on read, equals that of a projection
// built by the new projector from the start, at every step.
func TestUpgradeFromRunSummaryRows(t *testing.T) {
	var evs []schema.Event
	for _, f := range foldLoad(t, filepath.Join("testdata", "fold", "seed003_jobs.ndjson")) {
		if strings.HasPrefix(f.E.Subject, "github/12345/job/") {
			evs = append(evs, f.E)
		}
	}
	if len(evs) < 6 {
		t.Fatalf("%d job events in the fixture, want a run's worth", len(evs))
	}
	ctx := context.Background()
	const runPK = "12345#54321#1"
	summary := func(m *projector.MemStore) map[string]types.AttributeValue { return memRunSummary(t, m, runPK) }
	project := func(p *projector.Projector, batch []schema.Event) {
		t.Helper()
		if out := p.Project(ctx, inputsOf(t, batch...)); len(out.Failed)+len(out.Poison) > 0 {
			t.Fatalf("outcome %+v", out)
		}
	}

	old := projector.NewMemStore()
	pOld, err := projector.New(old, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	half := len(evs) / 2
	restoreContrib := projector.SetContributionsHookForTest(func(a projector.Aggregate, c []projector.Contribution) []projector.Contribution {
		return append(c, projector.LegacyRunContributionsForTest(a)...)
	})
	restoreItems := projector.SetItemsHookForTest(func(_ projector.Aggregate, items []projector.Item) []projector.Item {
		var out []projector.Item // the old projector wrote no shares
		for _, it := range items {
			if it.Table != schema.TableWorkflowRuns {
				out = append(out, it)
			}
		}
		return out
	})
	for _, e := range evs[:half] {
		project(pOld, []schema.Event{e})
	}
	restoreContrib()
	restoreItems()
	if len(old.Items(schema.TableWorkflowRuns)) != 1 {
		t.Fatalf("the old projector left %d workflow-runs items, want its one summary row", len(old.Items(schema.TableWorkflowRuns)))
	}

	fresh := projector.NewMemStore()
	pNew, err := projector.New(fresh, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	project(pNew, evs[:half])
	// Counters as the new projector counts them; attributes differ only
	// in that the old row emulated here carries none.
	counters := func(s map[string]types.AttributeValue) map[string]types.AttributeValue {
		out := map[string]types.AttributeValue{}
		for _, k := range []string{"total_jobs", "completed_jobs", "success_jobs", "failed_jobs", "waiting_jobs", "status", "conclusion"} {
			if v, ok := s[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	if got, want := counters(summary(old)), counters(summary(fresh)); !reflect.DeepEqual(got, want) {
		t.Fatalf("before the upgrade: old row %v, want %v", got, want)
	}
	upgraded, err := projector.New(old, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// One job gets no event after the upgrade: the old row keeps counting it.
	untouched := evs[0].Subject
	for i, e := range evs[half:] {
		if e.Subject == untouched {
			continue
		}
		project(upgraded, []schema.Event{e})
		project(pNew, []schema.Event{e})
		if got, want := summary(old), summary(fresh); !reflect.DeepEqual(counters(got), counters(want)) {
			t.Fatalf("after %d upgraded events: summary %v, want %v", i+1, got, want)
		}
	}
	row, _ := old.Get(ctx, schema.TableWorkflowRuns, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: runPK}, "sk": &types.AttributeValueMemberS{Value: schema.RunSummarySK}})
	shares := len(old.Items(schema.TableWorkflowRuns)) - 1
	if row == nil || shares < 1 {
		t.Fatalf("old row %v, %d shares: want both, the upgrade half done", row, shares)
	}
	// Both paths ran: jobs that changed moved to shares, and the old row
	// still counts the ones that did not.
	if total := row["total_jobs"].(*types.AttributeValueMemberN).Value; total == "0" {
		t.Fatalf("the old row counts no job: every job changed, the test does not cover the ones that did not (%d shares)", shares)
	}
}

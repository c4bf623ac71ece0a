package projector_test

import (
	"context"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestUpgradeFromRunSummaryRows and TestUpgradeFromRunShares: two older
// projectors, emulated with the test hooks. The first kept one summary row
// per run (sk "v") and recorded each job's contribution to it with the
// job's state (the contributions hook: the old counting rule; the items
// hook: no shares, job items unmarked). The second wrote each job's share
// of its run as a run job item (sk "job#<id>") beside an unmarked job
// item. After the upgrade, jobs that change take their contribution back
// from the old row (first) and mark their job items, which then count in
// place of their old shares (second); jobs that do not change stay counted
// by the old row or share; and the run's summary, summed on read, equals
// that of a projection built by the new projector from the start, at
// every step.
func TestUpgradeFromRunSummaryRows(t *testing.T) { checkUpgrade(t, true) }

func TestUpgradeFromRunShares(t *testing.T) { checkUpgrade(t, false) }

// unmarked returns a copy of a job item without AttrCountsInRun.
func unmarked(it map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := maps.Clone(it)
	delete(out, schema.AttrCountsInRun)
	return out
}

func checkUpgrade(t *testing.T, rows bool) {
	var evs []schema.Event
	for _, f := range foldLoad(t, filepath.Join("testdata", "fold", "seed003_jobs.ndjson")) {
		if strings.HasPrefix(f.E.Subject, "github/12345/job/") {
			evs = append(evs, f.E)
		}
	}
	if len(evs) < 6 {
		t.Fatalf("%d job events in the fixture, want a run's worth", len(evs))
	}
	// Every job's first event first, so that each job is projected before
	// the upgrade and the ones with later events change after it.
	seen := map[string]bool{}
	var firsts, rest []schema.Event
	for _, e := range evs {
		if seen[e.Subject] {
			rest = append(rest, e)
		} else {
			seen[e.Subject] = true
			firsts = append(firsts, e)
		}
	}
	evs = append(firsts, rest...)
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
	restoreContrib := func() {}
	if rows {
		restoreContrib = projector.SetContributionsHookForTest(func(a projector.Aggregate, c []projector.Contribution) []projector.Contribution {
			return append(c, projector.LegacyRunContributionsForTest(a)...)
		})
	}
	restoreItems := projector.SetItemsHookForTest(func(_ projector.Aggregate, items []projector.Item) []projector.Item {
		var out []projector.Item
		for _, it := range items {
			if it.Table != schema.TableWorkflowJobs {
				out = append(out, it)
				continue
			}
			out = append(out, projector.Item{Table: it.Table, Item: unmarked(it.Item)})
			share, ok, err := schema.JobShare(it.Item)
			if err != nil {
				t.Fatal(err)
			}
			if ok && !rows {
				out = append(out, projector.Item{Table: schema.TableWorkflowRuns, Item: share})
			}
		}
		return out
	})
	for _, e := range evs[:half] {
		project(pOld, []schema.Event{e})
	}
	restoreContrib()
	restoreItems()
	oldItems := len(old.Items(schema.TableWorkflowRuns))
	if rows && oldItems != 1 || !rows && oldItems == 0 {
		t.Fatalf("the old projector left %d workflow-runs items, want its one summary row (rows %v) or a share per job", oldItems, rows)
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
		t.Fatalf("before the upgrade: old summary %v, want %v", got, want)
	}
	upgraded, err := projector.New(old, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// One job gets no event after the upgrade: the old row or share keeps
	// counting it.
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
	marked, unmarkedJobs := 0, 0
	for _, it := range old.Items(schema.TableWorkflowJobs) {
		if _, ok := it[schema.AttrCountsInRun]; ok {
			marked++
		} else if sAttr(it, "created_at") != "" {
			unmarkedJobs++
		}
	}
	// Both paths ran: jobs that changed count from their marked items, and
	// the old row or shares still count the ones that did not.
	if marked == 0 || unmarkedJobs == 0 {
		t.Fatalf("%d marked and %d unmarked job items: want both, the upgrade half done", marked, unmarkedJobs)
	}
	if rows {
		row, _ := old.Get(ctx, schema.TableWorkflowRuns, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: runPK}, "sk": &types.AttributeValueMemberS{Value: schema.RunSummarySK}})
		if row == nil || row["total_jobs"].(*types.AttributeValueMemberN).Value == "0" {
			t.Fatalf("the old row %v counts no job: the test does not cover the jobs that did not change", row)
		}
	}
}

package query

import (
	"cmp"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/schema"
)

// TestObservedWithoutScan: a DynamoAPI without Scan cannot sample the runs.
func TestObservedWithoutScan(t *testing.T) {
	db := &fakeAPI{}
	c := newTestClient(t, db, testKey)
	if _, err := c.Observed(ctx); !errors.Is(err, ErrNoScan) || len(db.queries) != 0 {
		t.Fatalf("err %v after %d queries, want ErrNoScan before any", err, len(db.queries))
	}
}

// TestObservedIntegration: over DynamoDB Local, Observed finds every
// installation of the workload's runs (fewer than ObservedRunSample) with
// their repositories and runs in progress, in its order, and the oldest
// and newest execution start, message creation and metrics day, as the
// projection folded in memory holds them.
func TestObservedIntegration(t *testing.T) {
	w := loadWorld(t)
	runs := w.memRuns(t)
	if len(runs) == 0 || len(runs) >= ObservedRunSample {
		t.Fatalf("the workload has %d runs; the test wants some, fewer than the sample %d", len(runs), ObservedRunSample)
	}
	byID := map[int64]*ObservedInstallation{}
	for _, r := range runs {
		f, _ := num(r, "installation_id")
		id := int64(f)
		inst := byID[id]
		if inst == nil {
			inst = &ObservedInstallation{Installation: id, Repositories: []string{}}
			byID[id] = inst
		}
		inst.Runs++
		if str(r, "status") == "in_progress" {
			inst.InProgressRuns++
		}
		if repo := str(r, "repo_full_name"); repo != "" && !slices.Contains(inst.Repositories, repo) {
			inst.Repositories = append(inst.Repositories, repo)
		}
	}
	var want []ObservedInstallation
	for _, inst := range byID {
		slices.Sort(inst.Repositories)
		want = append(want, *inst)
	}
	slices.SortFunc(want, func(a, b ObservedInstallation) int {
		return cmp.Or(cmp.Compare(b.InProgressRuns, a.InProgressRuns), cmp.Compare(b.Runs, a.Runs), cmp.Compare(a.Installation, b.Installation))
	})
	spanOf := func(table, attr string, keep func(map[string]any) bool) Span {
		var s Span
		for _, it := range w.memItems(table) {
			if keep(it) {
				s.widen(str(it, attr))
			}
		}
		return s
	}
	all := func(map[string]any) bool { return true }
	wantExec := spanOf(schema.TableExecutions, "startDate", all)
	wantMsg := spanOf(schema.TableMessages, "created_date", func(it map[string]any) bool { return str(it, "stage") != "" })
	wantMetrics := spanOf(schema.TableWorkflows, "date", func(it map[string]any) bool { return str(it, "entityType") == "metrics" })
	if wantExec.Newest == "" || wantMsg.Newest == "" || wantMetrics.Newest == "" {
		t.Fatalf("the workload lacks executions %v, messages %v or metrics rows %v", wantExec, wantMsg, wantMetrics)
	}
	wantMetrics.Oldest = "" // not read

	before := w.q.Stats()
	got, err := w.q.Observed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := w.q.Stats().Sub(before)
	if want := int64(2*(len(ExecutionStatuses)+len(schema.Stages)) + len(WorkflowTypes)); d.Query != want || d.GetItem+d.BatchGetItem != 0 {
		t.Errorf("%d Queries and %d other reads (besides the Scan), want %d Queries", d.Query, d.GetItem+d.BatchGetItem, want)
	}
	if got.SampledRuns != len(runs) || got.Truncated {
		t.Errorf("sampled %d runs, truncated %v; want all %d", got.SampledRuns, got.Truncated, len(runs))
	}
	if len(got.Installations) != len(want) {
		t.Fatalf("installations %+v\nwant %+v", got.Installations, want)
	}
	for i := range want {
		g := got.Installations[i]
		if g.Installation != want[i].Installation || g.Runs != want[i].Runs || g.InProgressRuns != want[i].InProgressRuns || !slices.Equal(g.Repositories, want[i].Repositories) {
			t.Errorf("installation %d: %+v, want %+v", i, g, want[i])
		}
	}
	if got.Executions != wantExec || got.Messages != wantMsg || got.Metrics != wantMetrics {
		t.Errorf("spans: executions %v messages %v metrics %v\nwant %v %v %v", got.Executions, got.Messages, got.Metrics, wantExec, wantMsg, wantMetrics)
	}
}

// The client's DynamoDB client has Scan.
var _ ScanAPI = (*dynamodb.Client)(nil)

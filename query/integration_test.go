package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

var ctx = context.Background()

// limits are the page sizes every list is followed with: several pages,
// one item per page, and everything in one page.
var limits = []int{7, 1, 200}

func runLists(t *testing.T, w *world, cases []listCase) {
	t.Helper()
	nonEmpty := 0
	for _, lc := range cases {
		t.Logf("%s: %d items", lc.name, len(lc.want))
		if len(lc.want) > 0 {
			nonEmpty++
		}
		t.Run(lc.name, func(t *testing.T) {
			for _, l := range limits {
				if l == 1 && len(lc.want) > 60 {
					continue // one item per page is slow for long lists; 7 already pages
				}
				pageAll(t, w, lc, l)
			}
		})
	}
	if nonEmpty == 0 {
		t.Fatalf("every expectation is empty: the workload does not exercise these patterns")
	}
}

func TestExecutionsIntegration(t *testing.T) {
	w := loadWorld(t)
	items := w.memItems(schema.TableExecutions)
	if len(items) < 20 {
		t.Fatalf("workload has only %d agent executions", len(items))
	}
	agents, statuses := map[string]bool{}, map[string]bool{}
	for _, it := range items {
		agents[str(it, "agentName")] = true
		statuses[str(it, "status")] = true
	}
	id, key := attr("executionArn"), attr("startDate")
	ranges := []TimeRange{{}, {From: w.start.Add(6 * time.Hour), To: w.start.Add(30 * time.Hour)}, {From: w.start.Add(20 * time.Hour)}, {To: w.start.Add(10 * time.Hour)}}
	in := func(r TimeRange, it map[string]any) bool {
		s := str(it, "startDate")
		return (r.From.IsZero() || s >= schema.FormatItemTime(r.From)) && (r.To.IsZero() || s <= schema.FormatItemTime(r.To))
	}
	var cases []listCase
	for a := range agents {
		for i, r := range ranges {
			cases = append(cases, listCase{
				name:  fmt.Sprintf("agent %s range %d", a, i),
				fetch: func(p PageRequest) (Page, error) { return w.q.ExecutionsByAgent(ctx, a, r, p) },
				want:  filterSort(items, func(it map[string]any) bool { return str(it, "agentName") == a && in(r, it) }, key, true),
				id:    id, sortKey: key,
			})
		}
	}
	for s := range statuses {
		for i, r := range ranges[:2] {
			cases = append(cases, listCase{
				name:  fmt.Sprintf("status %s range %d", s, i),
				fetch: func(p PageRequest) (Page, error) { return w.q.ExecutionsByStatus(ctx, strings.ToLower(s), r, p) },
				want:  filterSort(items, func(it map[string]any) bool { return str(it, "status") == s && in(r, it) }, key, true),
				id:    id, sortKey: key,
			})
		}
	}
	runLists(t, w, cases)

	t.Run("by ARN", func(t *testing.T) {
		for _, want := range items[:10] {
			got, err := w.q.Execution(ctx, str(want, "executionArn"))
			if err != nil {
				t.Fatal(err)
			}
			if canonJSON(got) != canonJSON(want) {
				t.Fatalf("got %s\nwant %s", canonJSON(got), canonJSON(want))
			}
		}
		if _, err := w.q.Execution(ctx, "arn:aws:states:us-east-1:1:execution:nope:x"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing ARN: %v, want ErrNotFound", err)
		}
	})
}

func TestWorkflowsIntegration(t *testing.T) {
	w := loadWorld(t)
	items := w.memItems(schema.TableWorkflows)
	key := func(it map[string]any) string { return str(it, "createdAt") }
	id := func(it map[string]any) string { return str(it, "pk") + "|" + str(it, "sk") }
	of := func(entity, status, wt string) func(map[string]any) bool {
		return func(it map[string]any) bool {
			return str(it, "entityType") == entity && str(it, "status") == status && (wt == "" || str(it, "workflowType") == wt)
		}
	}
	byType := func(entity, status string) []map[string]any {
		// No workflow type: step-functions first, then durable-functions.
		return append(filterSort(items, of(entity, status, StepFunctions), key, true), filterSort(items, of(entity, status, DurableFunctions), key, true)...)
	}
	var cases []listCase
	for _, wt := range []string{StepFunctions, "ldf"} {
		full, _ := NormalizeWorkflowType("", wt)
		cases = append(cases,
			listCase{name: "running " + wt, fetch: func(p PageRequest) (Page, error) { return w.q.RunningExecutions(ctx, wt, p) },
				want: filterSort(items, of("execution", "running", full), key, true), id: id, sortKey: key},
			listCase{name: "pending tasks " + wt, fetch: func(p PageRequest) (Page, error) { return w.q.PendingTasks(ctx, wt, p) },
				want: filterSort(items, of("task", "pending", full), key, true), id: id, sortKey: key},
			listCase{name: "metrics series " + wt, fetch: func(p PageRequest) (Page, error) { return w.q.MetricsSeries(ctx, wt, TimeRange{}, p) },
				want: filterSort(items, of("metrics", "daily", full), key, true), id: id, sortKey: key},
		)
	}
	cases = append(cases,
		listCase{name: "running both types", fetch: func(p PageRequest) (Page, error) { return w.q.RunningExecutions(ctx, "", p) },
			want: byType("execution", "running"), id: id, sortKey: func(it map[string]any) string { return str(it, "workflowType") + key(it) }},
		listCase{name: "pending tasks both types", fetch: func(p PageRequest) (Page, error) { return w.q.PendingTasks(ctx, "", p) },
			want: byType("task", "pending"), id: id, sortKey: func(it map[string]any) string { return str(it, "workflowType") + key(it) }},
		listCase{name: "metrics series one day", fetch: func(p PageRequest) (Page, error) {
			return w.q.MetricsSeries(ctx, StepFunctions, TimeRange{From: w.start, To: w.start.Add(time.Hour)}, p)
		}, want: filterSort(items, func(it map[string]any) bool {
			return of("metrics", "daily", StepFunctions)(it) && str(it, "date") == w.start.Format("2006-01-02")
		}, key, true), id: id, sortKey: key},
	)
	// The both-types order is by type (sf before ldf, which sorts after it
	// reversed): make the expected sort keys comparable position by position.
	for i := range cases {
		if strings.HasSuffix(cases[i].name, "both types") {
			sk := cases[i].sortKey
			rank := map[string]string{StepFunctions: "0", DurableFunctions: "1"}
			cases[i].sortKey = func(it map[string]any) string { return rank[str(it, "workflowType")] + sk(it) }
		}
	}
	runLists(t, w, cases)

	t.Run("execution with albums", func(t *testing.T) {
		checked := 0
		for _, ex := range items {
			if str(ex, "entityType") != "execution" || checked >= 12 {
				continue
			}
			checked++
			got, err := w.q.WorkflowExecution(ctx, str(ex, "executionId"))
			if err != nil {
				t.Fatal(err)
			}
			want := filterSort(items, func(it map[string]any) bool {
				return str(it, "entityType") == "album" && str(it, "pk") == str(ex, "pk")
			}, func(it map[string]any) string { n, _ := num(it, "albumIndex"); return fmt.Sprintf("%06d", int(n)) }, false)
			if want == nil {
				want = []map[string]any{}
			}
			if canonJSON(got.Execution) != canonJSON(ex) || canonJSON(got.Albums) != canonJSON(want) || len(want) != len(got.Albums) {
				t.Fatalf("execution %s:\n got %s %s\nwant %s %s", str(ex, "pk"), canonJSON(got.Execution), canonJSON(got.Albums), canonJSON(ex), canonJSON(want))
			}
		}
		if _, err := w.q.WorkflowExecution(ctx, "ffffffff-0000-4000-8000-000000000000"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing execution: %v", err)
		}
	})

	t.Run("metrics and comparison", func(t *testing.T) {
		dates := map[string]map[string]map[string]any{}
		for _, it := range items {
			if str(it, "entityType") == "metrics" {
				if dates[str(it, "date")] == nil {
					dates[str(it, "date")] = map[string]map[string]any{}
				}
				dates[str(it, "date")][str(it, "workflowType")] = it
			}
		}
		if len(dates) == 0 {
			t.Fatal("no metrics rows in the workload")
		}
		for d, rows := range dates {
			for wt, want := range rows {
				got, err := w.q.Metrics(ctx, d, wt)
				if err != nil || canonJSON(got) != canonJSON(want) {
					t.Fatalf("metrics %s %s: %v\n got %s\nwant %s", d, wt, err, canonJSON(got), canonJSON(want))
				}
			}
			cmp, err := w.q.CompareMetrics(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			if canonJSON(cmp.StepFunctions) != canonJSON(rows[StepFunctions]) || canonJSON(cmp.DurableFunctions) != canonJSON(rows[DurableFunctions]) {
				t.Fatalf("compare %s: rows differ", d)
			}
			// Independent ratios from the expected rows.
			f := func(row map[string]any, k string) float64 {
				if row[k] == nil {
					return 0 // counters that were never added to are absent
				}
				v, err := strconv.ParseFloat(fmt.Sprint(row[k]), 64)
				if err != nil {
					t.Fatalf("row %s: %s = %v", d, k, row[k])
				}
				return v
			}
			sf, ldf := rows[StepFunctions], rows[DurableFunctions]
			if sf != nil && ldf != nil {
				for _, m := range []string{"executionCount", "avgDurationMs", "totalCost"} {
					want := f(ldf, m) / f(sf, m)
					if got := cmp.Ratios[m]; f(sf, m) != 0 && (got == nil || math.Abs(*got-want) > 1e-9) {
						t.Fatalf("compare %s ratio %s = %v, want %v", d, m, got, want)
					}
				}
				rate := func(row map[string]any) float64 {
					return f(row, "successCount") / (f(row, "successCount") + f(row, "failureCount"))
				}
				if g := cmp.SuccessRates[StepFunctions]; g != nil && math.Abs(*g-rate(sf)) > 1e-9 {
					t.Fatalf("compare %s: sf success rate %v, want %v", d, *g, rate(sf))
				}
			}
		}
		if _, err := w.q.Metrics(ctx, "1999-01-01", StepFunctions); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing metrics row: %v", err)
		}
		empty, err := w.q.CompareMetrics(ctx, "1999-01-01")
		if err != nil || empty.StepFunctions != nil || empty.DurableFunctions != nil || empty.Ratios["executionCount"] != nil {
			t.Fatalf("compare of an empty day: %+v, %v", empty, err)
		}
	})
}

func TestJobsIntegration(t *testing.T) {
	w := loadWorld(t)
	jobs := w.memItems(schema.TableWorkflowJobs)
	id, key := attr("pk"), func(it map[string]any) string { return str(it, "created_at") }
	inst := func(it map[string]any) int64 { n, _ := num(it, "installation_id"); return int64(n) }
	type ik struct {
		inst int64
		s    string
	}
	statuses, repos := map[ik]bool{}, map[ik]bool{}
	for _, j := range jobs {
		if str(j, "created_at") == "" {
			continue // known only from runner events: in no index yet
		}
		statuses[ik{inst(j), str(j, "status")}] = true
		repos[ik{inst(j), str(j, "repo_full_name")}] = true
	}
	var cases []listCase
	for s := range statuses {
		cases = append(cases, listCase{
			name:  fmt.Sprintf("installation %d status %s", s.inst, s.s),
			fetch: func(p PageRequest) (Page, error) { return w.q.JobsByStatus(ctx, s.inst, s.s, time.Time{}, p) },
			want: filterSort(jobs, func(it map[string]any) bool {
				return inst(it) == s.inst && str(it, "status") == s.s && key(it) != ""
			}, key, true),
			id: id, sortKey: key,
		})
	}
	stuckBefore := schema.FormatItemTime(w.now.Add(-6 * time.Hour))
	stuckInsts := map[int64]bool{edgeInstallation: true}
	for s := range statuses {
		stuckInsts[s.inst] = true
	}
	for i := range stuckInsts {
		cases = append(cases, listCase{
			name:  fmt.Sprintf("installation %d stuck 6h", i),
			fetch: func(p PageRequest) (Page, error) { return w.q.StuckJobs(ctx, i, 6*time.Hour, w.now, p) },
			want: filterSort(jobs, func(it map[string]any) bool {
				return inst(it) == i && str(it, "status") == "in_progress" && key(it) != "" && key(it) < stuckBefore
			}, key, true),
			id: id, sortKey: key,
		})
	}
	since := w.start.Add(12 * time.Hour)
	for r := range repos {
		cases = append(cases, listCase{
			name: fmt.Sprintf("installation %d repo %s", r.inst, r.s),
			fetch: func(p PageRequest) (Page, error) {
				rp, err := w.q.RepoJobs(ctx, r.inst, r.s, since, p)
				return rp.Page, err
			},
			want: filterSort(jobs, func(it map[string]any) bool {
				return inst(it) == r.inst && str(it, "repo_full_name") == r.s && key(it) >= schema.FormatItemTime(since)
			}, key, true),
			id: id, sortKey: key,
		})
	}
	runLists(t, w, cases)

	t.Run("stuck edge job", func(t *testing.T) {
		p, err := w.q.StuckJobs(ctx, edgeInstallation, 6*time.Hour, w.now, PageRequest{})
		if err != nil || len(p.Items) != 1 || str(p.Items[0], "pk") != "777#9000" {
			t.Fatalf("stuck jobs of installation 777: %v %v, want exactly 777#9000", p.Items, err)
		}
	})

	t.Run("repository statistics", func(t *testing.T) {
		for r := range repos {
			rp, err := w.q.RepoJobs(ctx, r.inst, r.s, since, PageRequest{Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if rp.Stats == nil {
				t.Fatal("first page has no stats")
			}
			var n, succ, fail, durN int
			var durSum float64
			for _, j := range jobs {
				if inst(j) != r.inst || str(j, "repo_full_name") != r.s || key(j) < schema.FormatItemTime(since) {
					continue
				}
				n++
				if str(j, "status") != "completed" {
					continue
				}
				switch str(j, "conclusion") {
				case "success":
					succ++
				case "failure", "timed_out", "startup_failure":
					fail++
				}
				s, e1 := time.Parse(time.RFC3339, str(j, "started_at"))
				e, e2 := time.Parse(time.RFC3339, str(j, "completed_at"))
				if e1 == nil && e2 == nil {
					durSum += float64(e.Sub(s).Milliseconds())
					durN++
				}
			}
			st := rp.Stats
			if st.Jobs != n || st.Succeeded != succ || st.Failed != fail || st.Requests < 1 {
				t.Fatalf("%v stats %+v, want jobs %d succeeded %d failed %d", r, *st, n, succ, fail)
			}
			if succ+fail > 0 && (st.SuccessRate == nil || math.Abs(*st.SuccessRate-float64(succ)/float64(succ+fail)) > 1e-12) {
				t.Fatalf("%v success rate %v", r, st.SuccessRate)
			}
			if durN > 0 && (st.AvgDurationMs == nil || math.Abs(*st.AvgDurationMs-durSum/float64(durN)) > 1e-6) {
				t.Fatalf("%v avg duration %v, want %v", r, st.AvgDurationMs, durSum/float64(durN))
			}
			if rp.Next != "" {
				next, err := w.q.RepoJobs(ctx, r.inst, r.s, since, PageRequest{Limit: 2, Cursor: rp.Next})
				if err != nil || next.Stats != nil {
					t.Fatalf("second page: stats %v, err %v; want none", next.Stats, err)
				}
			}
		}
	})

	t.Run("job by id", func(t *testing.T) {
		for _, want := range jobs[:10] {
			i, _ := num(want, "installation_id")
			j, _ := num(want, "job_id")
			got, err := w.q.Job(ctx, int64(i), int64(j))
			if err != nil || canonJSON(got) != canonJSON(want) {
				t.Fatalf("job %s: %v\n got %s\nwant %s", str(want, "pk"), err, canonJSON(got), canonJSON(want))
			}
		}
		if _, err := w.q.Job(ctx, 1, 1); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing job: %v", err)
		}
	})

	t.Run("runs", func(t *testing.T) {
		runs := map[string][]map[string]any{}
		for _, j := range jobs {
			if key(j) == "" {
				continue
			}
			k := fmt.Sprintf("%d#%v#%v", inst(j), j["run_id"], j["run_attempt"])
			runs[k] = append(runs[k], j)
		}
		rows := map[string]map[string]any{}
		for _, r := range w.memRuns(t) {
			rows[str(r, "pk")] = r
		}
		complete, incomplete := 0, 0
		keys := make([]string, 0, len(runs))
		for k := range runs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			want := filterSort(runs[k], func(map[string]any) bool { return true }, key, false)
			parts := strings.Split(k, "#")
			i, _ := strconv.ParseInt(parts[0], 10, 64)
			r, _ := strconv.ParseInt(parts[1], 10, 64)
			a, _ := strconv.ParseInt(parts[2], 10, 64)
			got, err := w.q.Run(ctx, i, r, a)
			if err != nil {
				t.Fatalf("run %s: %v", k, err)
			}
			if len(got.Jobs) != len(want) || canonJSON(got.Run) != canonJSON(rows[k]) {
				t.Fatalf("run %s: %d jobs, run %s; want %d jobs, run %s", k, len(got.Jobs), canonJSON(got.Run), len(want), canonJSON(rows[k]))
			}
			for n := range want {
				if key(got.Jobs[n]) != key(want[n]) {
					t.Fatalf("run %s: job %d out of order", k, n)
				}
			}
			done := true
			for _, j := range want {
				done = done && str(j, "status") == "completed"
			}
			if row := rows[k]; row != nil && fmt.Sprint(row["total_jobs"]) != fmt.Sprint(row["completed_jobs"]) {
				done = false
			}
			if got.Complete != done {
				t.Fatalf("run %s: complete %v, want %v", k, got.Complete, done)
			}
			if done {
				complete++
			} else {
				incomplete++
			}
		}
		if complete == 0 || incomplete == 0 {
			t.Fatalf("runs: %d complete, %d incomplete: the workload should have both", complete, incomplete)
		}
		if v, err := w.q.Run(ctx, edgeInstallation, 500, 1); err != nil || v.Complete || len(v.Jobs) != 2 {
			t.Fatalf("edge run 500: %+v %v, want 2 jobs, incomplete", v, err)
		}
		if v, err := w.q.Run(ctx, edgeInstallation, 501, 1); err != nil || !v.Complete || len(v.Jobs) != 2 {
			t.Fatalf("edge run 501: %+v %v, want 2 jobs, complete", v, err)
		}
		if _, err := w.q.Run(ctx, 1, 1, 1); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing run: %v", err)
		}
	})
}

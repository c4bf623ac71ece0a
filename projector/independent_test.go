package projector_test

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// checkCountersFromItems recomputes the counter rows from the projection
// items alone — daily sf/ldf metrics from the execution items, run
// summaries (and their ttl) from the job items in GSI3 (against the
// summaries of v, which readers sum with schema.SummarizeRuns), per-stage
// message counts from the message items — and compares them with the
// counter rows of v.
// It shares no code with the folds' Contributions, so it catches a
// contribution that is wrong in the same way in the projector and in the
// reference fold (say, a doubled durationSumMs).
func checkCountersFromItems(t *testing.T, v view) {
	t.Helper()
	want := map[string]map[string]*big.Rat{}
	add := func(row, counter string, d *big.Rat) {
		if want[row] == nil {
			want[row] = map[string]*big.Rat{}
		}
		if want[row][counter] == nil {
			want[row][counter] = new(big.Rat)
		}
		want[row][counter].Add(want[row][counter], d)
	}
	one := big.NewRat(1, 1)
	for id, it := range v {
		table, _, _ := strings.Cut(id, "|")
		switch {
		case table == schema.TableWorkflows && sv(it, "entityType") == "execution":
			created := sv(it, "createdAt")
			if len(created) < 10 {
				continue
			}
			row := schema.TableWorkflows + "|" + created[:10] + "|metrics-" + sv(it, "workflowType")
			add(row, "executionCount", one)
			if _, terminal := it["endTime"]; terminal {
				if sv(it, "status") == "completed" {
					add(row, "successCount", one)
				} else {
					add(row, "failureCount", one)
				}
				if d, ok := nv(it, "durationMs"); ok {
					add(row, "durationSumMs", d)
					add(row, "durationCount", one)
				}
				if c, ok := nv(it, "estimatedCost"); ok {
					add(row, "totalCost", c)
				}
			}
		case table == schema.TableWorkflowJobs:
			run, ok1 := nv(it, "run_id")
			attempt, ok2 := nv(it, "run_attempt")
			inst, _ := nv(it, "installation_id")
			if !ok1 || !ok2 || sv(it, "created_at") == "" {
				continue // a job counts in its run once it is in GSI3
			}
			row := runSummaryTable + "|" + schema.RunKey(inst.Num().Int64(), run.Num().Int64(), attempt.Num().Int64())
			add(row, "total_jobs", one)
			// The run row expires with the last of its jobs, rounded up to
			// the next midnight UTC.
			if ttl, ok := nv(it, "ttl"); ok {
				day := ttl.Num().Int64()/86400*86400 + 86400
				if ttl.Num().Int64()%86400 == 0 {
					day -= 86400
				}
				d := big.NewRat(day, 1)
				if want[row] == nil || want[row]["ttl"] == nil || want[row]["ttl"].Cmp(d) < 0 {
					if want[row] == nil {
						want[row] = map[string]*big.Rat{}
					}
					want[row]["ttl"] = d
				}
			}
			if sv(it, "status") == "waiting" {
				add(row, "waiting_jobs", one)
			}
			if sv(it, "status") == "completed" {
				add(row, "completed_jobs", one)
				switch c := sv(it, "conclusion"); {
				case c == "success":
					add(row, "success_jobs", one)
				case slices.Contains(schema.FailedConclusions(), c):
					add(row, "failed_jobs", one)
				}
			}
		case table == schema.TableMessages:
			created := sv(it, "created_date")
			if len(created) < 10 || sv(it, "status") == "" {
				continue
			}
			row := schema.TableMetrics + "|messages/" + sv(it, "stage") + "|" + created[:10]
			add(row, "total", one)
			add(row, sv(it, "status"), one)
		}
	}
	// The rows as projected, keyed the same way.
	got := map[string]map[string]*big.Rat{}
	for id, it := range v {
		table, _, _ := strings.Cut(id, "|")
		var row string
		switch {
		case table == schema.TableWorkflows && sv(it, "entityType") == "metrics":
			row = table + "|" + sv(it, "pk") + "|" + sv(it, "sk")
		case table == runSummaryTable:
			row = table + "|" + sv(it, "pk")
		case table == schema.TableMetrics && strings.HasPrefix(sv(it, "scope"), "messages/"):
			row = table + "|" + sv(it, "scope") + "|" + sv(it, "date")
		default:
			continue
		}
		got[row] = map[string]*big.Rat{}
		for k := range it {
			if r, ok := nv(it, k); ok {
				got[row][k] = r
			}
		}
	}
	var diffs []string
	for row, counters := range want {
		for k, w := range counters {
			g := got[row][k]
			if g == nil {
				g = new(big.Rat)
			}
			if g.Cmp(w) != 0 {
				diffs = append(diffs, fmt.Sprintf("%s %s: rows say %s, items say %s", row, k, g.RatString(), w.RatString()))
			}
		}
	}
	for row, counters := range got {
		for k, g := range counters {
			if !countedAttr(k) || g.Sign() == 0 {
				continue
			}
			if want[row] == nil || want[row][k] == nil {
				diffs = append(diffs, fmt.Sprintf("%s %s: rows say %s, no item explains it", row, k, g.RatString()))
			}
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		if len(diffs) > 8 {
			diffs = append(diffs[:8], "...")
		}
		t.Fatalf("%d counters differ from the items:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
	if len(want) == 0 {
		t.Fatal("no counter row recomputed from the items")
	}
}

// countedAttr lists the counters checkCountersFromItems recomputes.
func countedAttr(k string) bool {
	switch k {
	case "executionCount", "successCount", "failureCount", "durationSumMs", "durationCount", "totalCost",
		"total_jobs", "completed_jobs", "success_jobs", "failed_jobs", "waiting_jobs", "total", "ttl":
		return true
	}
	for _, s := range schema.MessageStatuses() {
		if k == s {
			return true
		}
	}
	return false
}

// sv and nv read a string or a number of a canonical item.
func sv(it map[string]any, k string) string {
	s, _ := it[k].(string)
	v, ok := strings.CutPrefix(s, "S:")
	if !ok {
		return ""
	}
	return v
}

func nv(it map[string]any, k string) (*big.Rat, bool) {
	s, _ := it[k].(string)
	v, ok := strings.CutPrefix(s, "N:")
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(v)
}

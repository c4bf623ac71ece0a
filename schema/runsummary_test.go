package schema

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func share(job int64, fields map[string]string, counters map[string]string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "7#900#1"}, "sk": &types.AttributeValueMemberS{Value: RunJobSK(job)},
		"installation_id": &types.AttributeValueMemberN{Value: "7"}, "run_id": &types.AttributeValueMemberN{Value: "900"},
		"run_attempt": &types.AttributeValueMemberN{Value: "1"}, "total_jobs": &types.AttributeValueMemberN{Value: "1"},
	}
	if job < 0 { // an older projector's summary row
		it["sk"] = &types.AttributeValueMemberS{Value: RunSummarySK}
		delete(it, "total_jobs")
	}
	for k, v := range fields {
		it[k] = &types.AttributeValueMemberS{Value: v}
	}
	for k, v := range counters {
		it[k] = &types.AttributeValueMemberN{Value: v}
	}
	return it
}

// jobItem is a workflow-jobs item of run 7#900#1, marked AttrCountsInRun
// when marked.
func jobItem(job int64, status, conclusion string, marked bool, fields map[string]string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: JobKey(7, job)}, "sk": &types.AttributeValueMemberS{Value: "v"},
		"installation_id": &types.AttributeValueMemberN{Value: "7"}, "job_id": &types.AttributeValueMemberN{Value: strconv.FormatInt(job, 10)},
		"run_id": &types.AttributeValueMemberN{Value: "900"}, "run_attempt": &types.AttributeValueMemberN{Value: "1"},
		"created_at": &types.AttributeValueMemberS{Value: "2026-11-20T10:00:00Z"}, "job_name": &types.AttributeValueMemberS{Value: "build"},
		"ttl": &types.AttributeValueMemberN{Value: "1800000001"},
	}
	if status != "" {
		it["status"] = &types.AttributeValueMemberS{Value: status}
	}
	if conclusion != "" {
		it["conclusion"] = &types.AttributeValueMemberS{Value: conclusion}
	}
	if marked {
		it[AttrCountsInRun] = &types.AttributeValueMemberBOOL{Value: true}
	}
	for k, v := range fields {
		it[k] = &types.AttributeValueMemberS{Value: v}
	}
	return it
}

func TestSummarizeRun(t *testing.T) {
	done := map[string]string{"completed_jobs": "1", "success_jobs": "1", "ttl": "1800000000"}
	failed := map[string]string{"completed_jobs": "1", "failed_jobs": "1", "ttl": "1800086400"}
	waiting := map[string]string{"waiting_jobs": "1"}
	tests := []struct {
		name  string
		items []map[string]types.AttributeValue
		want  map[string]string // attribute -> its value as text; absent ones listed as ""
		jobs  []map[string]types.AttributeValue
	}{
		{"no items", nil, nil, nil},
		{"two jobs done, one failed: completed, failure", []map[string]types.AttributeValue{share(1, nil, done), share(2, nil, failed)},
			map[string]string{"total_jobs": "2", "completed_jobs": "2", "failed_jobs": "1", "success_jobs": "1", "status": "completed", "conclusion": "failure", "ttl": "1800086400", "waiting_jobs": ""}, nil},
		{"a third job not done: in_progress, no conclusion", []map[string]types.AttributeValue{share(1, nil, done), share(2, nil, failed), share(3, nil, nil)},
			map[string]string{"total_jobs": "3", "status": "in_progress", "conclusion": ""}, nil},
		{"every job not done waits: waiting", []map[string]types.AttributeValue{share(1, nil, done), share(3, nil, waiting)},
			map[string]string{"status": "waiting", "waiting_jobs": "1", "conclusion": ""}, nil},
		{"the run's attributes are the latest job's", []map[string]types.AttributeValue{
			share(9, map[string]string{"workflow_name": "CI v2"}, nil), share(4, map[string]string{"workflow_name": "CI", "head_branch": "main"}, nil)},
			map[string]string{"workflow_name": "CI v2", "head_branch": "main"}, nil},
		{"an older row counts its jobs, its attributes under the jobs'", []map[string]types.AttributeValue{
			share(-1, map[string]string{"workflow_name": "old", "repo_full_name": "o/r", "status": "in_progress"}, map[string]string{"total_jobs": "2", "completed_jobs": "2", "success_jobs": "2"}),
			share(5, map[string]string{"workflow_name": "new"}, done)},
			map[string]string{"total_jobs": "3", "completed_jobs": "3", "status": "completed", "conclusion": "success", "workflow_name": "new", "repo_full_name": "o/r"}, nil},
		{"an older row whose jobs all moved to shares counts nothing", []map[string]types.AttributeValue{
			share(-1, nil, map[string]string{"total_jobs": "0", "completed_jobs": "0.0"})}, nil, nil},
		{"marked job items count as their shares", nil,
			map[string]string{"total_jobs": "3", "completed_jobs": "2", "failed_jobs": "1", "success_jobs": "1", "waiting_jobs": "", "status": "in_progress", "ttl": "1800057600", "workflow_name": "CI"},
			[]map[string]types.AttributeValue{jobItem(1, "completed", "success", true, map[string]string{"workflow_name": "CI"}),
				jobItem(2, "completed", "timed_out", true, nil), jobItem(3, "in_progress", "", true, nil)}},
		{"a waiting job item; a completed one without conclusion counts neither way", nil,
			map[string]string{"total_jobs": "2", "completed_jobs": "1", "failed_jobs": "", "success_jobs": "", "waiting_jobs": "1", "status": "waiting"},
			[]map[string]types.AttributeValue{jobItem(1, "waiting", "", true, nil), jobItem(2, "completed", "", true, nil)}},
		{"a marked job item replaces its job's share; an unmarked one is left out", []map[string]types.AttributeValue{share(1, map[string]string{"workflow_name": "stale"}, nil), share(2, nil, waiting)},
			map[string]string{"total_jobs": "2", "completed_jobs": "1", "success_jobs": "1", "waiting_jobs": "1", "status": "waiting", "workflow_name": "new"},
			[]map[string]types.AttributeValue{jobItem(1, "completed", "success", true, map[string]string{"workflow_name": "new"}),
				jobItem(2, "completed", "failure", false, nil)}},
		{"only unmarked job items: nothing", nil, nil, []map[string]types.AttributeValue{jobItem(1, "completed", "success", false, nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SummarizeRun(tt.items, tt.jobs)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if got != nil {
					t.Fatalf("summary %v, want none", got)
				}
				return
			}
			if strAttrOf(got, "pk") != "7#900#1" || strAttrOf(got, "sk") != RunSummarySK {
				t.Errorf("key %v %v", got["pk"], got["sk"])
			}
			for k, w := range tt.want {
				var g string
				switch v := got[k].(type) {
				case *types.AttributeValueMemberS:
					g = v.Value
				case *types.AttributeValueMemberN:
					g = v.Value
				}
				if g != w {
					t.Errorf("%s = %q, want %q", k, g, w)
				}
			}
			// The order of the items does not matter.
			for i := range 5 {
				shuffled := append([]map[string]types.AttributeValue(nil), tt.items...)
				rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
				jobs := append([]map[string]types.AttributeValue(nil), tt.jobs...)
				rand.New(rand.NewPCG(uint64(i), 2)).Shuffle(len(jobs), func(a, b int) { jobs[a], jobs[b] = jobs[b], jobs[a] })
				again, err := SummarizeRun(shuffled, jobs)
				if err != nil || !reflect.DeepEqual(again, got) {
					t.Fatalf("shuffled: %v, %v; want %v", again, err, got)
				}
			}
		})
	}
}

// TestSummarizeRunInstallationZero: a GHES run (installation 0) keeps its
// ids in the summary.
func TestSummarizeRunInstallationZero(t *testing.T) {
	it := share(1, nil, nil)
	it["pk"] = &types.AttributeValueMemberS{Value: "0#900#1"}
	it["installation_id"] = &types.AttributeValueMemberN{Value: "0"}
	got, err := SummarizeRun([]map[string]types.AttributeValue{it}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := got["installation_id"].(*types.AttributeValueMemberN); !ok || n.Value != "0" {
		t.Fatalf("installation_id = %v, want 0", got["installation_id"])
	}
}

func TestSummarizeRunErrors(t *testing.T) {
	other := share(2, nil, nil)
	other["pk"] = &types.AttributeValueMemberS{Value: "7#901#1"}
	badSK := share(3, nil, nil)
	badSK["sk"] = &types.AttributeValueMemberS{Value: "x"}
	badJob := share(3, nil, nil)
	badJob["sk"] = &types.AttributeValueMemberS{Value: "job#x"}
	text := share(4, nil, nil)
	text["total_jobs"] = &types.AttributeValueMemberS{Value: "1"}
	frac := share(5, nil, map[string]string{"completed_jobs": "0.5"})
	noRun := jobItem(6, "queued", "", true, nil)
	delete(noRun, "run_id")
	badJobItem := jobItem(7, "queued", "", true, nil)
	badJobItem["run_attempt"] = &types.AttributeValueMemberS{Value: "one"}
	for name, tt := range map[string]struct {
		items []map[string]types.AttributeValue
		want  string
		jobs  []map[string]types.AttributeValue
	}{
		"marked job item of no run":   {nil, "counts in its run but names no job, run or attempt", []map[string]types.AttributeValue{noRun}},
		"marked job item undecodable": {nil, "as its run's share", []map[string]types.AttributeValue{badJobItem}},
		"two runs":                    {[]map[string]types.AttributeValue{share(1, nil, nil), other}, "item of another run", nil},
		"unknown sort key":            {[]map[string]types.AttributeValue{badSK}, `unknown sort key "x"`, nil},
		"job id not a number":         {[]map[string]types.AttributeValue{badJob}, `sort key "job#x"`, nil},
		"counter not a number":        {[]map[string]types.AttributeValue{text}, "total_jobs is not a number", nil},
		"counter a fraction":          {[]map[string]types.AttributeValue{frac}, `completed_jobs holds "0.5"`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := SummarizeRun(tt.items, tt.jobs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			}
			if errors.Unwrap(err) == nil && strings.Contains(tt.want, "sort key \"job#x\"") {
				t.Fatalf("err = %v: want the parse error wrapped", err)
			}
		})
	}
}

func TestSummarizeRuns(t *testing.T) {
	a, b := share(1, nil, nil), share(2, nil, nil)
	b["pk"] = &types.AttributeValueMemberS{Value: "7#899#1"}
	empty := share(-1, nil, map[string]string{"total_jobs": "0"})
	empty["pk"] = &types.AttributeValueMemberS{Value: "7#898#1"}
	c := jobItem(3, "completed", "success", true, nil)
	c["run_id"] = &types.AttributeValueMemberN{Value: "897"}
	got, err := SummarizeRuns([]map[string]types.AttributeValue{a, b, empty}, []map[string]types.AttributeValue{c, jobItem(4, "queued", "", false, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || strAttrOf(got[0], "pk") != "7#897#1" || strAttrOf(got[1], "pk") != "7#899#1" || strAttrOf(got[2], "pk") != "7#900#1" {
		t.Fatalf("summaries %v, want 7#897#1 (a job item's run), 7#899#1 then 7#900#1 (the empty run left out)", got)
	}
	if strAttrOf(got[0], "status") != "completed" {
		t.Errorf("7#897#1 = %v, want completed", got[0])
	}
}

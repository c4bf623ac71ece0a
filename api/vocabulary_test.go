package api

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
)

// TestVocabulary: GET /api/vocabulary needs the token and answers the
// registry's statuses in lifecycle order, the stages and the workflow types,
// without a DynamoDB request.
func TestVocabulary(t *testing.T) {
	db := &fakeDB{}
	h := newHandler(t, db, nil)
	if r := do(t, h, "GET", "/api/vocabulary", ""); r.status != 401 {
		t.Fatalf("without a token: %d", r.status)
	}
	if r := do(t, h, "GET", "/api/vocabulary?kind=message", bearer); r.status != 400 || r.errorField("param") != "kind" {
		t.Fatalf("unknown parameter: %s", r.raw)
	}
	r := do(t, h, "GET", "/api/vocabulary", bearer)
	var v Vocabulary
	if err := json.Unmarshal([]byte(r.raw), &v); r.status != 200 || err != nil {
		t.Fatalf("%d %v: %s", r.status, err, r.raw)
	}
	statuses := map[string][]string{}
	for _, d := range v.Domains {
		for _, a := range d.Aggregates {
			statuses[a.Kind] = a.Lifecycle.Names()
		}
	}
	for _, kind := range []string{schema.AggregateMessage, schema.AggregateJob, schema.AggregateAgentExecution} {
		if want := schema.Statuses(kind); len(want) == 0 || !slices.Equal(statuses[kind], want) {
			t.Errorf("%s statuses %v, want %v", kind, statuses[kind], want)
		}
	}
	if !slices.Equal(v.Stages, schema.Stages) || len(v.WorkflowTypes) != 2 || len(v.Domains) != len(schema.Domains()) {
		t.Errorf("vocabulary %s", r.raw)
	}
	if len(db.queries) != 0 {
		t.Error("the vocabulary read DynamoDB")
	}
}

// Scan answers, as a sample of the workflow-jobs table, the job items of
// two runs of installation 7 (one in progress) and, as a sample of the
// workflow-runs table, an older projector's share of a job of one run of
// installation 3.
func (f *fakeDB) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scans = append(f.scans, in)
	if f.fail != nil {
		return nil, f.fail
	}
	// A job's share of its run: the run's status derives from its counters.
	share := func(inst, run, repo, completed string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: inst + "#" + run + "#1"},
			"sk": &types.AttributeValueMemberS{Value: "job#" + run + "0"}, "installation_id": &types.AttributeValueMemberN{Value: inst},
			"repo_full_name": &types.AttributeValueMemberS{Value: repo}, "total_jobs": &types.AttributeValueMemberN{Value: "1"},
			"completed_jobs": &types.AttributeValueMemberN{Value: completed}}
	}
	job := func(run, repo, status string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "7#" + run + "0"}, "sk": &types.AttributeValueMemberS{Value: "v"},
			"installation_id": &types.AttributeValueMemberN{Value: "7"}, "job_id": &types.AttributeValueMemberN{Value: run + "0"},
			"run_id": &types.AttributeValueMemberN{Value: run}, "run_attempt": &types.AttributeValueMemberN{Value: "1"},
			"repo_full_name": &types.AttributeValueMemberS{Value: repo}, "status": &types.AttributeValueMemberS{Value: status},
			schema.AttrCountsInRun: &types.AttributeValueMemberBOOL{Value: true}}
	}
	items := []map[string]types.AttributeValue{share("3", "31", "c/d", "1")}
	if strings.HasSuffix(aws.ToString(in.TableName), schema.TableWorkflowJobs) {
		items = []map[string]types.AttributeValue{job("71", "b/b", "completed"), job("72", "a/a", "in_progress")}
	}
	return &dynamodb.ScanOutput{Items: items, Count: int32(len(items)), ScannedCount: int32(len(items))}, nil
}

// TestVocabularyData: GET /api/vocabulary/data needs the token, takes no
// parameter and answers query.Observed: the sampled runs' installations
// (those with runs in progress first) with their repositories, from two
// bounded Scans, of the workflow-jobs and workflow-runs tables, and the
// spans.
func TestVocabularyData(t *testing.T) {
	db := &fakeDB{}
	h := newHandler(t, db, nil)
	if r := do(t, h, "GET", "/api/vocabulary/data", ""); r.status != 401 {
		t.Fatalf("without a token: %d", r.status)
	}
	if r := do(t, h, "GET", "/api/vocabulary/data?installation=7", bearer); r.status != 400 || r.errorField("param") != "installation" {
		t.Fatalf("unknown parameter: %s", r.raw)
	}
	r := do(t, h, "GET", "/api/vocabulary/data", bearer)
	var got query.Observed
	if err := json.Unmarshal([]byte(r.raw), &got); r.status != 200 || err != nil {
		t.Fatalf("%d %v: %s", r.status, err, r.raw)
	}
	want := []query.ObservedInstallation{
		{Installation: 7, Runs: 2, InProgressRuns: 1, Repositories: []string{"a/a", "b/b"}},
		{Installation: 3, Runs: 1, Repositories: []string{"c/d"}},
	}
	if len(got.Installations) != len(want) {
		t.Fatalf("installations %+v, want %+v", got.Installations, want)
	}
	for i := range want {
		g := got.Installations[i]
		if g.Installation != want[i].Installation || g.Runs != want[i].Runs || g.InProgressRuns != want[i].InProgressRuns || !slices.Equal(g.Repositories, want[i].Repositories) {
			t.Errorf("installation %d: %+v, want %+v", i, g, want[i])
		}
	}
	if got.SampledRuns != 3 || got.Truncated {
		t.Errorf("sampled %d truncated %v, want 3 and false", got.SampledRuns, got.Truncated)
	}
	if len(db.scans) != 2 || aws.ToString(db.scans[0].TableName) != "unit-dev-workflow-jobs" || aws.ToInt32(db.scans[0].Limit) != query.ObservedJobSample ||
		aws.ToString(db.scans[1].TableName) != "unit-dev-workflow-runs" || aws.ToInt32(db.scans[1].Limit) != query.ObservedRunSample {
		t.Fatalf("scans %+v, want one bounded Scan of the jobs, then one of the runs", db.scans)
	}
	for _, q := range db.queries {
		if aws.ToInt32(q.Limit) != 1 {
			t.Errorf("a span Query on %s asks for %d items, want 1", aws.ToString(q.IndexName), aws.ToInt32(q.Limit))
		}
	}
}

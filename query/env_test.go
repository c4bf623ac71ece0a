package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query/querytest"
	"github.com/streamfold/streamfold/schema"
)

// testKey is the cursor key of the test clients.
var testKey = []byte("0123456789abcdef-test-cursor-key")

// world is a workload loaded into DynamoDB Local (events appended, then
// projected with a Projector on a DynamoStore) and, independently, folded
// into a MemStore: the expectation every query is compared with.
type world struct {
	c      *awsclient.Clients
	n      schema.Naming
	q      *Client
	mem    *projector.MemStore
	events []schema.Event
	// appended are the job subjects whose events are in the event table.
	appended map[string]bool
	start    time.Time // first simulated day
	now      time.Time // the clock relative windows use
}

var (
	worldOnce sync.Once
	theWorld  *world
	worldErr  string
)

// loadWorld builds the shared world once per test binary: 1,500 simulated
// events over yesterday and today plus hand-made edge cases.
func loadWorld(t *testing.T) *world {
	t.Helper()
	c := testenv.Clients(t) // skips (or fails) before the Once when services are absent
	worldOnce.Do(func() {
		w, err := buildWorld(t, c)
		if err != nil {
			worldErr = err.Error()
			return
		}
		theWorld = w
	})
	if theWorld == nil {
		t.Fatalf("loading the workload failed: %s", worldErr)
	}
	return theWorld
}

func buildWorld(t *testing.T, c *awsclient.Clients) (*world, error) {
	ctx := context.Background()
	n, _ := testenv.SharedTables(t, c)
	start := testclock.RecentMonday(1)
	w := &world{c: c, n: n, start: start, now: start.Add(36 * time.Hour), mem: projector.NewMemStore()}
	// The old, thin order: the tests need whole lifecycles in 1,500
	// events (jobs queued twice under two ids, every message with its
	// type), which 7.5 seconds a day of the default time order lack.
	evs, _, err := simulate.Generate(simulate.Config{Seed: 11, Events: 1500, Start: start, Days: 2, Order: simulate.OrderSubject})
	if err != nil {
		return nil, err
	}
	evs = append(evs, edgeEvents(w.now)...)
	// Every event gets the same recordedat, in the event table and in both
	// projections, so that they agree exactly.
	recorded := time.Now().UTC().Truncate(time.Millisecond)
	// Only job timelines and duplicate webhooks read the event table, so
	// only the events of the jobs those tests look at are appended (every
	// event of each such job): the first timelineJobs job subjects in
	// sorted order, every job with an action delivered under two ids, and
	// the hand-made jobs. This keeps the load to seconds.
	w.appended = appendedSubjects(evs)
	var jobEvents []schema.Event
	for _, e := range evs {
		if w.appended[e.Subject] {
			jobEvents = append(jobEvents, e)
		}
	}
	if err := querytest.Append(ctx, c.DynamoDB, n, jobEvents, recorded); err != nil {
		return nil, err
	}
	inputs, err := querytest.Inputs(evs, recorded)
	if err != nil {
		return nil, err
	}
	for _, in := range inputs {
		w.events = append(w.events, in.Event)
	}
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		return nil, err
	}
	for _, s := range []projector.Store{store, w.mem} {
		if err := querytest.Project(ctx, s, inputs); err != nil {
			return nil, err
		}
	}
	if w.q, err = New(c.DynamoDB, n, Config{CursorKey: testKey, JobFold: testJobFold}); err != nil {
		return nil, err
	}
	return w, nil
}

// timelineJobs is how many simulated jobs have their events appended.
const timelineJobs = 25

func appendedSubjects(evs []schema.Event) map[string]bool {
	ids := map[[2]string]map[string]bool{} // (subject, type) -> ids
	var subjects []string
	seen := map[string]bool{}
	for _, e := range evs {
		if k, ok := schema.KindOf(e.Type); !ok || k.Domain != schema.DomainGitHub || !strings.Contains(e.Subject, "/job/") {
			continue
		}
		if !seen[e.Subject] {
			seen[e.Subject] = true
			subjects = append(subjects, e.Subject)
		}
		key := [2]string{e.Subject, e.Type}
		if ids[key] == nil {
			ids[key] = map[string]bool{}
		}
		ids[key][e.ID] = true
	}
	sort.Strings(subjects)
	out := map[string]bool{}
	for i, s := range subjects {
		if i < timelineJobs || strings.HasPrefix(s, "github/"+strconv.Itoa(edgeInstallation)+"/") {
			out[s] = true
		}
	}
	for key, set := range ids {
		if len(set) > 1 && strings.HasPrefix(key[1], schema.WorkflowJobTypePrefix) {
			out[key[0]] = true
		}
	}
	return out
}

// Hand-made edge cases, installation 777: a stuck job (in_progress for 10
// hours), a recent in_progress job, a job queued twice under two delivery
// ids (duplicate webhooks) in an incomplete run, and a complete run.
const edgeInstallation = 777

func edgeEvents(now time.Time) []schema.Event {
	var out []schema.Event
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	hook := func(id, action string, job, run int64, created, started, completed time.Time, conclusion string) schema.Event {
		wj := map[string]any{
			"id": job, "run_id": run, "run_attempt": 1, "workflow_name": "CI", "name": "build-" + strconv.FormatInt(job, 10),
			"head_sha": "8c4f1a9e2b7d3f60c5e1a2b3c4d5e6f708192a3b", "head_branch": "main", "status": action,
			"html_url":   "https://github.com/edge/repo/actions/runs/" + strconv.FormatInt(run, 10),
			"created_at": ts(created), "labels": []string{"runs-on", "pool=small-x64"}, "conclusion": nil,
		}
		at := created
		if !started.IsZero() {
			wj["started_at"] = ts(started)
			at = started
		}
		if !completed.IsZero() {
			wj["completed_at"] = ts(completed)
			wj["conclusion"] = conclusion
			at = completed
		}
		data, _ := json.Marshal(map[string]any{
			"action": action, "workflow_job": wj,
			"repository":   map[string]any{"id": 1, "full_name": "edge/repo", "private": false, "default_branch": "main"},
			"installation": map[string]any{"id": edgeInstallation},
		})
		return schema.Event{ID: id, Source: "https://github.com/edge", Type: schema.WorkflowJobTypePrefix + action, Time: at, Data: data,
			Subject: schema.JobSubject(edgeInstallation, job)}
	}
	stuck := now.Add(-10 * time.Hour)
	out = append(out,
		hook("edge-stuck-q", "queued", 9000, 500, stuck, time.Time{}, time.Time{}, ""),
		hook("edge-stuck-p", "in_progress", 9000, 500, stuck, stuck.Add(time.Minute), time.Time{}, ""),
	)
	dup := now.Add(-2 * time.Hour)
	q1 := hook("edge-dup-q1", "queued", 9001, 500, dup, time.Time{}, time.Time{}, "")
	q2 := q1
	q2.ID = "edge-dup-q2"
	out = append(out, q1, q2,
		hook("edge-dup-p", "in_progress", 9001, 500, dup, dup.Add(30*time.Second), time.Time{}, ""),
		hook("edge-dup-c", "completed", 9001, 500, dup, dup.Add(30*time.Second), dup.Add(5*time.Minute), "success"),
	)
	recent := now.Add(-time.Hour)
	out = append(out,
		hook("edge-recent-q", "queued", 9002, 501, recent, time.Time{}, time.Time{}, ""),
		hook("edge-recent-p", "in_progress", 9002, 501, recent, recent.Add(time.Minute), time.Time{}, ""),
		hook("edge-recent-c", "completed", 9002, 501, recent, recent.Add(time.Minute), recent.Add(11*time.Minute), "failure"),
		hook("edge-recent-q3", "queued", 9003, 501, recent, time.Time{}, time.Time{}, ""),
		hook("edge-recent-c3", "completed", 9003, 501, recent, recent.Add(2*time.Minute), recent.Add(4*time.Minute), "success"),
		hook("edge-open-q", "queued", 9004, 502, now.Add(-30*time.Minute), time.Time{}, time.Time{}, ""),
		hook("edge-open-p", "in_progress", 9004, 502, now.Add(-30*time.Minute), now.Add(-29*time.Minute), time.Time{}, ""),
	)
	// Running executions and pending tasks of both workflow types (the
	// simulation finishes almost every one of them).
	ev := func(id, typ, source string, at time.Time, data map[string]any) schema.Event {
		b, _ := json.Marshal(data)
		return schema.Event{ID: id, Source: source, Type: typ, Time: at, Data: b}
	}
	for i, wt := range []string{StepFunctions, StepFunctions, StepFunctions, DurableFunctions, DurableFunctions} {
		execID := fmt.Sprintf("00000000-0000-4000-8000-00000000%04d", i)
		at := now.Add(-time.Duration(i*7+3) * time.Minute)
		src := "streamfold.albums/" + wt
		out = append(out, ev("edge-exec-"+strconv.Itoa(i), schema.TypeAlbumExecutionStarted, src, at,
			map[string]any{"workflowType": wt, "executionId": execID, "imageS3Key": "uploads/edge.jpg"}))
		if i%2 == 0 {
			out = append(out, ev("edge-task-"+strconv.Itoa(i), schema.TypeTaskCreated, src, at.Add(time.Second), map[string]any{
				"workflowType": wt, "taskId": "edge-task-" + strconv.Itoa(i), "executionId": execID, "imageS3Key": "uploads/edge.jpg",
				"albums":    []map[string]any{{"albumIndex": 1, "albumName": "Abbey Road", "artist": "The Beatles", "year": 1969}},
				"taskToken": "token-" + strconv.Itoa(i), "expiresAt": ts(at.Add(time.Hour)),
			}))
		}
	}
	// Messages that are not finished yet, in every stage.
	for i, st := range []string{"created", "queued", "processing", "created", "processing", "queued"} {
		id := fmt.Sprintf("11111111-0000-4000-8000-00000000%04d", i)
		stage := schema.Stages[i%3]
		at := now.Add(-time.Duration(i*90+10) * time.Minute)
		src := "rez_agent/" + stage
		out = append(out, ev("edge-msg-c-"+strconv.Itoa(i), schema.TypeMessageCreated, src, at, map[string]any{
			"message_id": id, "stage": stage, "message_type": "scheduled_hello", "created_by": "scheduler",
			"payload": map[string]any{"text": "hello"}, "correlation_id": "22222222-0000-4000-8000-000000000000",
		}))
		if st != "created" {
			out = append(out, ev("edge-msg-q-"+strconv.Itoa(i), schema.TypeMessageQueued, src, at.Add(time.Second), map[string]any{"message_id": id, "stage": stage}))
		}
		if st == "processing" {
			out = append(out, ev("edge-msg-p-"+strconv.Itoa(i), schema.TypeMessageProcessing, src, at.Add(2*time.Second), map[string]any{"message_id": id, "stage": stage, "retry_count": 0}))
		}
	}
	return out
}

// memItems returns every item of a logical table in the MemStore, plain.
func (w *world) memItems(table string) []map[string]any {
	var out []map[string]any
	for _, it := range w.mem.Items(table) {
		out = append(out, Plain(it))
	}
	return out
}

// memRuns returns the run summaries of the in-memory projection, as Run
// reads them: each run's jobs' items and what workflow-runs holds of it,
// summed.
func (w *world) memRuns(t *testing.T) []map[string]any {
	t.Helper()
	var items, jobs []map[string]types.AttributeValue
	for _, it := range w.mem.Items(schema.TableWorkflowRuns) {
		items = append(items, it)
	}
	for _, it := range w.mem.Items(schema.TableWorkflowJobs) {
		jobs = append(jobs, it)
	}
	sums, err := schema.SummarizeRuns(items, jobs)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, s := range sums {
		out = append(out, Plain(s))
	}
	return out
}

// canon renders a plain item comparably: numbers as exact rationals.
func canon(v any) any {
	switch t := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(t))
		if !ok {
			return "N?" + string(t)
		}
		return "N:" + r.RatString()
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = canon(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = canon(e)
		}
		return out
	}
	return v
}

func canonJSON(v any) string {
	b, err := json.Marshal(canon(v))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// listCase is a list pattern and its expectation: the items in order.
type listCase struct {
	name string
	// fetch returns one page.
	fetch func(p PageRequest) (Page, error)
	want  []map[string]any
	// id identifies an item; sortKey is what the order is by (ties may
	// come in any order).
	id, sortKey func(map[string]any) string
}

// pageAll follows a list to its end with a page size, checking that no item
// is missing or repeated, that the order of the sort keys is the
// expected one and that every item equals its expectation.
func pageAll(t *testing.T, w *world, lc listCase, limit int) {
	t.Helper()
	var got []map[string]any
	cursor := ""
	pages := 0
	for {
		before := w.q.Stats()
		p, err := lc.fetch(PageRequest{Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatalf("%s: page %d: %v", lc.name, pages+1, err)
		}
		if reqs := w.q.Stats().Sub(before).Requests; reqs > int64(w.q.cfg.MaxRequestsPerPage) {
			t.Fatalf("%s: page %d took %d requests, more than %d", lc.name, pages+1, reqs, w.q.cfg.MaxRequestsPerPage)
		}
		if len(p.Items) > limit {
			t.Fatalf("%s: page %d has %d items, limit %d", lc.name, pages+1, len(p.Items), limit)
		}
		pages++
		got = append(got, p.Items...)
		if p.Next == "" {
			break
		}
		if pages > 10000 {
			t.Fatalf("%s: endless paging", lc.name)
		}
		cursor = p.Next
	}
	if len(got) != len(lc.want) {
		t.Fatalf("%s (limit %d): %d items over %d pages, want %d", lc.name, limit, len(got), pages, len(lc.want))
	}
	want := map[string]map[string]any{}
	for _, it := range lc.want {
		want[lc.id(it)] = it
	}
	seen := map[string]bool{}
	for i, it := range got {
		id := lc.id(it)
		if seen[id] {
			t.Fatalf("%s: item %s repeated", lc.name, id)
		}
		seen[id] = true
		exp, ok := want[id]
		if !ok {
			t.Fatalf("%s: unexpected item %s", lc.name, id)
		}
		if canonJSON(it) != canonJSON(exp) {
			t.Fatalf("%s: item %s differs\n got %s\nwant %s", lc.name, id, canonJSON(it), canonJSON(exp))
		}
		if g, e := lc.sortKey(it), lc.sortKey(lc.want[i]); g != e {
			t.Fatalf("%s: position %d has sort key %q, want %q (order)", lc.name, i, g, e)
		}
	}
}

// filterSort selects items and orders them by key, descending when desc.
func filterSort(items []map[string]any, keep func(map[string]any) bool, key func(map[string]any) string, desc bool) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if desc {
			return key(out[i]) > key(out[j])
		}
		return key(out[i]) < key(out[j])
	})
	return out
}

func attr(name string) func(map[string]any) string {
	return func(it map[string]any) string { return fmt.Sprint(it[name]) }
}

// testJobFold is the projector's job fold, as the binaries wire it.
func testJobFold() JobFold { return projector.NewJobFold() }

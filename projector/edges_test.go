package projector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Edges of the projection (issue 20, items 5 and 6): late events after
// their aggregate expired, events dated in the future, a task whose id is
// its execution's, a run row that would pass 400 KB. Each runs on MemStore
// and, as Test...DynamoDB, on DynamoDB Local.

// backend is a store under test with what the tests need besides the
// Store: deleting an item (as DynamoDB's TTL does) and reading a table.
type backend struct {
	store projector.Store
	// del deletes one item of a logical table.
	del func(t *testing.T, table string, key map[string]types.AttributeValue)
	// items returns a logical table, by item id, internal attributes
	// dropped, in canonical form.
	items func(t *testing.T, table string) map[string]map[string]any
	// raw returns a logical table's items as stored.
	raw func(t *testing.T, table string) []map[string]types.AttributeValue
}

// runSummary is the summary of run pk as readers sum it (schema.SummarizeRuns)
// from the backend's workflow-runs and workflow-jobs items.
func (b backend) runSummary(t *testing.T, pk string) map[string]any {
	t.Helper()
	return projector.CanonicalItem(runSummaryOf(t, pk, b.raw(t, schema.TableWorkflowRuns), b.raw(t, schema.TableWorkflowJobs)))
}

func memBackend(*testing.T) backend {
	m := projector.NewMemStore()
	return backend{
		store: m,
		del: func(_ *testing.T, table string, key map[string]types.AttributeValue) {
			m.Delete(table, key)
		},
		items: func(_ *testing.T, table string) map[string]map[string]any {
			out := map[string]map[string]any{}
			for id, it := range m.Items(table) {
				out[id] = projector.CanonicalItem(schema.StripInternal(it))
			}
			return out
		},
		raw: func(_ *testing.T, table string) []map[string]types.AttributeValue {
			return slices.Collect(maps.Values(m.Items(table)))
		},
	}
}

func dynamoBackend(t *testing.T) backend {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	return backend{
		store: store,
		del: func(t *testing.T, table string, key map[string]types.AttributeValue) {
			if _, err := c.DynamoDB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(n.Table(table)), Key: key}); err != nil {
				t.Fatal(err)
			}
		},
		items: func(t *testing.T, table string) map[string]map[string]any {
			out := map[string]map[string]any{}
			p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(n.Table(table)), ConsistentRead: aws.Bool(true)})
			for p.HasMorePages() {
				page, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range page.Items {
					out[projector.ItemID(table, it)] = projector.CanonicalItem(schema.StripInternal(it))
				}
			}
			return out
		},
		raw: func(t *testing.T, table string) []map[string]types.AttributeValue {
			var out []map[string]types.AttributeValue
			p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(n.Table(table)), ConsistentRead: aws.Bool(true)})
			for p.HasMorePages() {
				page, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, page.Items...)
			}
			return out
		},
	}
}

// inputsOf validates events into inputs at consecutive positions.
func inputsOf(t *testing.T, evs ...schema.Event) []projector.Input {
	t.Helper()
	var out []projector.Input
	for i, e := range evs {
		in, ok, err := projector.InputOf(e, fmt.Sprintf("%021d", i+1))
		if err != nil || !ok {
			t.Fatalf("input %s: %v, %v", e.ID, ok, err)
		}
		out = append(out, in)
	}
	return out
}

// TestLateEventAfterExpiry: a job projected (job item and run row), then
// expired (DynamoDB's TTL deletes both), then one more webhook of the job
// recorded 100 days later. The old projector recreated the run row from
// that event alone: no total_jobs, status in_progress, 90 more days of TTL.
// The rule: an event recorded at or after its aggregate's expiry is late,
// not projected (Outcome.Late counts it), and so is every later one.
func TestLateEventAfterExpiry(t *testing.T) { checkLateEventAfterExpiry(t, memBackend(t)) }

func TestLateEventAfterExpiryDynamoDB(t *testing.T) { checkLateEventAfterExpiry(t, dynamoBackend(t)) }

func checkLateEventAfterExpiry(t *testing.T, b backend) {
	ctx := context.Background()
	proj, err := projector.New(b.store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	evs := fixtureJob(t)
	// Recorded 200 days ago: the job's projection expired 110 days ago.
	recorded := time.Now().UTC().Truncate(time.Second).AddDate(0, 0, -200)
	for i := range evs {
		rec := recorded.Add(time.Duration(i) * time.Second)
		evs[i].RecordedAt = &rec
	}
	if out := proj.Project(ctx, inputsOf(t, evs...)); len(out.Failed)+len(out.Poison) > 0 || out.Late != 0 {
		t.Fatalf("first projection: %+v", out)
	}
	runs := b.items(t, schema.TableWorkflowRuns)
	if len(runs) != 0 || len(b.items(t, schema.TableWorkflowJobs)) != 1 {
		t.Fatalf("projected %d items in workflow-runs, want none: the job item is its share of its run", len(runs))
	}
	if sum := b.runSummary(t, schema.RunKey(12345, 54321, 1)); fmt.Sprint(sum["total_jobs"]) != "N:1" {
		t.Fatalf("run summary %v, want the job counted", sum)
	}
	// DynamoDB's TTL deletes the expired item.
	b.del(t, schema.TableWorkflowJobs, map[string]types.AttributeValue{"pk": avS(schema.JobKey(12345, 67890)), "sk": avS("v")})

	for i, id := range []string{"late-1", "late-2"} {
		late := evs[len(evs)-1]
		late.ID = id
		rec := time.Now().UTC().Truncate(time.Second).Add(time.Duration(i) * time.Second)
		late.RecordedAt = &rec
		out := proj.Project(ctx, inputsOf(t, late))
		if len(out.Failed)+len(out.Poison) > 0 || out.Late != 1 || out.Changed != 0 {
			t.Fatalf("%s: outcome %+v, want Late 1 and nothing changed", id, out)
		}
		if got := b.items(t, schema.TableWorkflowRuns); len(got) != 0 {
			t.Fatalf("%s recreated the job's expired share of its run: %v", id, got)
		}
		if got := b.items(t, schema.TableWorkflowJobs); len(got) != 0 {
			t.Fatalf("%s recreated the expired job item: %v", id, got)
		}
	}
}

// TestLateRuleIsAFunctionOfRecordedAt: the same events give the same
// projection whatever the batching and arrival order: all at once, one
// per batch in recording order, or the late one first. The fold applies a
// subject's inputs in recordedat order, so the rule never depends on how
// the events were delivered.
func TestLateRuleIsAFunctionOfRecordedAt(t *testing.T) {
	evs := fixtureJob(t)
	recorded := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	for i := range evs {
		rec := recorded.Add(time.Duration(i) * time.Second)
		evs[i].RecordedAt = &rec
	}
	late := evs[len(evs)-1]
	late.ID = "late"
	rec := recorded.AddDate(0, 0, 120)
	late.RecordedAt = &rec
	all := append(append([]schema.Event{}, evs...), late)
	orders := map[string][][]schema.Event{
		"one batch":             {all},
		"one per batch":         nil,
		"one batch, late first": {append([]schema.Event{late}, evs...)},
	}
	for _, e := range all {
		orders["one per batch"] = append(orders["one per batch"], []schema.Event{e})
	}
	var want map[string]map[string]any
	for _, name := range []string{"one batch", "one per batch", "one batch, late first"} {
		b := memBackend(t)
		proj, _ := projector.New(b.store, projector.Config{})
		late := 0
		for _, batch := range orders[name] {
			out := proj.Project(context.Background(), inputsOf(t, batch...))
			if len(out.Failed)+len(out.Poison) > 0 {
				t.Fatalf("%s: %+v", name, out)
			}
			late += out.Late
		}
		got := b.items(t, schema.TableWorkflowRuns)
		for id, it := range b.items(t, schema.TableWorkflowJobs) {
			got[id] = it
		}
		if late != 1 {
			t.Fatalf("%s: %d late, want 1", name, late)
		}
		if want == nil {
			want = got
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: projection\n%v\nwant\n%v", name, got, want)
		}
	}
}

// TestFutureEventQuarantinedAlone: an event dated years ahead of its
// recordedat (it reached the event table without the ingest check) is
// dead-lettered alone, with a reason naming its time and recordedat; the
// job's other events are projected, and the job's item holds nothing of
// it. On the old projector it won every last-writer attribute.
func TestFutureEventQuarantinedAlone(t *testing.T) {
	evs := fixtureJob(t)
	future := evs[0]
	future.ID = "from-the-future"
	future.Time = time.Now().UTC().AddDate(3, 0, 0).Truncate(time.Second)
	var data map[string]any
	if err := json.Unmarshal(future.Data, &data); err != nil {
		t.Fatal(err)
	}
	data["workflow_job"].(map[string]any)["workflow_name"] = "FUTURE"
	future.Data, _ = json.Marshal(data)
	evs = append(evs, future)

	store := projector.NewMemStore()
	proj, err := projector.New(store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dl := &recordingDL{}
	h := projector.NewHandler(proj, dl, projector.HandlerConfig{}, testenv.QuietLog())
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: lambdaRecords(t, evs)})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want no failure", resp, err)
	}
	if len(dl.letters) != 1 {
		t.Fatalf("%d dead letters, want the future event's alone: %+v", len(dl.letters), dl.letters)
	}
	d := dl.letters[0]
	if d.Reason != "poison" || !strings.Contains(d.Error, "from-the-future") || !strings.Contains(d.Error, "time "+future.Time.Format(time.RFC3339)) || !strings.Contains(d.Error, "recordedat") || !strings.Contains(d.Error, "MaxFutureSkew") {
		t.Fatalf("dead letter %+v: want reason poison and an error naming the event, its time and recordedat, and the limit", d)
	}
	jobs := store.Items(schema.TableWorkflowJobs)
	if len(jobs) != 1 {
		t.Fatalf("%d job items, want 1", len(jobs))
	}
	for _, it := range jobs {
		if sAttr(it, "workflow_name") != "CI" {
			t.Fatalf("job item workflow_name %q: the future event won it", sAttr(it, "workflow_name"))
		}
	}
	if run := memRunSummary(t, store, schema.RunKey(12345, 54321, 1)); sAttr(run, "workflow_name") != "CI" || sAttr(run, "total_jobs") != "1" {
		t.Fatalf("run row %v", foldAttrs(run))
	}
}

// TestMaxFutureSkewWithinSkew: an event ahead of its recordedat by less
// than the skew (a producer's clock a little fast) is projected; a smaller
// configured skew quarantines it.
func TestMaxFutureSkewWithinSkew(t *testing.T) {
	f := foldJobEvents(t, schema.JobSubject(12345, 67890))[0]
	e := f.E
	rec := e.Time.Add(-time.Hour)
	e.RecordedAt = &rec
	for _, tt := range []struct {
		skew time.Duration
		want error
	}{
		{0, nil}, // the default, 24 h
		{2 * time.Hour, nil},
		{30 * time.Minute, projector.ErrFutureEvent},
	} {
		proj, err := projector.New(projector.NewMemStore(), projector.Config{MaxFutureSkew: tt.skew})
		if err != nil {
			t.Fatal(err)
		}
		out := proj.Project(context.Background(), inputsOf(t, e))
		if got := out.Quarantined[0]; !errors.Is(got, tt.want) && got != tt.want {
			t.Fatalf("skew %s: quarantined %v, want %v", tt.skew, got, tt.want)
		}
	}
}

func TestConfigValidateMaxFutureSkew(t *testing.T) {
	for _, tt := range []struct {
		skew time.Duration
		ok   bool
	}{
		{time.Second, true},
		{projector.MaxMaxFutureSkew, true},
		{-time.Second, false},
		{projector.MaxMaxFutureSkew + time.Second, false},
	} {
		c := projector.Config{MaxFutureSkew: tt.skew}
		c.SetDefaults()
		err := c.Validate()
		if (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), "Config.MaxFutureSkew") {
			t.Fatalf("MaxFutureSkew %s: Validate = %v, want ok %v and the field named", tt.skew, err, tt.ok)
		}
	}
}

// albumPair is an execution that completes at a cost and a validation task
// whose taskId equals the execution's id (seed 001 keys both items
// pk=<id>, sk=metadata).
func albumPair(t *testing.T) (exec, task []schema.Event) {
	t.Helper()
	const id = "3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
	at := time.Date(2026, 1, 15, 10, 30, 0, 0, time.UTC)
	ev := func(eid, typ string, off time.Duration, data string) schema.Event {
		return schema.Event{ID: eid, Source: "streamfold.albums/step-functions", Type: typ, Time: at.Add(off), Data: json.RawMessage(data)}
	}
	exec = []schema.Event{
		ev("e1", schema.TypeAlbumExecutionStarted, 0, `{"workflowType":"step-functions","executionId":"`+id+`","imageS3Key":"uploads/a.jpg"}`),
		ev("e2", schema.TypeAlbumExecutionCompleted, time.Minute, `{"workflowType":"step-functions","executionId":"`+id+`","durationMs":60000,"estimatedCost":0.5}`),
	}
	task = []schema.Event{
		ev("t1", schema.TypeTaskCreated, time.Second, `{"workflowType":"step-functions","taskId":"`+id+`","executionId":"`+id+`","imageS3Key":"uploads/a.jpg","albums":[{"albumIndex":1,"albumName":"A","artist":"B","year":1973}],"taskToken":"tok","expiresAt":"2026-01-15T11:30:12Z"}`),
		ev("t2", schema.TypeTaskCompleted, 30*time.Second, `{"workflowType":"step-functions","taskId":"`+id+`","executionId":"`+id+`","validatedData":[{"albumIndex":1,"albumName":"A","artist":"B","year":1974}]}`),
	}
	return exec, task
}

// TestTaskIDEqualsExecutionIDEitherOrder: the execution owns pk=<id>,
// sk=metadata; the task's records are quarantined whichever arrives first,
// and the items, the dead letters and the daily metrics are the same in
// both orders. On the old projector, with the task first, the task owned
// the item and the execution was dead-lettered but still counted.
func TestTaskIDEqualsExecutionIDEitherOrder(t *testing.T) {
	checkTaskIDEqualsExecutionID(t, memBackend)
}

func TestTaskIDEqualsExecutionIDEitherOrderDynamoDB(t *testing.T) {
	checkTaskIDEqualsExecutionID(t, dynamoBackend)
}

func checkTaskIDEqualsExecutionID(t *testing.T, newBackend func(*testing.T) backend) {
	exec, task := albumPair(t)
	type result struct {
		items   map[string]map[string]any
		letters []string
		reasons []string
	}
	run := func(name string, batches ...[]schema.Event) result {
		b := newBackend(t)
		proj, err := projector.New(b.store, projector.Config{})
		if err != nil {
			t.Fatal(err)
		}
		dl := &recordingDL{}
		h := projector.NewHandler(proj, dl, projector.HandlerConfig{}, testenv.QuietLog())
		for _, batch := range batches {
			resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: lambdaRecords(t, batch)})
			if err != nil || len(resp.BatchItemFailures) > 0 {
				t.Fatalf("%s: Handle = %+v, %v", name, resp, err)
			}
		}
		var r result
		r.items = b.items(t, schema.TableWorkflows)
		for _, it := range r.items {
			delete(it, "updatedAt") // the latest recordedat: when the test ran
		}
		for _, d := range dl.letters {
			id := d.Error
			for _, e := range append(append([]schema.Event{}, exec...), task...) {
				if strings.Contains(d.Error, "event "+e.ID+" ") {
					id = e.ID
				}
			}
			r.letters = append(r.letters, id)
			r.reasons = append(r.reasons, d.Error)
		}
		sort.Strings(r.letters)
		return r
	}
	execFirst := run("execution first", exec, task)
	taskFirst := run("task first", task, exec)
	oneBatch := run("one batch, task first", append(append([]schema.Event{}, task...), exec...))
	for name, r := range map[string]result{"task first": taskFirst, "one batch, task first": oneBatch} {
		if !reflect.DeepEqual(r.items, execFirst.items) {
			t.Errorf("%s: workflows items\n%v\nwant (execution first)\n%v", name, r.items, execFirst.items)
		}
		if !reflect.DeepEqual(r.letters, execFirst.letters) {
			t.Errorf("%s: dead letters %v, want %v", name, r.letters, execFirst.letters)
		}
	}
	for _, reason := range execFirst.reasons {
		if !strings.Contains(reason, "belongs to albums/execution/") {
			t.Fatalf("dead letter %s; want the reason naming the owner", reason)
		}
	}
	var meta, metrics map[string]any
	for _, it := range execFirst.items {
		switch it["entityType"] {
		case "S:" + schema.EntityExecution:
			meta = it
		case "S:" + schema.EntityMetrics:
			metrics = it
		}
	}
	if meta == nil || meta["status"] != "S:completed" {
		t.Fatalf("metadata item %v, want the execution's", meta)
	}
	if metrics == nil || fmt.Sprint(metrics["executionCount"]) != "N:1" || fmt.Sprint(metrics["totalCost"]) != "N:1/2" {
		t.Fatalf("metrics row %v, want the execution counted once at its cost", metrics)
	}
	if len(execFirst.letters) != 2 {
		t.Fatalf("dead letters %v, want the task's two records", execFirst.letters)
	}
}

// jobWebhook is the seed 003 queued webhook of job id in run 777,
// attempt 1, with the given workflow name and head branch ("" leaves
// them out).
func jobWebhook(t *testing.T, id int64, at time.Time, workflow, branch string) schema.Event {
	t.Helper()
	base := foldJobEvents(t, schema.JobSubject(12345, 67890))[0].E
	var data map[string]any
	if err := json.Unmarshal(base.Data, &data); err != nil {
		t.Fatal(err)
	}
	job := data["workflow_job"].(map[string]any)
	job["id"], job["run_id"] = id, 777
	job["workflow_name"], job["head_branch"] = workflow, branch
	raw, _ := json.Marshal(data)
	e := schema.Event{ID: fmt.Sprintf("job-%d", id), Source: base.Source, Type: base.Type, Time: at, Data: raw}
	if _, err := schema.Validate(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestLongRunAttributesDoNotMeetInOneItem: two jobs of one run whose own
// items fit, but whose attributes joined would not (one's 200 KB head
// branch, the other's 220 KB workflow name), in one batch. A projector that
// kept one summary row per run had to refuse the second job as poison (the
// row past 400 KB); each job's item is now its own share of the run, so
// both commit, and the run's summary, summed on read, has both jobs and
// both attributes.
func TestLongRunAttributesDoNotMeetInOneItem(t *testing.T) { checkOversizeRunRow(t, memBackend(t)) }

func TestLongRunAttributesDoNotMeetInOneItemDynamoDB(t *testing.T) {
	checkOversizeRunRow(t, dynamoBackend(t))
}

func checkOversizeRunRow(t *testing.T, b backend) {
	at := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	first := jobWebhook(t, 901, at, "", strings.Repeat("b", 200<<10))
	// A 220 KB workflow name is refused at the door now (schema's field
	// limits); the row guard stays as a defence, so the second job's name
	// is set past the door, in its decoded payload.
	second := jobWebhook(t, 902, at.Add(time.Second), "CI", "")
	payload, err := schema.Validate(&second)
	if err != nil {
		t.Fatal(err)
	}
	payload.(*schema.WorkflowJobWebhook).WorkflowJob.WorkflowName = strings.Repeat("w", 220<<10)
	in2, ok, err := projector.InputUnchecked(second, payload, fmt.Sprintf("%021d", 2))
	if err != nil || !ok {
		t.Fatalf("input %s: %v, %v", second.ID, ok, err)
	}
	proj, err := projector.New(b.store, projector.Config{ConflictRetries: 3})
	if err != nil {
		t.Fatal(err)
	}
	out := proj.Project(context.Background(), append(inputsOf(t, first), in2))
	if len(out.Failed)+len(out.Poison) != 0 {
		t.Fatalf("failed %v, poison %v: want both jobs projected", out.Failed, out.Poison)
	}
	if runs := b.items(t, schema.TableWorkflowRuns); len(runs) != 0 {
		t.Fatalf("%d items in workflow-runs, want none: each job item is its share of the run", len(runs))
	}
	branch, workflow := 0, 0
	for _, r := range b.items(t, schema.TableWorkflowJobs) {
		if fmt.Sprint(r["head_branch"]) == "S:"+strings.Repeat("b", 200<<10) {
			branch++
		}
		if fmt.Sprint(r["workflow_name"]) == "S:"+strings.Repeat("w", 220<<10) {
			workflow++
		}
	}
	sum := b.runSummary(t, schema.RunKey(12345, 777, 1))
	if branch != 1 || workflow != 1 || fmt.Sprint(sum["total_jobs"]) != "N:2" || fmt.Sprint(sum["head_branch"]) != "S:"+strings.Repeat("b", 200<<10) || fmt.Sprint(sum["workflow_name"]) != "S:"+strings.Repeat("w", 220<<10) {
		t.Fatalf("job items: %d with the long branch, %d with the long name, summary total_jobs %v; want 1, 1, 2 and both attributes", branch, workflow, sum["total_jobs"])
	}
	if n := len(b.items(t, schema.TableWorkflowJobs)); n != 2 {
		t.Fatalf("%d job items, want both", n)
	}
}

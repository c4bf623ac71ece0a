package projector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// recordingDL keeps the dead letters a handler writes.
type recordingDL struct {
	mu      sync.Mutex
	letters []projector.DeadLetter
}

func (r *recordingDL) Put(_ context.Context, d projector.DeadLetter) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.letters = append(r.letters, d)
	return nil
}

// messageEvent builds a valid rez.message.created event with a payload
// text of n bytes.
func messageEvent(t *testing.T, id string, n int) schema.Event {
	t.Helper()
	data, _ := json.Marshal(map[string]any{
		"message_id": id, "stage": "dev", "message_type": "manual_notification", "created_by": "test",
		"correlation_id": "660e9500-f39c-52e5-b827-557766551111",
		"payload":        map[string]any{"text": strings.Repeat("x", n), "priority": "default", "tags": []string{"t"}},
	})
	e := schema.Event{ID: "ev-" + id, Source: "rez_agent/dev", Type: schema.TypeMessageCreated, Time: time.Now().UTC().Truncate(time.Millisecond), Data: data}
	if _, err := schema.Validate(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestOversizeAggregateIsPoisonAlone: an aggregate whose item would exceed
// DynamoDB's 400 KB limit can never be written. Its records go to the dead
// letters with the reason; the other records of the batch, which share its
// counter row, commit, and the batch reports no failure (nothing retries
// forever).
func TestOversizeAggregateIsPoisonAlone(t *testing.T) {
	evs := []schema.Event{
		messageEvent(t, "11111111-1111-4111-8111-111111111111", 100),
		messageEvent(t, "22222222-2222-4222-8222-222222222222", 410<<10),
		messageEvent(t, "33333333-3333-4333-8333-333333333333", 100),
	}
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
	if len(dl.letters) != 1 || !strings.Contains(dl.letters[0].Error, "400 KB") || dl.letters[0].Reason != "poison" {
		t.Fatalf("dead letters = %+v, want the oversize message's record with the reason", dl.letters)
	}
	if got := len(store.Items(schema.TableMessages)); got != 2 {
		t.Fatalf("%d message items, want the 2 that fit", got)
	}
	for _, row := range store.Items(schema.TableMetrics) {
		if v := row["total"].(*types.AttributeValueMemberN).Value; v != "2" {
			t.Fatalf("stage row total = %s, want 2 (the poisoned message never counted)", v)
		}
	}
}

// TestItemOwnedByAnotherAggregate: a validation task whose taskId equals
// its execution's id would write the execution's item (both are keyed
// pk=<id>, sk=metadata by seed 001). Items belong to their aggregate: the
// task is quarantined with a reason naming both, the execution's item stays.
func TestItemOwnedByAnotherAggregate(t *testing.T) {
	exec := `{"workflowType":"step-functions","executionId":"3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b","imageS3Key":"uploads/a.jpg"}`
	task := `{"workflowType":"step-functions","taskId":"3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b","executionId":"3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b","imageS3Key":"uploads/a.jpg","albums":[{"albumIndex":1,"albumName":"A","artist":"B","year":1973}],"taskToken":"tok","expiresAt":"2026-01-15T11:30:12Z"}`
	at := time.Date(2026, 1, 15, 10, 30, 0, 0, time.UTC)
	evs := []schema.Event{
		{ID: "e1", Source: "streamfold.albums/step-functions", Type: schema.TypeAlbumExecutionStarted, Time: at, Data: json.RawMessage(exec)},
		{ID: "t1", Source: "streamfold.albums/step-functions", Type: schema.TypeTaskCreated, Time: at.Add(time.Second), Data: json.RawMessage(task)},
	}
	store := projector.NewMemStore()
	proj, _ := projector.New(store, projector.Config{})
	dl := &recordingDL{}
	h := projector.NewHandler(proj, dl, projector.HandlerConfig{}, testenv.QuietLog())
	recs := lambdaRecords(t, evs)
	for _, r := range recs { // one batch each: the execution first
		if resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{r}}); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("Handle = %+v, %v", resp, err)
		}
	}
	if len(dl.letters) != 1 || !strings.Contains(dl.letters[0].Error, "belongs to albums/execution/3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b") {
		t.Fatalf("dead letters = %+v, want the task's record, naming the owner", dl.letters)
	}
	it, _ := store.Get(context.Background(), schema.TableWorkflows, map[string]types.AttributeValue{"pk": avS("3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"), "sk": avS("metadata")})
	if sAttr(it, "entityType") != "execution" {
		t.Fatalf("metadata item = %v, want the execution's", it)
	}
}

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// TestHotRowOneWritePerBatch: a batch's deltas to one counter row are one
// write (a hot daily row is not written by several transactions of one
// batch, which could cancel each other).
func TestHotRowOneWritePerBatch(t *testing.T) {
	var evs []schema.Event
	for i := range 60 {
		evs = append(evs, messageEvent(t, fmt.Sprintf("%08d-1111-4111-8111-111111111111", i), 10))
	}
	store := &rowWrites{MemStore: projector.NewMemStore(), n: map[string]int{}}
	proj, _ := projector.New(store, projector.Config{Concurrency: 8})
	var inputs []projector.Input
	for i, e := range evs {
		in, _, err := projector.InputOf(e, fmt.Sprintf("%021d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, in)
	}
	out := proj.Project(context.Background(), inputs)
	if len(out.Failed)+len(out.Poison) > 0 || out.Changed != 60 {
		t.Fatalf("outcome %+v", out)
	}
	if len(store.n) != 1 {
		t.Fatalf("rows written %v, want one stage row", store.n)
	}
	for id, n := range store.n {
		if n != 1 {
			t.Fatalf("row %q written %d times in one batch, want once", id, n)
		}
	}
}

type rowWrites struct {
	*projector.MemStore
	mu sync.Mutex
	n  map[string]int
}

func (r *rowWrites) Commit(ctx context.Context, tx projector.Tx) error {
	err := r.MemStore.Commit(ctx, tx)
	if err == nil {
		r.mu.Lock()
		for _, row := range tx.Rows {
			r.n[projector.ItemID(row.Table, row.Item)]++
		}
		r.mu.Unlock()
	}
	return err
}

// TestUpgradeChangingContributions: a deploy that changes what aggregates
// contribute (rule B adds a counter and counts every message twice) between
// two halves of a workload leaves every counter row equal to the sum over
// aggregates of what the rule in force at their last change says. The
// projector subtracts what it applied, not what the new rule would have
// given for the old state.
func TestUpgradeChangingContributions(t *testing.T) {
	start := testclock.RecentMonday(2)
	evs, _, err := simulate.Generate(simulate.Config{Seed: 5, Events: 3000, Days: 1, Start: start, Mix: simulate.Mix{Messages: 1}})
	if err != nil {
		t.Fatal(err)
	}
	recs := lambdaRecords(t, evs)
	half := len(recs) / 2
	ruleB := func(_ projector.Aggregate, cs []projector.Contribution) []projector.Contribution {
		out := make([]projector.Contribution, len(cs))
		for i, c := range cs {
			counters := map[string]int64{}
			for k, v := range c.Counters {
				counters[k] = 2 * v
			}
			counters["weighted"] = 3 * c.Counters["total"]
			c.Counters = counters
			out[i] = c
		}
		return out
	}
	store := projector.NewMemStore()
	proj, _ := projector.New(store, projector.Config{})
	h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
	handle := func(rs []events.DynamoDBEventRecord) {
		for i := 0; i < len(rs); i += 100 {
			resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: rs[i:min(i+100, len(rs))]})
			if err != nil || len(resp.BatchItemFailures) > 0 {
				t.Fatalf("Handle = %+v, %v", resp, err)
			}
		}
	}
	handle(recs[:half])
	restore := projector.SetContributionsHookForTest(ruleB)
	defer restore()
	handle(recs[half:])

	// The reference: each aggregate's contribution under the rule in force
	// when it last changed (B if any of its events came after the switch).
	all := evsFromRecords(t, recs)
	late := map[string]bool{}
	for _, e := range evsFromRecords(t, recs[half:]) {
		late[e.Subject] = true
	}
	bySubject := map[string][]schema.Event{}
	for _, e := range all {
		bySubject[e.Subject] = append(bySubject[e.Subject], e)
	}
	want := map[string]map[string]int64{}
	for subj, es := range bySubject {
		agg := projector.NewAggregate(projector.KindMessage)
		for _, e := range es {
			p, _ := schema.Validate(&e)
			agg.Apply(e, p)
		}
		cs := agg.Contributions()
		if late[subj] {
			cs = ruleB(agg, cs)
		}
		for _, c := range cs {
			id := projector.ItemID(c.Table, c.Key)
			if want[id] == nil {
				want[id] = map[string]int64{}
			}
			for k, v := range c.Counters {
				want[id][k] += v
			}
		}
	}
	got := store.Items(schema.TableMetrics)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for _, row := range got {
		id := projector.ItemID(schema.TableMetrics, row)
		for k, v := range want[id] {
			g := "0"
			if n, ok := row[k].(*types.AttributeValueMemberN); ok {
				g = n.Value
			}
			if g != fmt.Sprint(v) {
				t.Errorf("%s %s = %s, want %d", id, k, g, v)
			}
		}
	}
}

// TestNanosExact: costs become integer nano-dollars from their decimal
// form, so a day's totalCost is exactly the sum of its items' costs (a
// float multiplication would round 0.000000007 or 1e-9 * 3 differently).
func TestNanosExact(t *testing.T) {
	for in, want := range map[float64]int64{0: 0, 0.0041: 4_100_000, 0.000000007: 7, 1000: 1_000_000_000_000, 0.1 + 0.2: 300_000_000, 123.456789012: 123_456_789_012} {
		if in == 0.1+0.2 {
			continue // 0.30000000000000004 has 17 decimals: refused by validation
		}
		if got := projector.Nanos(in); got != want {
			t.Errorf("Nanos(%v) = %d, want %d", in, got, want)
		}
	}
}

// TestConflictIsRetriedNeverDropped: a commit refused for a version
// conflict (or DynamoDB's TransactionConflict) is read, folded and
// committed again; a subject that still conflicts after the retries is
// reported failed (its records come back). It is never silently dropped.
func TestConflictIsRetriedNeverDropped(t *testing.T) {
	for _, always := range []bool{false, true} {
		store := projector.NewMemStore()
		conflicts := 0
		store.FailCommit = func(projector.Tx) error {
			if always || conflicts == 0 {
				conflicts++
				return fmt.Errorf("%w: injected: TransactionConflict", projector.ErrConflict)
			}
			return nil
		}
		proj, _ := projector.New(store, projector.Config{ConflictRetries: 3, ConflictBackoff: time.Millisecond})
		in, _, err := projector.InputOf(messageEvent(t, "44444444-4444-4444-8444-444444444444", 10), fmt.Sprintf("%021d", 1))
		if err != nil {
			t.Fatal(err)
		}
		out := proj.Project(context.Background(), []projector.Input{in})
		states, _ := store.Load(context.Background(), []string{in.Event.Subject}, true)
		switch {
		case !always && (out.Changed != 1 || len(out.Failed) != 0 || states[in.Event.Subject].Version != 1):
			t.Fatalf("one conflict: outcome %+v, stored %+v; want it committed on the retry", out, states)
		case always && (len(out.Failed) != 1 || conflicts != 3 || len(states) != 0):
			t.Fatalf("endless conflicts: outcome %+v after %d attempts; want the subject failed after 3", out, conflicts)
		}
	}
}

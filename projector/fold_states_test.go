package projector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
)

const seed002Arn = "arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123"

// TestAgentExecutionSeed002 is seed 002's acceptance example: RUNNING then
// SUCCEEDED, in either order, with a redelivery.
func TestAgentExecutionSeed002(t *testing.T) {
	evs := foldLoad(t, filepath.Join("testdata", "fold", "seed002_agent.ndjson"))
	subject := "states/execution/" + seed002Arn
	var mine []foldEvent
	for _, e := range evs {
		if e.E.Subject == subject {
			mine = append(mine, e)
		}
	}
	if len(mine) != 2 {
		t.Fatalf("fixture has %d events of %s, want 2", len(mine), subject)
	}
	running, succeeded := mine[0], mine[1]
	want := map[string]any{
		"executionArn":    seed002Arn,
		"agentName":       "my-agent",
		"startDate":       "2009-02-13T23:31:30.000Z",
		"status":          "SUCCEEDED",
		"stateMachineArn": "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod",
		"executionName":   "abc123",
		"stopDate":        "2009-02-13T23:31:40.000Z",
		"durationSeconds": 10,
		"redriveCount":    0, // the seed's events predate redrive: no redrive members mean 0
		"indexedAt":       "2009-02-13T23:31:41.456Z",
	}
	tests := []struct {
		name  string
		order []foldEvent
	}{
		{"running then succeeded", []foldEvent{running, succeeded}},
		{"succeeded then running", []foldEvent{succeeded, running}},
		{"running redelivered last", []foldEvent{running, succeeded, running}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, cs := foldOne(t, tt.order...)
			if len(items) != 1 || items[0].Table != schema.TableExecutions {
				t.Fatalf("items = %d, want one executions item", len(items))
			}
			if len(items[0].Item) != len(want) {
				t.Errorf("item has %d attributes, want %d: %v", len(items[0].Item), len(want), foldAttrs(items[0].Item))
			}
			foldWant(t, items[0].Item, want)
			if len(cs) != 0 {
				t.Errorf("contributions = %d, want none", len(cs))
			}
			foldRoundTrip(t, projector.KindAgentExecution, a)
		})
	}

	t.Run("running only", func(t *testing.T) {
		_, items, _ := foldOne(t, running)
		foldWant(t, items[0].Item, map[string]any{
			"status": "RUNNING", "startDate": "2009-02-13T23:31:30.000Z", "indexedAt": "2009-02-13T23:31:31.123Z",
			"stopDate": nil, "durationSeconds": nil, "redriveCount": 0, "redriveStatus": nil, "redriveDate": nil,
		})
	})
}

func TestAgentExecutionNotAgent(t *testing.T) {
	evs := foldLoad(t, filepath.Join("testdata", "fold", "seed002_agent.ndjson"))
	for subject, a := range foldAll(t, evs) {
		if subject == "states/execution/"+seed002Arn {
			continue
		}
		if items := a.Items(); len(items) != 0 {
			t.Errorf("%s: non-agent execution has items: %v", subject, foldAttrs(items[0].Item))
		}
		if cs := a.Contributions(); len(cs) != 0 {
			t.Errorf("%s: non-agent execution has contributions", subject)
		}
	}
}

func TestAgentExecutionTerminalStatuses(t *testing.T) {
	arn := "arn:aws:states:us-west-2:123:execution:sql-agent-prod:x1"
	ev := func(id, status, at string, stop int64) foldEvent {
		d := map[string]any{
			"executionArn": arn, "stateMachineArn": "arn:aws:states:us-west-2:123:stateMachine:sql-agent-prod",
			"name": "x1", "status": status, "startDate": 1767607200000,
			"stateMachineTags": map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent", "Team": "data"},
		}
		if stop > 0 {
			d["stopDate"] = stop
		}
		return foldEv(t, id, schema.TypeExecutionStatusChange, at, d)
	}
	run := ev("e1", "RUNNING", "2026-01-05T10:00:00Z", 0)
	failed := ev("e2", "FAILED", "2026-01-05T10:00:04.5Z", 1767607204500)
	aborted := ev("e3", "ABORTED", "2026-01-05T10:00:09Z", 1767607209000)
	for _, order := range [][]foldEvent{{run, failed}, {failed, run}, {aborted, run, failed}, {failed, aborted}} {
		_, items, _ := foldOne(t, order...)
		want := map[string]any{"status": "FAILED", "durationSeconds": 4, "agentName": "sql-agent", "stopDate": "2026-01-05T10:00:04.500Z"}
		if slices.ContainsFunc(order, func(e foldEvent) bool { return e.E.ID == "e3" }) {
			// Two terminal statuses: the later by (time, id) wins, with its own stop date.
			want = map[string]any{"status": "ABORTED", "durationSeconds": 9, "stopDate": "2026-01-05T10:00:09.000Z"}
		}
		foldWant(t, items[0].Item, want)
	}
}

// agentTags are schema.AgentTags, as the Step Functions adapter adds them.
var agentTags = map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}

// redriveArn is the execution of the redrive fixtures of
// ingest/testdata/eventbridge.
const redriveArn = "arn:aws:states:us-east-1:123456789012:execution:research-agent-prod:4f1c9b2e-77aa-4b0e-9d1c-0e5a2b3c4d5e"

// redriveLifecycle returns one execution's EventBridge events, converted
// as the ingest adapter converts them: attempt 0 RUNNING and FAILED, the
// redrive's RUNNING (redriveCount 1) and SUCCEEDED.
func redriveLifecycle(t testing.TB) (run0, failed0, run1, succeeded1 foldEvent) {
	t.Helper()
	load := func(name string) foldEvent {
		raw, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "eventbridge", name))
		if err != nil {
			t.Fatal(err)
		}
		var ev ingest.EventBridgeEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := ingest.FromEventBridge(ev, agentTags, ingest.PayloadsHash)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := schema.Validate(&e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return foldEvent{e, p}
	}
	return load("redrive_attempt0_running.json"), load("execution_failed_full.json"),
		load("redrive_attempt1_running.json"), load("redrive_attempt1_succeeded.json")
}

// TestAgentExecutionRedrive follows the redrive fixtures through prefixes
// and delivery orders: the projected execution is the latest attempt's.
func TestAgentExecutionRedrive(t *testing.T) {
	run0, failed0, run1, ok1 := redriveLifecycle(t)
	base := map[string]any{
		"executionArn": redriveArn, "agentName": "research-agent", "executionName": "4f1c9b2e-77aa-4b0e-9d1c-0e5a2b3c4d5e",
		"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:research-agent-prod",
		"startDate":       "2025-09-29T12:34:50.000Z", // the original start, whatever the attempt
	}
	with := func(m map[string]any) map[string]any {
		out := maps.Clone(base)
		maps.Copy(out, m)
		return out
	}
	running1 := with(map[string]any{"status": "RUNNING", "redriveCount": 1, "redriveStatus": "NOT_REDRIVABLE",
		"redriveDate": "2025-09-29T13:00:00.000Z", "stopDate": nil, "durationSeconds": nil})
	succeeded := with(map[string]any{"status": "SUCCEEDED", "redriveCount": 1, "redriveStatus": "NOT_REDRIVABLE",
		"redriveDate": "2025-09-29T13:00:00.000Z", "stopDate": "2025-09-29T13:02:15.000Z", "durationSeconds": 135})
	tests := []struct {
		name  string
		order []foldEvent
		want  map[string]any
	}{
		{"attempt 0 running", []foldEvent{run0},
			with(map[string]any{"status": "RUNNING", "redriveCount": 0, "redriveStatus": "NOT_REDRIVABLE", "redriveDate": nil, "stopDate": nil, "durationSeconds": nil})},
		{"attempt 0 failed: redrivable", []foldEvent{run0, failed0},
			with(map[string]any{"status": "FAILED", "redriveCount": 0, "redriveStatus": "REDRIVABLE", "redriveDate": nil,
				"stopDate": "2025-09-29T12:35:00.000Z", "durationSeconds": 10})},
		{"redriven: running again", []foldEvent{run0, failed0, run1}, running1},
		{"the redrive's RUNNING first, attempt 0 late", []foldEvent{run1, failed0, run0}, running1},
		{"late FAILED of attempt 0 after the redrive's RUNNING", []foldEvent{run0, run1, failed0}, running1},
		{"succeeded: duration of the latest attempt", []foldEvent{run0, failed0, run1, ok1}, succeeded},
		{"terminal of attempt 1 first", []foldEvent{ok1, failed0, run1, run0}, succeeded},
		{"attempt 1 only", []foldEvent{ok1}, succeeded},
		{"redelivered attempt 0 after the end", []foldEvent{run0, failed0, run1, ok1, failed0, run0}, succeeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, cs := foldOne(t, tt.order...)
			if len(items) != 1 || items[0].Table != schema.TableExecutions || len(cs) != 0 {
				t.Fatalf("items %d, contributions %d: want one executions item and no contributions", len(items), len(cs))
			}
			foldWant(t, items[0].Item, tt.want)
			checkExecutionItem(t, items[0].Item, tt.order)
			foldRoundTrip(t, projector.KindAgentExecution, a)
			foldCheckKeys(t, a)
		})
	}
}

// TestAgentExecutionRedrivePermutations is the join property on redriven
// executions: every order of their events, with a stop through JSON (as
// the projector stores state between batches) and with duplicates, gives
// the same state and item as time order, and the item that the
// independent expectation computes from the events.
func TestAgentExecutionRedrivePermutations(t *testing.T) {
	run0, failed0, run1, ok1 := redriveLifecycle(t)
	cases := map[string][]foldEvent{
		"fixtures: failed, redriven, succeeded": {run0, failed0, run1, ok1},
		// Timed out, aborted while redriven, redriven again and still
		// running: three attempts, six events, 720 orders.
		"three attempts": redriveEvents(t, "triple", []attemptSpec{
			{status: "TIMED_OUT", runFor: 300 * time.Second},
			{status: "ABORTED", after: 40 * time.Second, runFor: 12 * time.Second},
			{after: 90 * time.Second},
		}),
		// An attempt's events without redriveDate (not seen from AWS, but
		// redriveDate is optional in its API): no duration, no redriveDate.
		"redriven without redriveDate": redriveEvents(t, "nodate", []attemptSpec{
			{status: "FAILED", runFor: 5 * time.Second},
			{status: "SUCCEEDED", after: time.Minute, runFor: 7 * time.Second, noRedriveDate: true},
		}),
	}
	r := rand.New(rand.NewPCG(11, 2))
	for name, evs := range cases {
		t.Run(name, func(t *testing.T) {
			ref := foldSubjectOnce(t, foldTimeOrder(evs), false)
			refState := foldStateJSON(t, ref)
			refItems := ref.Items()
			if len(refItems) != 1 {
				t.Fatalf("reference has %d items", len(refItems))
			}
			checkExecutionItem(t, refItems[0].Item, evs)
			refOut := foldIndent(t, foldRenderAll(t, map[string]projector.Aggregate{"x": ref}))
			n := 0
			for order := range permutations(evs) {
				n++
				cut := r.IntN(len(order) + 1)
				first := projector.NewAggregate(projector.KindAgentExecution)
				for _, e := range order[:cut] {
					first.Apply(e.E, e.P)
				}
				a := projector.NewAggregate(projector.KindAgentExecution)
				if err := json.Unmarshal(foldStateJSON(t, first), a); err != nil {
					t.Fatal(err)
				}
				for _, e := range order[cut:] {
					a.Apply(e.E, e.P)
				}
				// Redeliver a random event at the end.
				dup := order[r.IntN(len(order))]
				a.Apply(dup.E, dup.P)
				if got := foldStateJSON(t, a); !bytes.Equal(got, refState) {
					t.Fatalf("order %v: state differs\n got %s\nwant %s", foldIDs(order), got, refState)
				}
				if got := foldIndent(t, foldRenderAll(t, map[string]projector.Aggregate{"x": a})); !bytes.Equal(got, refOut) {
					t.Fatalf("order %v: projections differ\n got %s\nwant %s", foldIDs(order), got, refOut)
				}
			}
			if want := factorial(len(evs)); n != want {
				t.Fatalf("%d orders tried, want %d", n, want)
			}
		})
	}
}

// TestAgentExecutionStateBeforeRedrive: a state stored by a projector that
// did not know redrive (status ranks 0 and 1, no redrive registers) resumes
// as attempt 0, and the redrive's RUNNING moves it to RUNNING.
func TestAgentExecutionStateBeforeRedrive(t *testing.T) {
	run0, failed0, run1, ok1 := redriveLifecycle(t)
	old := `{"executionArn":"` + redriveArn + `","stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:research-agent-prod",` +
		`"name":"4f1c9b2e-77aa-4b0e-9d1c-0e5a2b3c4d5e","agent":true,"startDate":1759149290000,` +
		`"status":{"r":1,"t":"2025-09-29T12:35:00Z","id":"315c1398-40ff-a850-213b-158f73e60175","v":"FAILED"},` +
		`"stopDate":{"r":1,"t":"2025-09-29T12:35:00Z","id":"315c1398-40ff-a850-213b-158f73e60175","v":1759149300000},` +
		`"indexedAt":"2025-09-29T12:35:00Z"}`
	a := projector.NewAggregate(projector.KindAgentExecution)
	if err := json.Unmarshal([]byte(old), a); err != nil {
		t.Fatal(err)
	}
	foldWant(t, a.Items()[0].Item, map[string]any{"status": "FAILED", "stopDate": "2025-09-29T12:35:00.000Z", "durationSeconds": 10, "redriveCount": 0})
	// Re-applying what the old state holds changes nothing but what the
	// old projector did not keep (redriveStatus): the same status and dates.
	a.Apply(failed0.E, failed0.P)
	a.Apply(run0.E, run0.P)
	foldWant(t, a.Items()[0].Item, map[string]any{"status": "FAILED", "redriveStatus": "REDRIVABLE", "durationSeconds": 10})
	a.Apply(run1.E, run1.P)
	foldWant(t, a.Items()[0].Item, map[string]any{"status": "RUNNING", "redriveCount": 1, "stopDate": nil, "durationSeconds": nil})
	a.Apply(ok1.E, ok1.P)
	want := foldSubjectOnce(t, []foldEvent{run0, failed0, run1, ok1}, false)
	if got, w := foldStateJSON(t, a), foldStateJSON(t, want); !bytes.Equal(got, w) {
		t.Fatalf("upgraded state differs from a fresh fold\n got %s\nwant %s", got, w)
	}
}

// attemptSpec describes one attempt of a generated execution: it starts
// after the previous attempt stopped (the first at the execution's start),
// runs for runFor and ends with status ("" for still running).
type attemptSpec struct {
	status        string
	after, runFor time.Duration
	noRedriveDate bool
}

// redriveEvents generates the EventBridge details of one agent execution
// with the given attempts: a RUNNING event per attempt, then its terminal
// event, in the shape of the fixtures.
func redriveEvents(t testing.TB, name string, attempts []attemptSpec) []foldEvent {
	t.Helper()
	arn := "arn:aws:states:us-west-2:123456789012:execution:sql-agent-prod:" + name
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	at := start
	var out []foldEvent
	for i, sp := range attempts {
		at = at.Add(sp.after)
		attemptStart := at
		d := map[string]any{
			"executionArn": arn, "stateMachineArn": "arn:aws:states:us-west-2:123456789012:stateMachine:sql-agent-prod",
			"name": name, "status": "RUNNING", "startDate": start.UnixMilli(), "stopDate": nil,
			"redriveCount": i, "redriveDate": nil, "redriveStatus": "NOT_REDRIVABLE",
			"redriveStatusReason": "Execution is RUNNING and cannot be redriven", "stateMachineTags": agentTags,
		}
		if i > 0 && !sp.noRedriveDate {
			d["redriveDate"] = attemptStart.UnixMilli()
		}
		out = append(out, foldEv(t, fmt.Sprintf("%s-%d-run", name, i), schema.TypeExecutionStatusChange, attemptStart.Format(time.RFC3339Nano), maps.Clone(d)))
		if sp.status == "" {
			continue
		}
		at = at.Add(sp.runFor)
		d["status"], d["stopDate"] = sp.status, at.UnixMilli()
		d["redriveStatus"], d["redriveStatusReason"] = "REDRIVABLE", nil
		if sp.status == schema.ExecutionSucceeded {
			d["redriveStatus"], d["redriveStatusReason"] = "NOT_REDRIVABLE", "Execution is SUCCEEDED and cannot be redriven"
		}
		out = append(out, foldEv(t, fmt.Sprintf("%s-%d-%s", name, i, strings.ToLower(sp.status)), schema.TypeExecutionStatusChange, at.Format(time.RFC3339Nano), d))
	}
	return out
}

// checkExecutionItem compares an executions item with what the events say
// directly, computed without the fold: the winning event is the greatest
// by (redriveCount, terminal, time, id), and the item is its status,
// redriveStatus and stopDate, the redriveCount and redriveDate of its
// attempt, the duration of that attempt, the least startDate and the
// latest recorded time.
func checkExecutionItem(t testing.TB, item map[string]types.AttributeValue, evs []foldEvent) {
	t.Helper()
	want := expectedExecution(t, evs)
	got := map[string]string{}
	for k, v := range item {
		switch av := v.(type) {
		case *types.AttributeValueMemberS:
			got[k] = av.Value
		case *types.AttributeValueMemberN:
			got[k] = av.Value
		default:
			t.Fatalf("%s: unexpected attribute type %T", k, v)
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("execution item differs from the events' expectation\n got %v\nwant %v", got, want)
	}
}

// expectedExecution is the independent expectation of checkExecutionItem,
// as attribute name to S or N text.
func expectedExecution(t testing.TB, evs []foldEvent) map[string]string {
	t.Helper()
	type ev struct {
		e schema.Event
		d *schema.ExecutionStatusChange
	}
	var all []ev
	for _, fe := range evs {
		e := fe.E
		p, err := schema.Validate(&e)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ev{e, p.(*schema.ExecutionStatusChange)})
	}
	terminal := func(x ev) int {
		if x.d.Status == schema.ExecutionRunning {
			return 0
		}
		return 1
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.d.RedriveCount != b.d.RedriveCount:
			return a.d.RedriveCount < b.d.RedriveCount
		case terminal(a) != terminal(b):
			return terminal(a) < terminal(b)
		case !a.e.Time.Equal(b.e.Time):
			return a.e.Time.Before(b.e.Time)
		}
		return a.e.ID < b.e.ID
	})
	win := all[len(all)-1]
	ms := func(v int64) string { return time.UnixMilli(v).UTC().Format("2006-01-02T15:04:05.000Z") }
	start, indexed := win.d.StartDate, time.Time{}
	var redriveDate *int64
	for _, x := range all {
		start = min(start, x.d.StartDate)
		rec := x.e.Time
		if x.e.RecordedAt != nil {
			rec = *x.e.RecordedAt
		}
		if rec.After(indexed) {
			indexed = rec
		}
		if x.d.RedriveCount == win.d.RedriveCount && x.d.RedriveDate != nil {
			redriveDate = x.d.RedriveDate // sorted: the last one is the highest-ranked
		}
	}
	d := win.d
	out := map[string]string{
		"executionArn": d.ExecutionArn, "agentName": schema.AgentName(d.StateMachineArn), "stateMachineArn": d.StateMachineArn,
		"executionName": d.Name, "startDate": ms(start), "status": d.Status, "redriveCount": fmt.Sprint(d.RedriveCount),
		"indexedAt": indexed.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if d.RedriveStatus != "" {
		out["redriveStatus"] = d.RedriveStatus
	}
	attemptStart := &start
	if d.RedriveCount > 0 {
		attemptStart = redriveDate
		if redriveDate != nil {
			out["redriveDate"] = ms(*redriveDate)
		}
	}
	if d.Status != schema.ExecutionRunning {
		out["stopDate"] = ms(*d.StopDate)
		if attemptStart != nil {
			out["durationSeconds"] = fmt.Sprint((*d.StopDate - *attemptStart) / 1000)
		}
	}
	return out
}

// permutations yields every order of evs (Heap's algorithm).
func permutations(evs []foldEvent) func(yield func([]foldEvent) bool) {
	return func(yield func([]foldEvent) bool) {
		a := slices.Clone(evs)
		c := make([]int, len(a))
		if !yield(slices.Clone(a)) {
			return
		}
		for i := 0; i < len(a); {
			if c[i] < i {
				if i%2 == 0 {
					a[0], a[i] = a[i], a[0]
				} else {
					a[c[i]], a[i] = a[i], a[c[i]]
				}
				if !yield(slices.Clone(a)) {
					return
				}
				c[i]++
				i = 0
			} else {
				c[i] = 0
				i++
			}
		}
	}
}

func factorial(n int) int {
	if n <= 1 {
		return 1
	}
	return n * factorial(n-1)
}

func foldIDs(evs []foldEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.E.ID
	}
	return out
}

// TestAgentExecutionRedriveThroughTheStream delivers a redriven execution's
// events out of order across attempts through the real stream on DynamoDB
// Local, one projector batch each, and reads the executions table after
// each one as `streamfold query executions` does: by key, and through seed
// 002's StatusDateIndex and AgentDateIndex. The execution is listed under
// exactly the status of its latest attempt, at its original startDate.
func TestAgentExecutionRedriveThroughTheStream(t *testing.T) {
	p := newPipeline(t)
	q, err := query.New(p.c.DynamoDB, p.n, query.Config{CursorKey: []byte("redrive-test-cursor-key")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run0, failed0, run1, ok1 := redriveLifecycle(t)
	steps := []struct {
		name   string
		ev     foldEvent
		status string
		want   map[string]any
	}{
		{"attempt 0 running", run0, "RUNNING", map[string]any{"redriveCount": 0, "redriveStatus": "NOT_REDRIVABLE"}},
		{"the redrive's RUNNING before attempt 0's FAILED", run1, "RUNNING",
			map[string]any{"redriveCount": 1, "redriveDate": "2025-09-29T13:00:00.000Z", "stopDate": nil}},
		{"attempt 0's FAILED, late", failed0, "RUNNING", map[string]any{"redriveCount": 1, "stopDate": nil, "durationSeconds": nil}},
		{"attempt 1 succeeded", ok1, "SUCCEEDED",
			map[string]any{"redriveCount": 1, "stopDate": "2025-09-29T13:02:15.000Z", "durationSeconds": 135}},
	}
	day := query.TimeRange{From: time.Date(2025, 9, 29, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 9, 29, 23, 59, 59, 0, time.UTC)}
	for i, st := range steps {
		p.append(t, []schema.Event{st.ev.E})
		if _, err := p.run(t, ctx, nil, streamrun.Config{BatchSize: 1}); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		item := schema.StripInternal(p.get(t, schema.TableExecutions, map[string]types.AttributeValue{"executionArn": &types.AttributeValueMemberS{Value: redriveArn}}))
		want := maps.Clone(st.want)
		want["status"], want["startDate"] = st.status, "2025-09-29T12:34:50.000Z"
		foldWant(t, item, want)
		var sofar []foldEvent
		for _, e := range p.stored(t) {
			pl, err := schema.Validate(&e)
			if err != nil {
				t.Fatal(err)
			}
			sofar = append(sofar, foldEvent{e, pl})
		}
		if len(sofar) != i+1 {
			t.Fatalf("%s: %d events stored, want %d", st.name, len(sofar), i+1)
		}
		checkExecutionItem(t, item, sofar)

		for _, status := range query.ExecutionStatuses {
			page, err := q.ExecutionsByStatus(ctx, status, day, query.PageRequest{})
			if err != nil {
				t.Fatal(err)
			}
			listed := len(page.Items) == 1 && page.Items[0]["executionArn"] == redriveArn
			if listed != (status == st.status) || len(page.Items) > 1 {
				t.Errorf("%s: executions --status %s lists %v, want the execution exactly under %s", st.name, status, page.Items, st.status)
			}
		}
		page, err := q.ExecutionsByAgent(ctx, "research-agent", day, query.PageRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 || page.Items[0]["status"] != st.status || page.Items[0]["startDate"] != "2025-09-29T12:34:50.000Z" {
			t.Errorf("%s: executions --agent research-agent = %v, want one %s execution at its original start", st.name, page.Items, st.status)
		}
	}
	want, counters := reference(t, p.stored(t))
	compareViews(t, want, actual(t, p.c, p.n, counters))
}

package rebuild

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// projectionTables are the tables the projector writes besides its own
// aggregate states.
var projectionTables = []string{schema.TableExecutions, schema.TableWorkflows, schema.TableWorkflowJobs,
	schema.TableWorkflowRuns, schema.TableDeployments, schema.TableMessages, schema.TableMetrics}

// workload generates n simulate events from start over 3 days.
func workload(t testing.TB, seed int64, n int, start time.Time) []schema.Event {
	t.Helper()
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: n, Days: 3, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	// Recorded now, as the appender would: projections expire 90 days
	// after their events were recorded, and a fold of history recorded
	// longer ago leaves them out (projector.Config.ExpiredBefore).
	now := time.Now().UTC()
	for i := range evs {
		evs[i].RecordedAt = &now
	}
	return evs
}

// recentStart is the latest Thursday at least three days before the test
// clock's today: projection items carry TTLs (90 days from creation) that
// DynamoDB Local enforces, so dates must be recent; and the simulator weighs
// days by weekday, so a window that always starts on the same weekday gives
// the same workload (the same items in every table) whatever day the test
// runs. A Thursday-to-Saturday window of seed 21 holds every kind of item.
func recentStart() time.Time { return testclock.WeekdayOnOrBefore(testclock.DaysAgo(3), time.Thursday) }

// shuffledWithDuplicates returns the events in a random order with every
// tenth one repeated: what an archive read in partition order, with
// redeliveries, might look like.
func shuffledWithDuplicates(evs []schema.Event, seed uint64) []schema.Event {
	out := append([]schema.Event(nil), evs...)
	for i := 0; i < len(evs); i += 10 {
		out = append(out, evs[i])
	}
	r := rand.New(rand.NewPCG(seed, seed+1))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// projectAsStream projects events through the projector in arrival order,
// batch by batch, as the stream projector does: the reference the rebuild
// must reproduce.
func projectAsStream(t testing.TB, store projector.Store, evs []schema.Event, batch int) {
	t.Helper()
	p, err := projector.New(store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < len(evs); start += batch {
		var inputs []projector.Input
		for _, e := range evs[start:min(start+batch, len(evs))] {
			in, ok, err := projector.InputOf(e, "")
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				inputs = append(inputs, in)
			}
		}
		out := p.Project(context.Background(), inputs)
		if len(out.Failed) > 0 || len(out.Poison) > 0 {
			t.Fatalf("stream projection of batch at %d: %d failed (%v), %d poisoned (%v)", start, len(out.Failed), out.Failed, len(out.Poison), out.Poison)
		}
	}
}

// view is every item of the projection tables, by table and key, in
// canonical form, normalised as described at normalise.
type view map[string]map[string]any

// normalise puts one projection item in the form two correct projections
// of the same events agree on, whatever batching built them. It ignores
// exactly two things, both only on counter rows (RowKinds):
//
//   - a numeric attribute equal to zero is dropped, because it is the same
//     as an absent one: counters are maintained with ADD, which reads an
//     absent attribute as 0, and the projector never writes a zero delta,
//     so a counter that went 0 -> 1 -> 0 across batches reads "0" where a
//     single fold never wrote it;
//   - an empty row (population counter zero) is dropped: it is what a row
//     looks like after its only contributor moved to another row (e.g. a
//     late earlier event changed an execution's creation date).
//
// It returns ok = false for a dropped row.
func normalise(table string, item map[string]types.AttributeValue) (map[string]types.AttributeValue, bool) {
	for _, k := range RowKinds() {
		if k.Table != table || !k.Matches(item) {
			continue
		}
		if k.empty(item) {
			return nil, false
		}
		out := map[string]types.AttributeValue{}
		for name, v := range item {
			if r, isNum := ratOf(v); isNum && r.Sign() == 0 {
				continue
			}
			out[name] = v
		}
		return out, true
	}
	return item, true
}

func addToView(t testing.TB, v view, table string, item map[string]types.AttributeValue) {
	t.Helper()
	it, ok := normalise(table, item)
	if !ok {
		return
	}
	id := projector.ItemID(table, item)
	if _, dup := v[id]; dup {
		t.Fatalf("item %s twice", id)
	}
	v[id] = projector.CanonicalItem(it)
}

// memView is the view of a MemStore, plus every aggregate's state (its
// version ignored: it counts commits, which depends on batching).
func memView(t testing.TB, m *projector.MemStore, subjects []string) view {
	t.Helper()
	v := view{}
	for _, table := range projectionTables {
		for _, it := range m.Items(table) {
			addToView(t, v, table, it)
		}
	}
	states, err := m.Load(context.Background(), subjects, true)
	if err != nil {
		t.Fatal(err)
	}
	for s, st := range states {
		v["aggregates|"+s] = map[string]any{"kind": string(st.Kind), "state": string(st.State)}
	}
	return v
}

func subjectsOf(evs []schema.Event) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range evs {
		if !seen[e.Subject] {
			seen[e.Subject] = true
			out = append(out, e.Subject)
		}
	}
	sort.Strings(out)
	return out
}

// diffViews fails naming up to ten differing items.
func diffViews(t testing.TB, want, got view, wantName, gotName string) {
	t.Helper()
	var diffs []string
	show := func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: only in %s: %s", id, wantName, show(w)))
		case !reflect.DeepEqual(g, w):
			diffs = append(diffs, fmt.Sprintf("%s:\n  %s: %s\n  %s: %s", id, wantName, show(w), gotName, show(g)))
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: only in %s: %s", id, gotName, show(g)))
		}
	}
	if len(diffs) == 0 {
		return
	}
	sort.Strings(diffs)
	t.Fatalf("%s and %s differ in %d items (%d vs %d items), e.g.:\n%s", wantName, gotName, len(diffs), len(want), len(got), strings.Join(diffs[:min(10, len(diffs))], "\n"))
}

// counts tallies a view's items per table.
func counts(v view) map[string]int {
	out := map[string]int{}
	for id := range v {
		table, _, _ := strings.Cut(id, "|")
		out[table]++
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name + ".golden"
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./archiver/rebuild -update)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("output differs from %s\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func bigOf(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad number " + s)
	}
	return r
}

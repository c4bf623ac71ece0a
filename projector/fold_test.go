package projector_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/golden"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// foldEvent is a validated event and its payload.
type foldEvent struct {
	E schema.Event
	P schema.Payload
}

// foldLoad reads an NDJSON file of envelopes and validates every event.
func foldLoad(t testing.TB, path string) []foldEvent {
	t.Helper()
	evs := testenv.LoadEvents(t, path)
	out := make([]foldEvent, len(evs))
	for i := range evs {
		p, err := schema.Validate(&evs[i])
		if err != nil {
			t.Fatalf("%s: event %d (%s): %v", path, i+1, evs[i].ID, err)
		}
		out[i] = foldEvent{evs[i], p}
	}
	return out
}

// foldAll folds events by subject, in the given order.
func foldAll(t testing.TB, evs []foldEvent) map[string]projector.Aggregate {
	t.Helper()
	aggs := map[string]projector.Aggregate{}
	for _, fe := range evs {
		a := aggs[fe.E.Subject]
		if a == nil {
			k, ok := projector.KindFor(fe.E.Type)
			if !ok {
				t.Fatalf("KindFor(%q) unknown", fe.E.Type)
			}
			a = projector.NewAggregate(k)
			aggs[fe.E.Subject] = a
		}
		a.Apply(fe.E, fe.P)
	}
	return aggs
}

// foldAV renders an attribute value as DynamoDB JSON ({"S": ...}), numbers
// as their exact text.
func foldAV(av types.AttributeValue) any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = foldAV(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": foldAttrs(v.Value)}
	case nil:
		return nil
	}
	return fmt.Sprintf("unknown %T", av)
}

func foldAttrs(m map[string]types.AttributeValue) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = foldAV(v)
	}
	return out
}

// foldRender is the canonical form of what a set of aggregates projects:
// items and contributions sorted, and the counter rows they sum to.
type foldRender struct {
	Items         []json.RawMessage `json:"items"`
	Contributions []json.RawMessage `json:"contributions"`
	Rows          []json.RawMessage `json:"rows"`
}

func foldMarshal(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func foldItemJSON(t testing.TB, items []projector.Item) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		out = append(out, foldMarshal(t, map[string]any{"table": it.Table, "item": foldAttrs(it.Item)}))
	}
	return out
}

func foldContribJSON(t testing.TB, cs []projector.Contribution) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, 0, len(cs))
	for _, c := range cs {
		out = append(out, foldMarshal(t, map[string]any{
			"table": c.Table, "key": foldAttrs(c.Key), "attrs": foldAttrs(c.Attrs), "counters": c.Counters, "scale": c.Scale,
		}))
	}
	return out
}

func foldSorted(rs []json.RawMessage) []json.RawMessage {
	sort.Slice(rs, func(i, j int) bool { return bytes.Compare(rs[i], rs[j]) < 0 })
	return rs
}

// foldRows sums contributions per counter row.
func foldRows(cs []projector.Contribution) []projector.Contribution {
	rows := map[string]*projector.Contribution{}
	for _, c := range cs {
		r := rows[c.RowID()]
		if r == nil {
			r = &projector.Contribution{Table: c.Table, Key: c.Key, Attrs: map[string]types.AttributeValue{}, Counters: map[string]int64{}, Scale: c.Scale}
			rows[c.RowID()] = r
		}
		for k, v := range c.Attrs {
			r.Attrs[k] = v
		}
		for k, v := range c.Counters {
			r.Counters[k] += v
		}
	}
	out := make([]projector.Contribution, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	return out
}

func foldRenderAll(t testing.TB, aggs map[string]projector.Aggregate) foldRender {
	t.Helper()
	var items []projector.Item
	var cs []projector.Contribution
	for _, a := range aggs {
		items = append(items, a.Items()...)
		cs = append(cs, a.Contributions()...)
	}
	return foldRender{
		Items:         foldSorted(foldItemJSON(t, items)),
		Contributions: foldSorted(foldContribJSON(t, cs)),
		Rows:          foldSorted(foldContribJSON(t, foldRows(cs))),
	}
}

func foldIndent(t testing.TB, r foldRender) []byte {
	t.Helper()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// foldShuffled returns the events in a random order, each one to three times.
func foldShuffled(r *rand.Rand, evs []foldEvent) []foldEvent {
	var out []foldEvent
	for _, e := range evs {
		for range 1 + r.IntN(3) {
			out = append(out, e)
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// foldTimeOrder sorts events by (time, id).
func foldTimeOrder(evs []foldEvent) []foldEvent {
	out := slices.Clone(evs)
	slices.SortStableFunc(out, func(a, b foldEvent) int {
		if c := a.E.Time.Compare(b.E.Time); c != 0 {
			return c
		}
		return strings.Compare(a.E.ID, b.E.ID)
	})
	return out
}

// foldCases are the fixtures under testdata/fold: <name>.ndjson folds to
// <name>.golden.json.
var foldCases = []string{
	"seed001_albums",
	"seed002_agent",
	"seed003_jobs",
	"seed004_messages",
}

// TestFoldGolden folds each fixture in file order, compares with its golden
// file (go test -run TestFoldGolden -update rewrites them), and checks that
// the reverse order and shuffles with duplicates give the same output.
func TestFoldGolden(t *testing.T) {
	for _, name := range foldCases {
		t.Run(name, func(t *testing.T) {
			evs := foldLoad(t, filepath.Join("testdata", "fold", name+".ndjson"))
			got := foldIndent(t, foldRenderAll(t, foldAll(t, evs)))
			golden.Check(t, filepath.Join("testdata", "fold", name+".golden.json"), got)
			rev := slices.Clone(evs)
			slices.Reverse(rev)
			if g := foldIndent(t, foldRenderAll(t, foldAll(t, rev))); !bytes.Equal(g, got) {
				t.Fatalf("reverse order differs:\n%s", g)
			}
			for subject, a := range foldAll(t, evs) {
				k, _ := projector.KindFor(foldTypeOf(evs, subject))
				foldRoundTrip(t, k, a)
				foldCheckKeys(t, a)
			}
			r := rand.New(rand.NewPCG(1, 2))
			for i := range 20 {
				if g := foldIndent(t, foldRenderAll(t, foldAll(t, foldShuffled(r, evs)))); !bytes.Equal(g, got) {
					t.Fatalf("shuffle %d differs:\n%s", i, g)
				}
			}
		})
	}
}

// foldTypeOf returns the type of the first event of a subject.
func foldTypeOf(evs []foldEvent, subject string) string {
	for _, e := range evs {
		if e.E.Subject == subject {
			return e.E.Type
		}
	}
	return ""
}

// foldEv builds and validates one event; data is marshalled to JSON.
func foldEv(t testing.TB, id, typ, at string, data any) foldEvent {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		t.Fatal(err)
	}
	e := schema.Event{ID: id, Source: "test", Type: typ, Time: tm, Data: raw}
	p, err := schema.Validate(&e)
	if err != nil {
		t.Fatalf("event %s: %v", id, err)
	}
	return foldEvent{e, p}
}

// foldOne folds events (all of one subject) in order and returns the
// aggregate with its items and contributions.
func foldOne(t testing.TB, evs ...foldEvent) (projector.Aggregate, []projector.Item, []projector.Contribution) {
	t.Helper()
	a := foldSubjectOnce(t, evs, false)
	return a, a.Items(), a.Contributions()
}

// foldWant checks item attributes: strings are S, ints N, bools BOOL, nil
// means absent.
func foldWant(t testing.TB, item map[string]types.AttributeValue, want map[string]any) {
	t.Helper()
	for k, w := range want {
		got, ok := item[k]
		if w == nil {
			if ok {
				t.Errorf("%s = %v, want absent", k, foldAV(got))
			}
			continue
		}
		if !ok {
			t.Errorf("%s is absent, want %v", k, w)
			continue
		}
		var exp types.AttributeValue
		switch v := w.(type) {
		case string:
			exp = &types.AttributeValueMemberS{Value: v}
		case int:
			exp = &types.AttributeValueMemberN{Value: fmt.Sprint(v)}
		case bool:
			exp = &types.AttributeValueMemberBOOL{Value: v}
		case types.AttributeValue:
			exp = v
		default:
			t.Fatalf("foldWant: unsupported %T", w)
		}
		if g, e := foldMarshal(t, foldAV(got)), foldMarshal(t, foldAV(exp)); !bytes.Equal(g, e) {
			t.Errorf("%s = %s, want %s", k, g, e)
		}
	}
}

// foldStateJSON marshals an aggregate's state.
func foldStateJSON(t testing.TB, a projector.Aggregate) []byte {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// foldRoundTrip checks that the state survives JSON exactly: marshal,
// unmarshal into NewAggregate(k), marshal again, and the same Items and
// Contributions.
func foldRoundTrip(t testing.TB, k projector.AggregateKind, a projector.Aggregate) {
	t.Helper()
	b1 := foldStateJSON(t, a)
	back := projector.NewAggregate(k)
	if err := json.Unmarshal(b1, back); err != nil {
		t.Fatalf("unmarshal %s state: %v\n%s", k, err, b1)
	}
	if b2 := foldStateJSON(t, back); !bytes.Equal(b1, b2) {
		t.Fatalf("%s state does not round-trip:\n%s\n%s", k, b1, b2)
	}
	r1 := foldIndent(t, foldRenderAll(t, map[string]projector.Aggregate{"a": a}))
	r2 := foldIndent(t, foldRenderAll(t, map[string]projector.Aggregate{"a": back}))
	if !bytes.Equal(r1, r2) {
		t.Fatalf("%s projections differ after a round trip:\n%s\n%s", k, r1, r2)
	}
}

// foldCheckKeys checks items and contributions against the table specs:
// key attributes present with their types, GSI key attributes never empty
// or of the wrong type.
func foldCheckKeys(t testing.TB, a projector.Aggregate) {
	t.Helper()
	check := func(table string, attrs map[string]types.AttributeValue, full bool) {
		spec, ok := schema.TableSpec(table)
		if !ok {
			t.Fatalf("unknown table %q", table)
		}
		keys := []schema.KeyAttr{spec.Hash}
		if spec.Range != nil {
			keys = append(keys, *spec.Range)
		}
		typeOK := func(k schema.KeyAttr, v types.AttributeValue) bool {
			switch av := v.(type) {
			case *types.AttributeValueMemberS:
				return k.Type == schema.String && av.Value != ""
			case *types.AttributeValueMemberN:
				return k.Type == schema.Number && av.Value != ""
			}
			return false
		}
		for _, k := range keys {
			v, ok := attrs[k.Name]
			if !ok || !typeOK(k, v) {
				t.Fatalf("%s: key attribute %s missing or mistyped: %v", table, k.Name, foldAttrs(attrs))
			}
		}
		if !full {
			return
		}
		for _, ix := range spec.Indexes {
			for _, k := range append(slices.Clone(ix.Hash), ix.Range...) {
				if v, ok := attrs[k.Name]; ok && !typeOK(k, v) {
					t.Fatalf("%s: %s key attribute %s is empty or mistyped: %v", table, ix.Name, k.Name, foldAV(v))
				}
			}
		}
		if spec.TTLAttribute != "" {
			if v, ok := attrs[spec.TTLAttribute]; ok {
				if _, isN := v.(*types.AttributeValueMemberN); !isN {
					t.Fatalf("%s: ttl is not a number", table)
				}
			}
		}
	}
	for _, it := range a.Items() {
		check(it.Table, it.Item, true)
	}
	for _, c := range a.Contributions() {
		check(c.Table, c.Key, false)
		for k := range c.Scale {
			if _, ok := c.Counters[k]; !ok {
				t.Fatalf("scale for unknown counter %s", k)
			}
		}
	}
}

// foldWorkload generates a simulate workload and returns its distinct
// events, validated, with a recordedat each (the writer's clock: a little
// after the event's time), grouped by subject.
func foldWorkload(t testing.TB, seed int64, n int) (map[string][]foldEvent, []string) {
	t.Helper()
	// Subject order: the fold tests shuffle each aggregate's own history,
	// so they want whole lifecycles (about 4 events per subject), not the
	// default stream slice that cuts them (about 2).
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: n, Order: simulate.OrderSubject})
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string][]foldEvent{}
	seen := map[string]bool{}
	for i, e := range evs {
		p, err := schema.Validate(&e)
		if err != nil {
			t.Fatalf("simulate event %d: %v", i, err)
		}
		if key := e.Subject + "\x00" + e.ID; seen[key] {
			continue // a redelivery: the appender keeps the first
		} else {
			seen[key] = true
		}
		rec := e.Time.Add(time.Duration(50+i%950) * time.Millisecond)
		e.RecordedAt = &rec
		bySubject[e.Subject] = append(bySubject[e.Subject], foldEvent{e, p})
	}
	subjects := make([]string, 0, len(bySubject))
	for s := range bySubject {
		subjects = append(subjects, s)
	}
	sort.Strings(subjects)
	return bySubject, subjects
}

// foldSubjectOnce folds one subject's events into a fresh aggregate.
func foldSubjectOnce(t testing.TB, evs []foldEvent, stripPayload bool) projector.Aggregate {
	t.Helper()
	k, _ := projector.KindFor(evs[0].E.Type)
	a := projector.NewAggregate(k)
	for _, e := range evs {
		p := e.P
		if stripPayload {
			p = nil
		}
		a.Apply(e.E, p)
	}
	return a
}

// TestFoldOrderIndependence is the join property on generated workloads:
// for every subject, any shuffled order with random duplicates, with or
// without a stop through JSON half-way (as the projector stores and reloads
// state), gives byte-identical state JSON, Items and Contributions to
// folding the events once in time order.
func TestFoldOrderIndependence(t *testing.T) {
	for _, seed := range []int64{1, 7, 42, 2026} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			bySubject, subjects := foldWorkload(t, seed, 3000)
			r := rand.New(rand.NewPCG(uint64(seed), 99))
			kinds := map[projector.AggregateKind]int{}
			for _, subject := range subjects {
				evs := bySubject[subject]
				k, ok := projector.KindFor(evs[0].E.Type)
				if !ok {
					t.Fatalf("%s: no kind for %s", subject, evs[0].E.Type)
				}
				kinds[k]++
				ref := foldSubjectOnce(t, foldTimeOrder(evs), false)
				refState := foldStateJSON(t, ref)
				refOut := foldIndent(t, foldRenderAll(t, map[string]projector.Aggregate{subject: ref}))
				foldRoundTrip(t, k, ref)
				foldCheckKeys(t, ref)
				for round := range 4 {
					order := foldShuffled(r, evs)
					var a projector.Aggregate
					if round%2 == 1 {
						// Fold a prefix, store, reload, fold the rest.
						cut := r.IntN(len(order) + 1)
						first := projector.NewAggregate(k)
						for _, e := range order[:cut] {
							first.Apply(e.E, e.P)
						}
						a = projector.NewAggregate(k)
						if err := json.Unmarshal(foldStateJSON(t, first), a); err != nil {
							t.Fatal(err)
						}
						for _, e := range order[cut:] {
							a.Apply(e.E, e.P)
						}
					} else {
						a = foldSubjectOnce(t, order, round == 2)
					}
					if got := foldStateJSON(t, a); !bytes.Equal(got, refState) {
						t.Fatalf("%s round %d: state differs\n got %s\nwant %s", subject, round, got, refState)
					}
					if got := foldIndent(t, foldRenderAll(t, map[string]projector.Aggregate{subject: a})); !bytes.Equal(got, refOut) {
						t.Fatalf("%s round %d: projections differ\n got %s\nwant %s", subject, round, got, refOut)
					}
				}
			}
			for _, k := range []projector.AggregateKind{projector.KindAgentExecution, projector.KindAlbumExecution, projector.KindTask, projector.KindJob, projector.KindDeployment, projector.KindMessage} {
				if kinds[k] == 0 {
					t.Errorf("workload has no %s aggregate", k)
				}
			}
		})
	}
}

// TestFoldIdempotentOnStoredState: re-applying every event to a reloaded
// state leaves its JSON byte-identical, which is how the projector detects a
// duplicate and writes nothing.
func TestFoldIdempotentOnStoredState(t *testing.T) {
	bySubject, subjects := foldWorkload(t, 5, 2000)
	for _, subject := range subjects {
		evs := bySubject[subject]
		k, _ := projector.KindFor(evs[0].E.Type)
		a := foldSubjectOnce(t, evs, false)
		stored := foldStateJSON(t, a)
		for _, e := range evs {
			b := projector.NewAggregate(k)
			if err := json.Unmarshal(stored, b); err != nil {
				t.Fatal(err)
			}
			b.Apply(e.E, e.P)
			if got := foldStateJSON(t, b); !bytes.Equal(got, stored) {
				t.Fatalf("%s: re-applying %s (%s) changed the state\n got %s\nwant %s", subject, e.E.ID, e.E.Type, got, stored)
			}
		}
	}
}

func TestKindFor(t *testing.T) {
	for _, typ := range schema.Types() {
		k, ok := projector.KindFor(typ)
		if !ok {
			t.Errorf("KindFor(%q) is unknown", typ)
			continue
		}
		if projector.NewAggregate(k) == nil {
			t.Errorf("NewAggregate(%q) = nil", k)
		}
	}
	if _, ok := projector.KindFor("no.such.type"); ok {
		t.Error("KindFor(no.such.type) is known")
	}
	if projector.NewAggregate("nope") != nil {
		t.Error("NewAggregate(nope) is not nil")
	}
	tests := map[string]projector.AggregateKind{
		schema.TypeExecutionStatusChange: projector.KindAgentExecution,
		schema.TypeAlbumPriced:           projector.KindAlbumExecution,
		schema.TypeAlbumExecutionWaiting: projector.KindAlbumExecution,
		schema.TypeTaskExpired:           projector.KindTask,
		schema.TypeJobWaiting:            projector.KindJob,
		schema.TypeRunnerTerminated:      projector.KindJob,
		schema.TypeDeploymentRejected:    projector.KindDeployment,
		schema.TypeMessageFailed:         projector.KindMessage,
	}
	for typ, want := range tests {
		if got, _ := projector.KindFor(typ); got != want {
			t.Errorf("KindFor(%q) = %q, want %q", typ, got, want)
		}
	}
}

func TestLWWAndPrecedence(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	st := func(sec int, id string) projector.Stamp {
		return projector.Stamp{Time: t0.Add(time.Duration(sec) * time.Second), ID: id}
	}
	tests := []struct {
		name   string
		writes []struct {
			s projector.Stamp
			v string
		}
		want string
	}{
		{"later time wins", []struct {
			s projector.Stamp
			v string
		}{{st(2, "a"), "late"}, {st(1, "z"), "early"}}, "late"},
		{"same time: greater id wins", []struct {
			s projector.Stamp
			v string
		}{{st(1, "b"), "b"}, {st(1, "a"), "a"}}, "b"},
		{"higher rank wins over later time", []struct {
			s projector.Stamp
			v string
		}{{st(1, "a").Ranked(2), "ranked"}, {st(9, "z"), "later"}}, "ranked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, order := range [][]int{{0, 1}, {1, 0}, {0, 1, 0, 1}} {
				var r projector.LWW[string]
				for _, i := range order {
					r.Set(tt.writes[i].s, tt.writes[i].v)
				}
				if r.V != tt.want {
					t.Fatalf("order %v: %q, want %q", order, r.V, tt.want)
				}
			}
		})
	}

	p := projector.Precedence{"queued": 0, "in_progress": 1, "completed": 2}
	var r projector.LWW[string]
	p.Offer(&r, "in_progress", st(5, "b"))
	p.Offer(&r, "queued", st(9, "c")) // late queued does not move it back
	if r.V != "in_progress" {
		t.Fatalf("status = %q, want in_progress", r.V)
	}
	if _, ok := p.Offer(&r, "bogus", st(10, "d")); ok || r.V != "in_progress" {
		t.Fatalf("unknown status was accepted: %q", r.V)
	}
	p.Offer(&r, "completed", st(7, "a"))
	if r.V != "completed" {
		t.Fatalf("status = %q, want completed", r.V)
	}
	var zero projector.LWW[string]
	if zero.Known() || !zero.IsZero() {
		t.Fatal("zero register is known")
	}
	if b, _ := json.Marshal(struct {
		R projector.LWW[string] `json:"r,omitzero"`
	}{}); string(b) != "{}" {
		t.Fatalf("unset register marshals as %s", b)
	}
}

// BenchmarkFold folds a 3000-event simulate workload into fresh aggregates
// and derives every aggregate's Items and Contributions; it reports events/s.
func BenchmarkFold(b *testing.B) {
	evs, _, err := simulate.Generate(simulate.Config{Seed: 42, Events: 3000})
	if err != nil {
		b.Fatal(err)
	}
	in := make([]foldEvent, 0, len(evs))
	kinds := make([]projector.AggregateKind, 0, len(evs))
	for _, e := range evs {
		p, err := schema.Validate(&e)
		if err != nil {
			b.Fatal(err)
		}
		in = append(in, foldEvent{e, p})
		k, _ := projector.KindFor(e.Type)
		kinds = append(kinds, k)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		aggs := make(map[string]projector.Aggregate, 1024)
		for i, fe := range in {
			a := aggs[fe.E.Subject]
			if a == nil {
				a = projector.NewAggregate(kinds[i])
				aggs[fe.E.Subject] = a
			}
			a.Apply(fe.E, fe.P)
		}
		n := 0
		for _, a := range aggs {
			n += len(a.Items()) + len(a.Contributions())
		}
		if n == 0 {
			b.Fatal("no output")
		}
	}
	b.ReportMetric(float64(len(in))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func TestRowDeltasKeepAttributeOnlyRows(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "run"}, "sk": &types.AttributeValueMemberS{Value: "1"}}
	name := map[string]types.AttributeValue{"workflow_name": &types.AttributeValueMemberS{Value: "ci"}}
	applied := []projector.Contribution{{Table: schema.TableWorkflowRuns, Key: key, Counters: map[string]int64{"total_jobs": 1}}}
	prev := []projector.Contribution{{Table: schema.TableWorkflowRuns, Key: key, Counters: map[string]int64{"total_jobs": 1}}}
	// The job already counted learns its workflow name: no counter moves,
	// the row is still written for the attribute.
	next := []projector.Contribution{{Table: schema.TableWorkflowRuns, Key: key, Attrs: name, Counters: map[string]int64{"total_jobs": 1}}}
	got := projector.RowDeltasForTest(applied, prev, next)
	if len(got) != 1 || got[0].Attrs["workflow_name"] == nil || got[0].Counters["total_jobs"] != 0 {
		t.Fatalf("deltas = %+v, want the attribute-only row", got)
	}
	// Nothing learned, nothing moved: no row.
	if got := projector.RowDeltasForTest(applied, next, next); len(got) != 0 {
		t.Fatalf("deltas = %+v, want none", got)
	}
	// What was applied, not what the old state contributes now, is
	// subtracted (a deploy changed the rule: it counted 2 then).
	applied[0].Counters["total_jobs"] = 2
	if got := projector.RowDeltasForTest(applied, prev, prev); len(got) != 1 || got[0].Counters["total_jobs"] != -1 {
		t.Fatalf("deltas = %+v, want total_jobs -1", got)
	}
}

// TestRowAttributesJoinByStamp: a row's static attribute is the value with
// the greatest stamp among its contributors, whatever order they are
// merged and written in, and a contributor that does not know it never
// removes it.
func TestRowAttributesJoinByStamp(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "run"}, "sk": &types.AttributeValueMemberS{Value: "v"}}
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	contrib := func(name string, at time.Duration, id string) projector.Contribution {
		c := projector.Contribution{Table: schema.TableWorkflowRuns, Key: key, Counters: map[string]int64{"total_jobs": 1}}
		if name != "" {
			c.Attrs = map[string]types.AttributeValue{"workflow_name": &types.AttributeValueMemberS{Value: name}}
			c.Stamps = map[string]projector.Stamp{"workflow_name": {Time: t0.Add(at), ID: id}}
		}
		return c
	}
	cs := []projector.Contribution{contrib("old", 0, "a"), contrib("", 0, ""), contrib("new", time.Minute, "b"), contrib("mid", 30*time.Second, "c")}
	perms := [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}}
	for _, perm := range perms {
		// One row write per contribution, in this order...
		var row map[string]types.AttributeValue
		for _, i := range perm {
			var err error
			if row, err = projector.NextRowForTest(schema.TableWorkflowRuns, row, cs[i]); err != nil {
				t.Fatal(err)
			}
		}
		// ...and all merged into one write.
		var acc projector.Contribution
		for _, i := range perm {
			projector.MergeRowDeltaForTest(&acc, cs[i])
		}
		one, err := projector.NextRowForTest(schema.TableWorkflowRuns, nil, acc)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []map[string]types.AttributeValue{row, one} {
			if v := r["workflow_name"].(*types.AttributeValueMemberS).Value; v != "new" {
				t.Fatalf("order %v: workflow_name = %s, want new", perm, v)
			}
			if v := r["total_jobs"].(*types.AttributeValueMemberN).Value; v != "4" {
				t.Fatalf("order %v: total_jobs = %s, want 4", perm, v)
			}
		}
	}
}

package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
)

// checkStateLikeJSON fails unless marshalState writes json.Marshal's bytes
// (or fails as it does).
func checkStateLikeJSON(t *testing.T, what string, agg Aggregate) {
	t.Helper()
	want, wantErr := json.Marshal(agg)
	got, err := marshalState(agg)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: marshalState error %v, json.Marshal error %v", what, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: marshalState\n got %s\nwant %s", what, got, want)
	}
}

func TestMarshalStateLikeJSON(t *testing.T) {
	// Every state of a simulate workload after each of its events.
	evs, _, err := simulate.Generate(simulate.Config{Seed: 5, Events: 3000, Days: 2, Start: testclock.RecentMonday(2)})
	if err != nil {
		t.Fatal(err)
	}
	aggs := map[string]Aggregate{}
	appenders := 0
	for _, e := range evs {
		in, ok, err := InputOf(e, "1")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		agg := aggs[in.Event.Subject]
		if agg == nil {
			agg = NewAggregate(in.Kind)
			aggs[in.Event.Subject] = agg
		}
		agg.Apply(in.Event, in.Payload)
		if _, ok := agg.(jsonAppender); ok {
			appenders++
		}
		checkStateLikeJSON(t, in.Event.Subject, agg)
	}
	if appenders == 0 {
		t.Fatal("the workload has no state with its own JSON writer")
	}
}

func TestMarshalJobStateEdges(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC)
	st := Stamp{Rank: 3, Time: at, ID: "e<1>"}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		job  JobState
	}{
		{"empty", JobState{}},
		{"escaped strings", JobState{JobName: LWW[string]{st, "build \"x\" <&> \u2028 é \x01\t"}, HTMLURL: LWW[string]{st, "\xff"}}},
		{"known nil and empty labels", JobState{Labels: LWW[[]string]{Stamp: st}, OrgName: LWW[string]{Stamp: st}}},
		{"empty labels", JobState{Labels: LWW[[]string]{st, []string{}}}},
		{"other runs", JobState{OtherRunIDs: []int64{1, -2}, OtherRunAttempts: []int64{}}},
		{"non-UTC times", JobState{CreatedAt: at.In(time.FixedZone("x", -5*3600-30*60)), CompletedAt: LWW[time.Time]{Stamp{Time: at.In(time.FixedZone("y", 3600))}, at}}},
		{"zero-time register", JobState{Status: LWW[string]{Stamp{Rank: 1}, "queued"}}},
		{"year 10000", JobState{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"negative year", JobState{Conclusion: LWW[string]{Stamp{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}, "x"}}},
		{"zone of 24 hours", JobState{FirstAt: at.In(time.FixedZone("z", 24*3600))}},
		{"usage", JobState{WasInterrupted: true, Usage: map[string]LWW[RunnerUsage]{
			"i-2": {st, RunnerUsage{Seconds: f(12.5), Dollars: f(1e-7)}},
			"i-1": {Stamp{Time: at}, RunnerUsage{Seconds: f(math.Copysign(0, -1)), Dollars: f(1e21)}},
			"<&>": {Stamp{Time: at}, RunnerUsage{}},
			"i-3": {Stamp{Time: at}, RunnerUsage{Dollars: f(123456789.125)}},
		}}},
		{"NaN usage", JobState{Usage: map[string]LWW[RunnerUsage]{"i": {Stamp{Time: at}, RunnerUsage{Seconds: f(math.NaN())}}}}},
		{"infinite usage", JobState{Usage: map[string]LWW[RunnerUsage]{"i": {Stamp{Time: at}, RunnerUsage{Dollars: f(math.Inf(-1))}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkStateLikeJSON(t, tc.name, &tc.job)
		})
	}
}

// fillState is fillRandom with times (zero, UTC, in another zone, out of
// JSON's range) and maps.
func fillState(r *rand.Rand, v reflect.Value) { fillWith(r, v, fillStateValue) }

// fillStateValue fills the values of states that fillRandom does not know
// or fills differently: times (zero, UTC, zoned, past RFC 3339), raw JSON
// (spaced, escaped, invalid) and floats (NaN included).
func fillStateValue(r *rand.Rand, v reflect.Value) bool {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		ts := []time.Time{{}, time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), time.Unix(1.7e9, 0).In(time.FixedZone("", -3600*7)), time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC)}
		v.Set(reflect.ValueOf(ts[r.IntN(len(ts))]))
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		raws := []string{"", `{"a":1}`, `{"a": 1}`, `"<b>"`, `[1,"\u2028"]`, "\"\u2028\"", `{"x":`, `null`, `"\u003c"`, `{"k":[true,false,null,1.5e3]}`}
		if s := raws[r.IntN(len(raws))]; s != "" {
			v.SetBytes([]byte(s))
		} else if r.IntN(2) == 0 {
			v.SetZero()
		}
	case v.Kind() == reflect.Float64:
		v.SetFloat([]float64{0, 1.5, 1e-7, 1e21, 0.000001, 99999999999999999999, math.NaN()}[r.IntN(7)])
	default:
		return false
	}
	return true
}

// appenderStates are the states with their own JSON writer.
var appenderStates = []func() Aggregate{
	func() Aggregate { return &JobState{} },
	func() Aggregate { return &AgentExecutionState{} },
	func() Aggregate { return &MessageState{} },
}

func FuzzMarshalState(f *testing.F) {
	f.Add(uint8(0), []byte("seed"))
	f.Add(uint8(1), []byte{1, 2, 3})
	f.Add(uint8(2), []byte{4})
	f.Fuzz(func(t *testing.T, kind uint8, seed []byte) {
		h := fnv.New64a()
		h.Write(seed)
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], h.Sum64())
		agg := appenderStates[int(kind)%len(appenderStates)]()
		fillState(rand.New(rand.NewChaCha8(key)), reflect.ValueOf(agg).Elem())
		checkStateLikeJSON(t, "random state", agg)
	})
}

func TestMarshalStateRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, newState := range appenderStates {
		if _, ok := newState().(jsonAppender); !ok {
			t.Fatalf("%T has no JSON writer", newState())
		}
		for range 2000 {
			agg := newState()
			fillState(r, reflect.ValueOf(agg).Elem())
			checkStateLikeJSON(t, "random state", agg)
		}
	}
}

func TestMarshalEnvelopeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	state := json.RawMessage(`{"x":1}`)
	for range 2000 {
		var env struct {
			Rows  []appliedRow
			Items map[string]int64
		}
		fillState(r, reflect.ValueOf(&env).Elem())
		want, wantErr := json.Marshal(envelope{State: state, Applied: env.Rows, Items: env.Items})
		got, err := marshalEnvelope(state, env.Rows, env.Items)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalEnvelope:\n got %s (%v)\nwant %s (%v)", got, err, want, wantErr)
		}
	}
}

func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x01\b\f\n\r\t\x1f\x7f", "<a href=\"x\">&amp;</a>", "é", "\u2028\u2029", "\xff\xfe", "a\xc3", "日本語", "\U0001F600", "\xed\xa0\x80", "workflows\x00x\x00metadata"} {
		checkJSONString(t, s)
	}
}

func checkJSONString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var w jsonWriter
	w.string(s)
	if !bytes.Equal(w.b, want) || !w.ok() {
		t.Fatalf("string(%q) = %s, json.Marshal %s", s, w.b, want)
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add("a<b>\x00\u2028\xff")
	f.Fuzz(checkJSONString)
}

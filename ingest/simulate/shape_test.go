package simulate_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
)

func ev(subject, typ, data string) schema.Event {
	return schema.Event{Subject: subject, Type: typ, Data: json.RawMessage(data)}
}

func TestMeasureShape(t *testing.T) {
	evs := []schema.Event{
		ev("a", "x", `{}`), ev("a", "x", `{"k":1}`), ev("b", "y", `[1,2,3,4]`), // batch 1: a, b
		ev("c", "x", `{}`), ev("a", "x", `{}`), ev("c", "x", `{}`), // batch 2: c, a
		ev("c", "y", `[]`), ev("d", "y", `[]`), // partial batch: left out
	}
	tests := []struct {
		name   string
		events []schema.Event
		window int
		want   simulate.Shape
	}{
		{"batches of 3", evs, 3, simulate.Shape{
			Events: 8, Subjects: 4, SameSubjectPairs: 2, SameSubjectShare: 2.0 / 7, Window: 3, Windows: 2,
			DistinctPerWindow: 2, MinDistinctPerWindow: 2,
			PayloadBytes: map[string]int{"x": (2 + 7 + 2 + 2 + 2) / 5, "y": (9 + 2 + 2) / 3}, PayloadBytesPerEvent: (2 + 7 + 9 + 2 + 2 + 2 + 2 + 2) / 8,
		}},
		{"one partial batch", evs[:2], 100, simulate.Shape{
			Events: 2, Subjects: 1, SameSubjectPairs: 1, SameSubjectShare: 1, Window: 100, Windows: 1,
			DistinctPerWindow: 1, MinDistinctPerWindow: 1, PayloadBytes: map[string]int{"x": 4}, PayloadBytesPerEvent: 4,
		}},
		{"default window", evs[:1], 0, simulate.Shape{
			Events: 1, Subjects: 1, Window: 100, Windows: 1, DistinctPerWindow: 1, MinDistinctPerWindow: 1,
			PayloadBytes: map[string]int{"x": 2}, PayloadBytesPerEvent: 2,
		}},
		{"no events", nil, 10, simulate.Shape{Window: 10, PayloadBytes: map[string]int{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := simulate.MeasureShape(tt.events, tt.window)
			if math.Abs(got.SameSubjectShare-tt.want.SameSubjectShare) < 1e-12 {
				got.SameSubjectShare = tt.want.SameSubjectShare
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Fatalf("MeasureShape() =\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// TestShapeMeter checks that measuring as the events come gives the same
// shape as measuring them all, at any point.
func TestShapeMeter(t *testing.T) {
	evs, _ := generate(t, simulate.Config{Seed: 4, Events: 1234})
	m := simulate.NewShapeMeter(50)
	for i := range evs {
		m.Add(&evs[i])
		if i == 599 || i == len(evs)-1 {
			got, _ := json.Marshal(m.Shape())
			want, _ := json.Marshal(simulate.MeasureShape(evs[:i+1], 50))
			if string(got) != string(want) {
				t.Fatalf("after %d events: meter %s, MeasureShape %s", i+1, got, want)
			}
		}
	}
}

func ExampleMeasureShape() {
	evs, _, err := simulate.Generate(simulate.Config{Seed: 1, Events: 5000})
	if err != nil {
		panic(err)
	}
	s := simulate.MeasureShape(evs, 100)
	fmt.Printf("consecutive events sharing a subject: %d (%.1f%%)\n", s.SameSubjectPairs, 100*s.SameSubjectShare)
	fmt.Printf("distinct subjects per batch of %d: %.1f (at least %d)\n", s.Window, s.DistinctPerWindow, s.MinDistinctPerWindow)
	fmt.Printf("bytes per completed webhook: %d\n", s.PayloadBytes[schema.TypeJobCompleted])
	// Output:
	// consecutive events sharing a subject: 101 (2.0%)
	// distinct subjects per batch of 100: 82.8 (at least 73)
	// bytes per completed webhook: 2154
}

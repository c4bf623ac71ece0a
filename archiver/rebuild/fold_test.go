package rebuild

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// nonAgentCount counts the Step Functions events of non-agent state
// machines independently of inputOf.
func nonAgentCount(t *testing.T, evs []schema.Event) int {
	t.Helper()
	n := 0
	for _, e := range evs {
		if e.Type != schema.TypeExecutionStatusChange {
			continue
		}
		p, err := schema.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		if !p.(*schema.ExecutionStatusChange).IsAgent() {
			n++
		}
	}
	return n
}

// TestRebuildEqualsStreamProjection rebuilds a MemStore from the archive
// (shuffled, with duplicates) and compares every projection item and
// aggregate state with the same events projected batch by batch in arrival
// order; a second rebuild changes nothing.
func TestRebuildEqualsStreamProjection(t *testing.T) {
	evs := workload(t, 7, 3000, recentStart())
	ref := projector.NewMemStore()
	projectAsStream(t, ref, evs, 100)
	want := memView(t, ref, subjectsOf(evs))
	src := Events(shuffledWithDuplicates(evs, 1))
	wantNonAgent := nonAgentCount(t, src)
	if wantNonAgent == 0 {
		t.Fatal("workload has no non-agent execution events; the test needs some")
	}
	tests := []struct {
		name string
		opts Options
	}{
		{"defaults", Options{}},
		{"one subject per chunk, one worker", Options{ChunkEvents: 1, Workers: 1}},
		{"small chunks, small buffers, many workers", Options{ChunkEvents: 37, BufferEvents: 500, Workers: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := projector.NewMemStore()
			var calls atomic.Int64
			tt.opts.Progress = func(p Progress) {
				calls.Add(1)
				if p.Projected > p.Read || p.Changed > p.Subjects {
					t.Errorf("progress %+v: projected more than read, or changed more than subjects", p)
				}
			}
			st, err := Rebuild(context.Background(), src, store, tt.opts)
			if err != nil {
				t.Fatalf("rebuild: %v (stats %+v)", err, st)
			}
			if st.Events != len(src) || st.NonAgent != wantNonAgent || st.Invalid != 0 || st.Projected != len(src)-wantNonAgent {
				t.Fatalf("stats %+v: want events %d, nonAgent %d, invalid 0, projected %d", st, len(src), wantNonAgent, len(src)-wantNonAgent)
			}
			if st.Failed != 0 || st.Poison != 0 || st.Changed == 0 || int(calls.Load()) != st.Chunks {
				t.Fatalf("stats %+v, %d progress calls: want no failures, changes, one progress call per chunk", st, calls.Load())
			}
			diffViews(t, want, memView(t, store, subjectsOf(evs)), "stream projection", "rebuild")

			commits := store.Commits()
			again, err := Rebuild(context.Background(), src, store, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if again.Changed != 0 || again.Commits != 0 || store.Commits() != commits || again.Unchanged == 0 {
				t.Fatalf("second rebuild %+v (store commits %d -> %d): want nothing changed", again, commits, store.Commits())
			}
		})
	}
}

// TestRebuildSkipsInvalidEvents: events that fail validation or have no
// projection are counted with a reason, the rest is projected.
func TestRebuildSkipsInvalidEvents(t *testing.T) {
	evs := workload(t, 3, 300, recentStart())
	bad := evs[0]
	bad.ID, bad.Data = "bad-data", json.RawMessage(`{"nonsense":true}`)
	unknown := evs[1]
	unknown.ID, unknown.Type = "unknown-type", "no.such.type"
	src := append(Events{bad, unknown}, evs...)
	store := projector.NewMemStore()
	st, err := Rebuild(context.Background(), src, store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Invalid != 2 || len(st.InvalidSamples) != 2 || st.Projected+st.NonAgent != len(evs) {
		t.Fatalf("stats %+v: want 2 invalid, the %d others projected or non-agent", st, len(evs))
	}
	for i, want := range []string{bad.Subject + "/bad-data", `"no.such.type"`} {
		if !strings.Contains(st.InvalidSamples[i], want) {
			t.Errorf("invalid sample %d = %q, want it to name %s", i, st.InvalidSamples[i], want)
		}
	}
}

// TestRebuildRetriesFailures: transient commit failures are retried in
// later rounds; a subject that keeps failing is reported by an
// *IncompleteError, and a second rebuild completes the job.
func TestRebuildRetriesFailures(t *testing.T) {
	evs := workload(t, 5, 1000, recentStart())
	ref := projector.NewMemStore()
	projectAsStream(t, ref, evs, 100)
	want := memView(t, ref, subjectsOf(evs))

	t.Run("transient", func(t *testing.T) {
		store := projector.NewMemStore()
		var n atomic.Int64
		store.FailCommit = func(projector.Tx) error {
			if n.Add(1)%3 == 0 {
				return errors.New("injected: throttled")
			}
			return nil
		}
		st, err := Rebuild(context.Background(), Events(evs), store, Options{ChunkEvents: 50, Rounds: 10})
		if err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if st.Retried == 0 || st.Failed != 0 {
			t.Fatalf("stats %+v: want retries and no failure", st)
		}
		diffViews(t, want, memView(t, store, subjectsOf(evs)), "stream projection", "rebuild")
	})

	t.Run("persistent", func(t *testing.T) {
		poisoned := evs[len(evs)/2].Subject
		store := projector.NewMemStore()
		store.FailCommit = func(tx projector.Tx) error {
			for _, s := range tx.States {
				if s.Subject == poisoned {
					return errors.New("injected: always fails")
				}
			}
			return nil
		}
		st, err := Rebuild(context.Background(), Events(evs), store, Options{Rounds: 2})
		var inc *IncompleteError
		if !errors.Is(err, ErrIncomplete) || !errors.As(err, &inc) {
			t.Fatalf("err = %v, want an *IncompleteError", err)
		}
		if _, ok := inc.Failed[poisoned]; !ok || st.Failed != len(inc.Failed) || !strings.Contains(err.Error(), "injected: always fails") {
			t.Fatalf("failed %v (stats %+v, err %q): want %s among them with its cause", inc.Failed, st, err, poisoned)
		}
		store.FailCommit = nil
		if _, err := Rebuild(context.Background(), Events(evs), store, Options{}); err != nil {
			t.Fatalf("second rebuild: %v", err)
		}
		diffViews(t, want, memView(t, store, subjectsOf(evs)), "stream projection", "rebuild after retry")
	})
}

func TestRebuildStopsWithContext(t *testing.T) {
	evs := workload(t, 5, 500, recentStart())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Rebuild(ctx, Events(evs), projector.NewMemStore(), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"defaults", Options{}, ""},
		{"negative chunk", Options{ChunkEvents: -1}, "Options.ChunkEvents: must be at least 1, got -1"},
		{"buffer below chunk", Options{ChunkEvents: 100, BufferEvents: 10}, "Options.BufferEvents: must be at least ChunkEvents (100), got 10"},
		{"too many workers", Options{Workers: 65}, "Options.Workers: must be between 1 and 64, got 65"},
		{"negative rounds", Options{Rounds: -2}, "Options.Rounds: must be at least 1, got -2"},
		{"projector concurrency", Options{Projector: projector.Config{Concurrency: 100}}, "Config.Concurrency: must be between 1 and 64, got 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.SetDefaults()
			err := o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
			if _, rerr := Rebuild(context.Background(), Events{}, projector.NewMemStore(), tt.opts); rerr == nil || rerr.Error() != err.Error() {
				t.Fatalf("Rebuild err = %v, want the Validate error", rerr)
			}
		})
	}
}

func TestChunk(t *testing.T) {
	g := func(s string, n int) group { return group{subject: s, inputs: make([]projector.Input, n)} }
	render := func(cs [][]group) string {
		var parts []string
		for _, c := range cs {
			var ss []string
			for _, x := range c {
				ss = append(ss, x.subject)
			}
			parts = append(parts, strings.Join(ss, "+"))
		}
		return strings.Join(parts, " | ")
	}
	tests := []struct {
		name   string
		groups []group
		max    int
		want   string
	}{
		{"empty", nil, 10, ""},
		{"all fit", []group{g("a", 3), g("b", 3), g("c", 4)}, 10, "a+b+c"},
		{"split at the bound", []group{g("a", 3), g("b", 3), g("c", 5)}, 10, "a+b | c"},
		{"a large subject alone", []group{g("a", 2), g("b", 25), g("c", 2)}, 10, "a | b | c"},
		{"one per chunk", []group{g("a", 1), g("b", 1)}, 1, "a | b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(chunk(tt.groups, tt.max)); got != tt.want {
				t.Fatalf("chunk = %q, want %q", got, tt.want)
			}
		})
	}
}

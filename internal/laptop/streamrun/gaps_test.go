package streamrun

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/laptop/opsrectest"
	"github.com/streamfold/streamfold/internal/opsrec"
)

func withOps(ops *opsrectest.Recorder, more func(*Config)) func(*Config) {
	return func(c *Config) {
		c.Ops = ops
		if more != nil {
			more(c)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestStartingPositionLatest: a shard without a checkpoint starts after
// its newest record; the records it held are a GapLatest from the first
// of them; what is written after the start is handed over.
func TestStartingPositionLatest(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 10)
	ops := &opsrectest.Recorder{}
	rec := &recorder{}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, withOps(ops, func(c *Config) {
		c.StartingPosition = Latest
		c.UntilCaughtUp = false
	})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "the GapLatest", func() bool { g := ops.Gaps(); return len(g) > 0 })
	f.put("s", 5)
	waitFor(t, "the new records", func() bool { _, h := rec.snapshot(); return len(h) == 5 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, handled := rec.snapshot()
	if !slices.Equal(handledKeys(handled), keysOf("s", 10, 15)) {
		t.Fatalf("handled %v, want only the records written after the start", handledKeys(handled))
	}
	gaps := ops.Gaps()
	if len(gaps) != 1 {
		t.Fatalf("gaps %+v, want one", gaps)
	}
	g := gaps[0]
	if g.Kind != opsrec.GapLatest || g.Consumer != "c" || g.Shard != "s" || g.FirstSeq != seqs[0] || g.From.IsZero() || g.To.Before(g.From) {
		t.Fatalf("gap %+v, want %s from %s", g, opsrec.GapLatest, seqs[0])
	}
	if !slices.Contains(f.iteratorTypes, "LATEST") || r.Stats().Gaps != 1 {
		t.Fatalf("iterators %v, stats %+v", f.iteratorTypes, r.Stats())
	}
}

// TestLatestOnlyWhereNothingWasRead: with Latest, a shard whose parent
// the consumer has read starts at TRIM_HORIZON (nothing skipped, no gap);
// an empty shard started at LATEST is no gap either.
func TestLatestOnlyWhereNothingWasRead(t *testing.T) {
	f := newFake()
	f.addShard("p", "")
	f.put("p", 3)
	f.closeShard("p")
	f.addShard("c", "p")
	f.put("c", 4)
	f.addShard("e", "")
	store := newMem()
	_ = store.Save(context.Background(), "c", Checkpoint{ShardID: "p", Done: true})
	ops := &opsrectest.Recorder{}
	rec := &recorder{}
	r := newTestRunner(t, f, store, rec.handle, testConfig(&poisonLog{}, withOps(ops, func(c *Config) { c.StartingPosition = Latest })))
	mustRun(t, r)
	_, handled := rec.snapshot()
	if !slices.Equal(handledKeys(handled), keysOf("c", 0, 4)) {
		t.Fatalf("handled %v", handledKeys(handled))
	}
	if gaps := ops.Gaps(); len(gaps) != 0 {
		t.Fatalf("gaps %+v, want none", gaps)
	}
}

func TestStartingPositionValidate(t *testing.T) {
	cfg := testConfig(&poisonLog{}, func(c *Config) { c.StartingPosition = "at_timestamp" })
	if _, err := New(newFake(), newMem(), (&recorder{}).handle, cfg); err == nil || !strings.Contains(err.Error(), "StartingPosition") {
		t.Fatalf("New = %v, want a StartingPosition error", err)
	}
	cfg = testConfig(&poisonLog{}, func(c *Config) { c.Consumer = opsrec.ConsumerGap })
	if _, err := New(newFake(), newMem(), (&recorder{}).handle, cfg); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("New = %v, want a reserved consumer error", err)
	}
}

// TestGapTrimmed: a checkpoint older than the trim horizon, and records
// trimmed while reading, are GapTrimmed gaps ending before the first
// record read after them.
func TestGapTrimmed(t *testing.T) {
	t.Run("checkpoint trimmed", func(t *testing.T) {
		f := newFake()
		f.addShard("s", "")
		seqs := f.put("s", 100)
		f.trimTo("s", 40)
		store := newMem()
		at := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
		_ = store.Save(context.Background(), "c", Checkpoint{ShardID: "s", SequenceNumber: seqs[10], RunnerSeq: seqs[10], RecordTime: at})
		ops := &opsrectest.Recorder{}
		mustRun(t, newTestRunner(t, f, store, (&recorder{}).handle, testConfig(&poisonLog{}, withOps(ops, nil))))
		gaps := ops.Gaps()
		if len(gaps) != 1 {
			t.Fatalf("gaps %+v, want one", gaps)
		}
		g := gaps[0]
		if g.Kind != opsrec.GapTrimmed || !g.From.Equal(at) || g.To.IsZero() || !strings.Contains(g.Detail, seqs[10]) || !strings.Contains(g.Detail, seqs[40]) {
			t.Fatalf("gap %+v", g)
		}
	})
	t.Run("trimmed while reading", func(t *testing.T) {
		f := newFake()
		f.perCall = 10
		f.addShard("s", "")
		seqs := f.put("s", 100)
		rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
			if n == 1 {
				f.trimTo("s", 50) // records 20..49 are lost
			}
			return events.DynamoDBEventResponse{}, nil
		}}
		ops := &opsrectest.Recorder{}
		mustRun(t, newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, withOps(ops, nil))))
		gaps := ops.Gaps()
		if len(gaps) != 1 || gaps[0].Kind != opsrec.GapTrimmed || !strings.Contains(gaps[0].Detail, "after "+seqs[19]) || !strings.Contains(gaps[0].Detail, seqs[50]) {
			t.Fatalf("gaps %+v, want one trimmed after %s before %s", gaps, seqs[19], seqs[50])
		}
	})
}

// TestGapCheckpointMoved: a checkpoint moved past what the runner saved,
// or one not saved by a runner that is past the last heartbeat, is a
// GapSequenceJump; a checkpoint without either evidence is not.
func TestGapCheckpointMoved(t *testing.T) {
	at := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		cp      func(seqs []string) Checkpoint
		prior   func(seqs []string) []opsrec.Progress
		wantGap bool
		from    time.Time
	}{
		{name: "moved", wantGap: true, from: at, cp: func(s []string) Checkpoint {
			return Checkpoint{ShardID: "s", SequenceNumber: s[50], RunnerSeq: s[20], RecordTime: at}
		}},
		{name: "saved by the runner", cp: func(s []string) Checkpoint {
			return Checkpoint{ShardID: "s", SequenceNumber: s[50], RunnerSeq: s[50], RecordTime: at}
		}},
		{name: "moved back", cp: func(s []string) Checkpoint {
			return Checkpoint{ShardID: "s", SequenceNumber: s[50], RunnerSeq: s[60], RecordTime: at}
		}},
		{name: "not the runner's, past the heartbeat", wantGap: true, from: at.Add(time.Minute),
			cp: func(s []string) Checkpoint { return Checkpoint{ShardID: "s", SequenceNumber: s[50]} },
			prior: func(s []string) []opsrec.Progress {
				return []opsrec.Progress{
					{Consumer: "other", Shard: "s", LastSeq: s[5]},
					{Consumer: "c", Shard: "s", LastSeq: s[20], LastRecord: at.Add(time.Minute)},
				}
			}},
		{name: "not the runner's, no heartbeat", cp: func(s []string) Checkpoint { return Checkpoint{ShardID: "s", SequenceNumber: s[50]} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.addShard("s", "")
			seqs := f.put("s", 100)
			store := newMem()
			_ = store.Save(context.Background(), "c", tt.cp(seqs))
			ops := &opsrectest.Recorder{}
			if tt.prior != nil {
				ops.Prior = tt.prior(seqs)
			}
			mustRun(t, newTestRunner(t, f, store, (&recorder{}).handle, testConfig(&poisonLog{}, withOps(ops, nil))))
			gaps := ops.Gaps()
			if !tt.wantGap {
				if len(gaps) != 0 {
					t.Fatalf("gaps %+v, want none", gaps)
				}
				return
			}
			if len(gaps) != 1 {
				t.Fatalf("gaps %+v, want one", gaps)
			}
			g := gaps[0]
			if g.Kind != opsrec.GapSequenceJump || g.LastSeq != seqs[50] || !g.From.Equal(tt.from) || g.To.IsZero() || !strings.Contains(g.Detail, seqs[51]) {
				t.Fatalf("gap %+v, want a jump from %s up to %s, before %s", g, tt.from, seqs[50], seqs[51])
			}
		})
	}
}

// TestGapDiscarded: a record given to OnPoison after its retries is a
// GapDiscarded of that one record.
func TestGapDiscarded(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 10)
	bad := seqs[4]
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if slices.ContainsFunc(b, func(d delivered) bool { return d.seq == bad }) {
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: bad}}}, nil
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	ops := &opsrectest.Recorder{}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, withOps(ops, func(c *Config) { c.BatchSize = 10 })))
	mustRun(t, r)
	gaps := ops.Gaps()
	if len(gaps) != 1 {
		t.Fatalf("gaps %+v, want one", gaps)
	}
	g := gaps[0]
	if g.Kind != opsrec.GapDiscarded || g.FirstSeq != bad || g.LastSeq != bad || g.Records != 1 || g.From.IsZero() || !g.From.Equal(g.To) || !strings.Contains(g.Detail, bad) {
		t.Fatalf("gap %+v", g)
	}
}

// TestHeartbeats: one at the first batch, one when the shard stops; the
// records they count add up to those handed over; the last names the
// newest record.
func TestHeartbeats(t *testing.T) {
	f := newFake()
	f.perCall = 10
	f.addShard("a", "")
	f.addShard("b", "")
	seqsA := f.put("a", 30)
	seqsB := f.put("b", 7)
	ops := &opsrectest.Recorder{}
	r := newTestRunner(t, f, newMem(), (&recorder{}).handle, testConfig(&poisonLog{}, withOps(ops, func(c *Config) { c.BatchSize = 10 })))
	mustRun(t, r)
	beats := ops.Beats()
	total := map[string]int64{}
	last := map[string]opsrec.Progress{}
	for _, b := range beats {
		if b.Consumer != "c" || b.Lag < 0 || b.Updated.Before(b.Since) {
			t.Errorf("heartbeat %+v", b)
		}
		total[b.Shard] += b.Records
		last[b.Shard] = b
	}
	if total["a"] != 30 || total["b"] != 7 || int64(30+7) != r.Stats().Records {
		t.Fatalf("heartbeats count %v, stats %+v: want 30 and 7", total, r.Stats())
	}
	if last["a"].LastSeq != seqsA[29] || last["b"].LastSeq != seqsB[6] || last["a"].LastRecord.IsZero() {
		t.Fatalf("last heartbeats %+v", last)
	}
	// Without Ops nothing is written, and nothing fails.
	mustRun(t, newTestRunner(t, f, newMem(), (&recorder{}).handle, testConfig(&poisonLog{}, nil)))
}

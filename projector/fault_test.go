package projector_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

var (
	faultSeeds  = flag.Int("fault.seeds", 20, "seeds of the fault-injection suite on MemStore (the real store always runs one)")
	faultEvents = flag.Int("fault.events", 20000, "events per fault-injection workload")
)

// faulty wraps a handler with injected failures, deterministically per seed:
//   - a partial failure at a random record, either before the handler ran the
//     rest (nothing after it applied) or after (everything applied, then
//     reported failed: the re-sent records are duplicates);
//   - a function error after a successful run (a whole-batch redelivery,
//     which the runner bisects).
type faulty struct {
	h                      streamrun.Handler
	rng                    *rand.Rand
	partial, whole, before float64
	injected               atomic.Int64
}

func (f *faulty) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	n := len(ev.Records)
	r := f.rng.Float64()
	switch {
	case n > 0 && r < f.partial:
		f.injected.Add(1)
		cut := f.rng.IntN(n)
		seq := ev.Records[cut].Change.SequenceNumber
		if f.rng.Float64() < f.before {
			if cut > 0 {
				resp, err := f.h(ctx, events.DynamoDBEvent{Records: ev.Records[:cut]})
				if err != nil || len(resp.BatchItemFailures) > 0 {
					return resp, err
				}
			}
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: seq}}}, nil
		}
		resp, err := f.h(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) > 0 {
			return resp, err
		}
		return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: seq}}}, nil
	case r < f.partial+f.whole:
		f.injected.Add(1)
		if _, err := f.h(ctx, ev); err != nil {
			return events.DynamoDBEventResponse{}, err
		}
		return events.DynamoDBEventResponse{}, errors.New("injected: function timed out after applying the batch")
	}
	return f.h(ctx, ev)
}

func workload(t *testing.T, seed int64) []schema.Event {
	t.Helper()
	return workloadN(t, seed, *faultEvents)
}

// workloadN is a simulated workload of n events over the last three days.
func workloadN(t *testing.T, seed int64, n int) []schema.Event {
	t.Helper()
	// Recent dates: projections carry TTLs (90 days from creation) that
	// DynamoDB Local enforces, so a workload from long ago would expire
	// while the test runs.
	start := testclock.RecentMonday(3)
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: n, Days: 3, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	subjects := map[string]bool{}
	for _, e := range evs {
		subjects[e.Subject] = true
	}
	if n >= 20000 && (len(subjects) < 500 || len(evs) < 20000) {
		t.Fatalf("workload has %d events over %d aggregates; want >= 20000 over >= 500", len(evs), len(subjects))
	}
	return evs
}

// TestFaultInjectionDynamoDB runs the full-size workload through the real
// stream, the real runner and the real store, with injected transient
// errors, redeliveries, bisection and runner restarts; every projection and
// counter must equal the reference fold.
func TestFaultInjectionDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size fault injection skipped in -short mode")
	}
	p := newPipeline(t)
	// Item writes fail now and then after their commit succeeded, and
	// commits fail before reaching DynamoDB, as throttling would; the
	// redelivery must repair the items.
	flaky := &flakyStore{Store: p.store, rng: rand.New(rand.NewPCG(3, 4)), rate: 0.02}
	proj, err := projector.New(flaky, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.handler = projector.NewHandler(proj, p.dl, projector.HandlerConfig{}, testenv.QuietLog())
	evs := workload(t, 1)
	p.append(t, evs)
	f := &faulty{h: p.handler.Handle, rng: rand.New(rand.NewPCG(1, 2)), partial: 0.2, whole: 0.1, before: 0.5}
	restarts := 0
	for {
		// Restart the runner after a few batches: it must resume from its
		// checkpoints with nothing lost.
		ctx, cancel := context.WithCancel(context.Background())
		batches := 0
		stopAfter := 3 + restarts%5
		h := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			batches++
			if batches > stopAfter {
				cancel()
				return events.DynamoDBEventResponse{}, ctx.Err()
			}
			return f.Handle(ctx, ev)
		}
		st, err := p.run(t, ctx, h, streamrun.Config{BatchSize: 250, MaxRetryAttempts: 50, BisectOnError: true})
		stopped := ctx.Err() != nil
		cancel()
		if err != nil && !stopped {
			t.Fatalf("run: %v (stats %+v)", err, st)
		}
		if !stopped {
			break
		}
		restarts++
		if restarts > 400 {
			t.Fatal("not caught up after 400 restarts")
		}
	}
	if letters, _ := p.dl.List(context.Background(), "projector"); len(letters) > 0 {
		t.Fatalf("%d valid records dead-lettered; first: %+v", len(letters), letters[0])
	}
	if f.injected.Load() == 0 {
		t.Fatal("no fault was injected")
	}
	want, counters := reference(t, p.stored(t))
	got := actual(t, p.c, p.n, counters)
	compareViews(t, want, got)
	checkCountersFromItems(t, got)
	if flaky.failed.Load() == 0 {
		t.Fatal("no store failure was injected")
	}
	t.Logf("%d events, %d injected faults, %d failed store calls, %d runner restarts, %d write requests", len(evs), f.injected.Load(), flaky.failed.Load(), restarts, p.store.WriteRequests())
}

// flakyStore fails a fraction of commits and item writes before they reach
// the store, as throttling would.
type flakyStore struct {
	projector.Store
	mu     sync.Mutex
	rng    *rand.Rand
	rate   float64
	failed atomic.Int64
}

func (f *flakyStore) fail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() < f.rate {
		f.failed.Add(1)
		return true
	}
	return false
}

func (f *flakyStore) Commit(ctx context.Context, tx projector.Tx) error {
	if f.fail() {
		return errors.New("injected: commit throttled")
	}
	return f.Store.Commit(ctx, tx)
}

func (f *flakyStore) PutItems(ctx context.Context, owner string, version int64, items []projector.Item) error {
	if f.fail() {
		return errors.New("injected: item put throttled")
	}
	return f.Store.PutItems(ctx, owner, version, items)
}

// TestFaultInjectionMemStore runs -fault.seeds workloads through an
// in-memory model of the event source mapping (partial batch responses,
// whole-batch retries with bisection, checkpoint rewinds as restarts) over
// MemStore, which passes the same conformance suite as DynamoStore.
func TestFaultInjectionMemStore(t *testing.T) {
	seeds := *faultSeeds
	if testing.Short() {
		seeds = 3
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run("seed="+strconv.FormatInt(seed, 10), func(t *testing.T) {
			t.Parallel()
			evs := workload(t, 100+seed)
			store := projector.NewMemStore()
			rng := rand.New(rand.NewPCG(uint64(seed), 99))
			// Commits also meet DynamoDB's TransactionConflict (another
			// transaction on one of their items), and item writes fail
			// after their commit succeeded: the records are failed and
			// delivered again, and the redelivery writes the items.
			store.FailCommit = func(tx projector.Tx) error {
				switch r := rng.Float64(); {
				case r < 0.02:
					return errors.New("injected: commit throttled")
				case r < 0.03 && len(tx.Rows) > 0:
					return fmt.Errorf("%w: injected: TransactionConflict", projector.ErrConflict)
				}
				return nil
			}
			store.FailPut = func(string, projector.Item) error {
				if rng.Float64() < 0.02 {
					return errors.New("injected: put throttled")
				}
				return nil
			}
			proj, err := projector.New(store, projector.Config{Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
			f := &faulty{h: h.Handle, rng: rand.New(rand.NewPCG(uint64(seed), 7)), partial: 0.15, whole: 0.05, before: 0.5}
			recs := lambdaRecords(t, evs)
			deliver(t, recs, f.Handle, rand.New(rand.NewPCG(uint64(seed), 11)))
			if f.injected.Load() == 0 {
				t.Fatal("no fault was injected")
			}
			want, counters := reference(t, evsFromRecords(t, recs))
			got := actualMem(t, store, counters)
			compareViews(t, want, got)
			checkCountersFromItems(t, got)
		})
	}
}

type discardDL struct{}

func (discardDL) Put(context.Context, projector.DeadLetter) error { return nil }

// appendGroup is how many records share a recordedat in lambdaRecords:
// one append request (the appender stamps one recordedat per request).
const appendGroup = 100

// lambdaRecords turns events into INSERT stream records (duplicates by id
// are dropped, as the conditional append drops them).
func lambdaRecords(t testing.TB, evs []schema.Event) []events.DynamoDBEventRecord {
	t.Helper()
	seen := map[string]bool{}
	var out []events.DynamoDBEventRecord
	// Recorded now, as the appender would: projections expire 90 days
	// after their events were recorded, and DynamoDB Local deletes what has
	// expired while the test runs. Like the appender, which stamps one
	// recordedat on every event of a request, groups of appendGroup records
	// share theirs: the fold then orders a group's events by id, not by
	// arrival (a redelivered record can fold after one that arrived later).
	now := time.Now().UTC().Truncate(time.Second)
	for i, e := range evs {
		if _, err := schema.Validate(&e); err != nil {
			t.Fatal(err)
		}
		if seen[e.Subject+"\x00"+e.ID] {
			continue
		}
		seen[e.Subject+"\x00"+e.ID] = true
		rec := now.Add(time.Duration(i/appendGroup) * time.Millisecond)
		e.RecordedAt = &rec
		item, err := schema.Item(e, 14*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		img, err := streamimage.ToLambda(item)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, events.DynamoDBEventRecord{EventName: "INSERT", EventID: fmt.Sprint(i),
			Change: events.DynamoDBStreamRecord{NewImage: img, SequenceNumber: fmt.Sprintf("%021d", i+1)}})
	}
	return out
}

func evsFromRecords(t *testing.T, recs []events.DynamoDBEventRecord) []schema.Event {
	t.Helper()
	out := make([]schema.Event, 0, len(recs))
	for _, r := range recs {
		in, ok, err := projector.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, in.Event)
		} else if r.EventName == "INSERT" {
			item, _ := streamimage.FromLambda(r.Change.NewImage)
			e, _ := schema.EventFromItem(item)
			out = append(out, e) // non-agent: the reference skips it too
		}
	}
	return out
}

// deliver models Lambda's event source mapping over one shard: batches of
// random size, partial batch responses resume at the lowest reported record,
// function errors retry the batch in halves, and now and then the consumer
// "restarts" from a lagging checkpoint, re-sending records already applied.
func deliver(t *testing.T, recs []events.DynamoDBEventRecord, h streamrun.Handler, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	pos, checkpoint := 0, 0
	var run func(batch []events.DynamoDBEventRecord, depth int) int // returns how many records succeeded from the start
	run = func(batch []events.DynamoDBEventRecord, depth int) int {
		for attempt := 0; attempt < 200; attempt++ {
			resp, err := h(ctx, events.DynamoDBEvent{Records: batch})
			if err != nil {
				if len(batch) > 1 && depth < 20 {
					half := len(batch) / 2
					done := run(batch[:half], depth+1)
					if done < half {
						return done
					}
					return half + run(batch[half:], depth+1)
				}
				continue
			}
			if len(resp.BatchItemFailures) == 0 {
				return len(batch)
			}
			for i, r := range batch {
				if r.Change.SequenceNumber == resp.BatchItemFailures[0].ItemIdentifier {
					return i
				}
			}
			t.Fatalf("unknown item identifier %s", resp.BatchItemFailures[0].ItemIdentifier)
		}
		t.Fatal("a batch failed 200 times in a row")
		return 0
	}
	for pos < len(recs) {
		size := 1 + rng.IntN(1000)
		end := min(pos+size, len(recs))
		done := run(recs[pos:end], 0)
		pos += done
		if done == end-(pos-done) {
			checkpoint = pos
		}
		if rng.Float64() < 0.03 { // restart: resume from an older checkpoint
			pos = max(0, checkpoint-rng.IntN(500))
		}
	}
}

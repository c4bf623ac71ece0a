package rebuild

import (
	"context"
	"flag"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
)

var benchEvents = flag.Int("rebuild-bench-events", 20000, "events of the rebuild benchmarks' workload")

// BenchmarkRebuildMemStore measures the fold itself: validate, group,
// fold and commit into a MemStore, every iteration into an empty store.
func BenchmarkRebuildMemStore(b *testing.B) {
	evs := Events(workload(b, 42, *benchEvents, recentStart()))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Rebuild(context.Background(), evs, projector.NewMemStore(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRebuildDynamoDB rebuilds into fresh tables of DynamoDB Local
// (run with -benchtime 1x: each iteration provisions a new set of tables)
// and, in the same tables, a second time (a no-op). It reports both rates
// and the write requests per event.
func BenchmarkRebuildDynamoDB(b *testing.B) {
	c := testenv.Clients(b)
	evs := Events(workload(b, 42, *benchEvents, recentStart()))
	var first, second, requests float64
	for b.Loop() {
		b.StopTimer()
		nm, _ := testenv.Tables(b, c)
		store, err := projector.NewDynamoStore(c.DynamoDB, nm)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := Rebuild(context.Background(), evs, store, Options{})
		if err != nil {
			b.Fatal(err)
		}
		again, err := Rebuild(context.Background(), evs, store, Options{})
		if err != nil || again.Changed != 0 {
			b.Fatalf("second rebuild %+v: %v", again, err)
		}
		first += st.EventsPerSecond
		second += again.EventsPerSecond
		requests += float64(store.WriteRequests()) / float64(len(evs))
	}
	b.ReportMetric(first/float64(b.N), "events/s")
	b.ReportMetric(second/float64(b.N), "noop-events/s")
	b.ReportMetric(requests/float64(b.N), "tx/event")
}

package projector_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// BenchmarkLagDynamoDBLocal measures end-to-end lag against DynamoDB Local:
// a producer appends the simulate workload at a steady rate (10 events every
// 20 ms) while streamfold's runner consumes the stream and the projector
// commits. An event's lag is from the moment its append call started to the
// moment the handler returned from the batch that committed it (its
// projection is then visible to strongly consistent reads). Reports p50 and
// p99 in milliseconds. DynamoDB Local's ApproximateCreationDateTime is cut
// to the minute, so the lag is measured by the benchmark, not read from the
// records. Two batching windows run side by side: 0 (send what one read
// returned) and 200 ms (wait to fill batches).
//
//	go test ./projector -run '^$' -bench LagDynamoDBLocal -benchtime 1x
func BenchmarkLagDynamoDBLocal(b *testing.B) {
	for _, window := range []time.Duration{0, 200 * time.Millisecond} {
		b.Run("batch-window="+window.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p50, p99, n := measureLag(b, 2000, window)
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p99, "p99-ms")
				b.ReportMetric(float64(n), "events")
			}
		})
	}
}

func measureLag(b *testing.B, total int, window time.Duration) (p50, p99 float64, n int) {
	b.Helper()
	p := newPipelineTB(b)
	start := testclock.RecentMonday(1)
	evs, _, err := simulate.Generate(simulate.Config{Seed: 9, Events: total, Days: 1, Start: start})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	appended := map[string]time.Time{}
	visible := map[string]time.Time{}
	h := func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		resp, err := p.handler.Handle(ctx, ev)
		now := time.Now()
		if err == nil && len(resp.BatchItemFailures) == 0 {
			mu.Lock()
			for _, r := range ev.Records {
				if item, err := streamimage.FromLambda(r.Change.NewImage); err == nil {
					if e, err := schema.EventFromItem(item); err == nil {
						if _, seen := visible[e.ID]; !seen {
							visible[e.ID] = now
						}
					}
				}
			}
			mu.Unlock()
		}
		return resp, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := streamrun.New(p.c.Streams, streamrun.NewDynamoCheckpoints(p.c.DynamoDB, p.n.Table(schema.TableCheckpoints)), h,
		streamrun.Config{StreamARN: p.stream, Consumer: "lag", BatchSize: 100, BatchWindow: window, PollInterval: 50 * time.Millisecond,
			Logger: testenv.QuietLog(), OnPoison: func(context.Context, events.DynamoDBEventRecord, error) error { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	a, err := ingest.NewAppender(p.c.DynamoDB, ingest.AppenderConfig{Table: p.n.Table(schema.TableEvents)})
	if err != nil {
		b.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	for i := 0; i < len(evs); i += 10 {
		<-tick.C
		chunk := evs[i:min(i+10, len(evs))]
		now := time.Now() // the append call's start: a conservative origin
		res, err := a.Append(context.Background(), chunk)
		if err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		for j, e := range chunk {
			if res.Outcomes[j] == ingest.Accepted {
				appended[e.ID] = now
			}
		}
		mu.Unlock()
	}
	tick.Stop()
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		missing := 0
		for id := range appended {
			if _, ok := visible[id]; !ok {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d events not projected after 60s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	var lags []float64
	for id, at := range appended {
		lags = append(lags, float64(visible[id].Sub(at).Microseconds())/1000)
	}
	sort.Float64s(lags)
	return lags[len(lags)/2], lags[len(lags)*99/100], len(lags)
}

package projector_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/projector"
)

// benchBatches renders a simulate workload as Lambda event JSON batches.
func benchBatches(b *testing.B, n, batch int) ([][]byte, int) {
	b.Helper()
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	evs, _, err := simulate.Generate(simulate.Config{Seed: 42, Events: n, Days: 3, Start: start})
	if err != nil {
		b.Fatal(err)
	}
	recs := lambdaRecords(b, evs)
	var out [][]byte
	for i := 0; i < len(recs); i += batch {
		raw, err := json.Marshal(events.DynamoDBEvent{Records: recs[i:min(i+batch, len(recs))]})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, raw)
	}
	return out, len(recs)
}

// planOnly is a Store that loads nothing and accepts every commit without
// applying it: what remains is fold + write planning.
type planOnly struct{ actions int }

func (planOnly) Load(context.Context, []string) (map[string]projector.StoredState, error) {
	return nil, nil
}
func (*planOnly) Derive(context.Context, string, map[string]types.AttributeValue, []string, func(map[string]types.AttributeValue) map[string]types.AttributeValue) error {
	return nil
}
func (p *planOnly) Commit(_ context.Context, tx projector.Tx) error {
	p.actions += tx.Actions()
	return nil
}

// BenchmarkDecodeVsProject measures, side by side in one run, (a) merely
// decoding the Lambda event JSON and (b) decoding plus validating, folding
// and planning the writes. Compare the ns/event metrics.
//
//	go test ./projector -run '^$' -bench DecodeVsProject
func BenchmarkDecodeVsProject(b *testing.B) {
	batches, n := benchBatches(b, 20000, 1000)
	b.Run("decode-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, raw := range batches {
				var ev events.DynamoDBEvent
				if err := json.Unmarshal(raw, &ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	})
	b.Run("decode+fold+plan", func(b *testing.B) {
		store := &planOnly{}
		proj, err := projector.New(store, projector.Config{Concurrency: 1})
		if err != nil {
			b.Fatal(err)
		}
		h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, quietLog())
		for i := 0; i < b.N; i++ {
			for _, raw := range batches {
				var ev events.DynamoDBEvent
				if err := json.Unmarshal(raw, &ev); err != nil {
					b.Fatal(err)
				}
				if _, err := h.Handle(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	})
}

// BenchmarkWriteRequests reports DynamoDB write requests per event on the
// simulate workload at batch sizes 100 and 1,000 (one TransactWriteItems per
// commit), next to one write per effect: every state, item and counter update
// of every event on its own (the actions at batch size 1, with no coalescing).
// The figures are counts, not times.
//
//	go test ./projector -run '^$' -bench WriteRequests -benchtime 1x
func BenchmarkWriteRequests(b *testing.B) {
	for _, size := range []int{1, 100, 1000} {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			batches, n := benchBatches(b, 20000, size)
			var requests, actions, reads, total int64
			for i := 0; i < b.N; i++ {
				store := &countingStore{MemStore: projector.NewMemStore()}
				proj, err := projector.New(store, projector.Config{Concurrency: 1})
				if err != nil {
					b.Fatal(err)
				}
				h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, quietLog())
				for _, raw := range batches {
					var ev events.DynamoDBEvent
					if err := json.Unmarshal(raw, &ev); err != nil {
						b.Fatal(err)
					}
					if _, err := h.Handle(context.Background(), ev); err != nil {
						b.Fatal(err)
					}
				}
				requests += store.commits
				actions += store.actions
				reads += store.reads
				total += int64(n)
			}
			b.ReportMetric(float64(requests)/float64(total), "requests/event")
			b.ReportMetric(float64(actions)/float64(total), "writes/event")
			b.ReportMetric(float64(reads)/float64(total), "derive-reads/event")
		})
	}
}

// countingStore counts commits (requests) and the writes they carry, the
// conditional updates of derived attributes (one write request each), and
// the reads derives make (DynamoStore.Derive's GetItem, one per call).
type countingStore struct {
	*projector.MemStore
	commits, actions, reads int64
}

// Derive counts a write request when a derived attribute changes (as
// DynamoStore.Derive writes only then).
func (c *countingStore) Derive(ctx context.Context, table string, key map[string]types.AttributeValue, counters []string, fn func(map[string]types.AttributeValue) map[string]types.AttributeValue) error {
	c.reads++
	row, err := c.MemStore.Get(ctx, table, key)
	if err != nil || row == nil {
		return err
	}
	for k, v := range fn(row) {
		if !reflect.DeepEqual(projector.CanonicalItem(map[string]types.AttributeValue{k: row[k]}), projector.CanonicalItem(map[string]types.AttributeValue{k: v})) {
			c.commits++
			c.actions++
			break
		}
	}
	return c.MemStore.Derive(ctx, table, key, counters, fn)
}

func (c *countingStore) Commit(ctx context.Context, tx projector.Tx) error {
	if err := c.MemStore.Commit(ctx, tx); err != nil {
		return err
	}
	c.commits++
	c.actions += int64(tx.Actions())
	return nil
}

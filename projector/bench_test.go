package projector_test

import (
	"context"
	"encoding/json"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// benchBatches renders a simulate workload as Lambda event JSON batches.
func benchBatches(b *testing.B, n, batch int) ([][]byte, int) {
	b.Helper()
	start := testclock.RecentMonday(3)
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

// nullAPI is a DynamoDB that holds nothing and accepts every write
// without looking at it: a DynamoStore over it loads nothing and builds
// every request it would send (states encoded and compressed, items and
// rows rendered and size-checked), so what remains is decode, fold, plan
// and the requests' construction, without the network.
type nullAPI struct{}

func (nullAPI) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}
func (nullAPI) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return &dynamodb.BatchGetItemOutput{}, nil
}
func (nullAPI) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// cpuClock measures the CPU time (user and system, every thread: the
// garbage collector's too) the process spends between startCPU and stop.
// On a shared, loaded machine it moves far less than the wall clock, which
// counts the time other processes held the cores.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) *cpuClock {
	b.ResetTimer()
	return &cpuClock{b: b, start: processCPU(b)}
}

func (c *cpuClock) stop() time.Duration { return processCPU(c.b) - c.start }

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeVsProject measures, side by side in one run, (a) merely
// decoding the Lambda event JSON and (b) decoding plus validating, folding,
// planning the writes and building the requests a DynamoStore sends
// (nullAPI). Compare the ns/event metrics, or on a loaded machine the
// cpu-ns/event ones (the process's CPU time, which other processes do not
// inflate).
//
//	go test ./projector -run '^$' -bench DecodeVsProject
func BenchmarkDecodeVsProject(b *testing.B) {
	batches, n := benchBatches(b, 20000, 1000)
	b.Run("decode-json", func(b *testing.B) {
		cpu := startCPU(b)
		for i := 0; i < b.N; i++ {
			for _, raw := range batches {
				var ev events.DynamoDBEvent
				if err := json.Unmarshal(raw, &ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		b.ReportMetric(float64(cpu.stop())/float64(b.N*n), "cpu-ns/event")
	})
	b.Run("decode+fold+plan", func(b *testing.B) {
		store, err := projector.NewDynamoStore(nullAPI{}, schema.Naming{Prefix: "bench", Stage: "dev"})
		if err != nil {
			b.Fatal(err)
		}
		proj, err := projector.New(store, projector.Config{Concurrency: 1})
		if err != nil {
			b.Fatal(err)
		}
		h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
		cpu := startCPU(b)
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
		b.ReportMetric(float64(cpu.stop())/float64(b.N*n), "cpu-ns/event")
	})
}

// BenchmarkWriteRequests reports DynamoDB requests per event on the
// simulate workload at batch sizes 1, 100 and 1,000: write requests (single
// conditional puts and transactions), the items they carry, transactions
// alone, and read requests. The figures are counts, not times or capacity
// units: BenchmarkCapacityDynamoDBLocal measures what DynamoDB charges.
//
//	go test ./projector -run '^$' -bench WriteRequests -benchtime 1x
func BenchmarkWriteRequests(b *testing.B) {
	for _, size := range []int{1, 100, 1000} {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			batches, n := benchBatches(b, 20000, size)
			var c countingStore
			var total int64
			for i := 0; i < b.N; i++ {
				c = countingStore{MemStore: projector.NewMemStore()}
				proj, err := projector.New(&c, projector.Config{Concurrency: 1})
				if err != nil {
					b.Fatal(err)
				}
				h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
				for _, raw := range batches {
					var ev events.DynamoDBEvent
					if err := json.Unmarshal(raw, &ev); err != nil {
						b.Fatal(err)
					}
					if _, err := h.Handle(context.Background(), ev); err != nil {
						b.Fatal(err)
					}
				}
				total += int64(n)
			}
			per := func(v int64) float64 { return float64(v) * float64(b.N) / float64(total) }
			b.ReportMetric(per(c.writes), "write-requests/event")
			b.ReportMetric(per(c.actions), "items-written/event")
			b.ReportMetric(per(c.txs), "transactions/event")
			b.ReportMetric(per(c.reads), "read-requests/event")
		})
	}
}

// countingStore counts what a DynamoStore would send: a Commit of one
// action is a PutItem, of more a TransactWriteItems; PutItems is one PutItem
// per item; Load and LoadRows one BatchGetItem per 100 keys.
type countingStore struct {
	*projector.MemStore
	writes, actions, txs, reads int64
}

func (c *countingStore) Load(ctx context.Context, subjects []string, consistent bool) (map[string]projector.StoredState, error) {
	c.reads += int64((len(subjects) + 99) / 100)
	return c.MemStore.Load(ctx, subjects, consistent)
}

func (c *countingStore) LoadRows(ctx context.Context, rows []projector.RowRef, consistent bool) (map[string]projector.Row, error) {
	c.reads += int64((len(rows) + 99) / 100)
	return c.MemStore.LoadRows(ctx, rows, consistent)
}

func (c *countingStore) ItemVersions(ctx context.Context, items []projector.Item) ([]int64, error) {
	c.reads += int64((len(items) + 99) / 100)
	return c.MemStore.ItemVersions(ctx, items)
}

func (c *countingStore) Commit(ctx context.Context, tx projector.Tx) error {
	if err := c.MemStore.Commit(ctx, tx); err != nil {
		return err
	}
	c.writes++
	c.actions += int64(tx.Actions())
	if tx.Actions() > 1 {
		c.txs++
	}
	return nil
}

func (c *countingStore) PutItems(ctx context.Context, owner string, version int64, items []projector.Item) error {
	c.writes += int64(len(items))
	c.actions += int64(len(items))
	return c.MemStore.PutItems(ctx, owner, version, items)
}

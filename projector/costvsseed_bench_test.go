package projector_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/projector/internal/seed003"
	"github.com/streamfold/streamfold/schema"
)

// BenchmarkCostVsSeed measures, side by side on the same events, what
// streamfold costs (the appends to the event table and the projector, all
// units, as BenchmarkCapacityDynamoDBLocal measures them) and what the
// seeds' own direct-write designs cost, which have no event table: their
// writes per event are their whole cost.
//
//   - GitHub events (jobs, runners, deployments): seed 003's design as the
//     seed prescribes it, on its four tables (projector/internal/seed003).
//   - The other domains (mixed workload): the seeds define tables and items
//     (000/002 executions, 001 workflows, 004 messages; streamfold's
//     projection tables are exactly those) and a direct write per event
//     (000: a PutItem of the execution; 004: an UpdateItem of the message;
//     001: the items and the daily metrics rows). The seed side writes, per
//     event, each item and sf/ldf metrics row the event changes, as
//     streamfold's fold computes it (an in-memory projector) without
//     streamfold's bookkeeping attributes, with one PutItem: an UpdateItem
//     or an ADD on the row would cost the same units. Seed 004 has no
//     metrics rows (its dashboard queries the indexes), so the seed side
//     writes none; streamfold's metrics table is its own.
//
// Both sides get the same records (duplicate deliveries removed, as the
// event table's conditional put removes them). streamfold's side forms
// batches from the records' arrival (simulate's Rate: record i arrives at
// i/Rate s) as the deployed event source mapping does (terraform's
// projector_batch_size and projector_batching_window_seconds: a batch
// closes at the batch size or when the window since its first record has
// passed), or at a fixed batch size. The seed side does not batch: it
// writes per webhook. One projector writes (Concurrency 1) and each
// transaction action is sent on its own (splitTx), as in the capacity
// benchmark.
//
// Metrics: streamfold-CU/event, seed-CU/event, ratio (streamfold / seed),
// and for the jobs workloads streamfold-CU/job and seed-CU/job per job
// lifecycle; the log gives both sides by table and index, per event.
// Needs DynamoDB Local (STREAMFOLD_DYNAMODB_ENDPOINT); docs/cost.md, "Against
// the seed's own design", has the figures.
//
//	go test ./projector -run '^$' -bench CostVsSeed -benchtime 1x
func BenchmarkCostVsSeed(b *testing.B) {
	c := testenv.Clients(b)
	size, window := deployedMapping(b)
	deployed := costBatching{"deployed", size, window}
	fixed := func(n int) costBatching { return costBatching{"batch=" + strconv.Itoa(n), n, 0} }
	loads := []struct {
		name    string
		perJob  bool // report per job lifecycle too (GitHub jobs only)
		mix     simulate.Mix
		events  int
		rate    int
		batches []costBatching
	}{
		// The capacity benchmark's jobs workload: 1 event/s, so that
		// lifecycles are whole.
		{"jobs/rate=1", true, simulate.Mix{Jobs: 1}, 2000, 1, []costBatching{fixed(1), fixed(100), fixed(1000)}},
		{"jobs/rate=100", true, simulate.Mix{Jobs: 1}, 2000, 100, []costBatching{deployed}},
		// The capacity benchmark's mixed workload.
		{"mixed/rate=100", false, simulate.Mix{}, 3000, 100, []costBatching{deployed}},
	}
	start := testclock.RecentMonday(2)
	for _, load := range loads {
		var (
			evs  []schema.Event
			uniq []schema.Event
			seed *capacity.Snapshot
			jobs int
		)
		for _, batching := range load.batches {
			b.Run(load.name+"/"+batching.name, func(b *testing.B) {
				if evs == nil {
					var err error
					evs, _, err = simulate.Generate(simulate.Config{Seed: 21, Events: load.events, Days: 1, Start: start, Mix: load.mix, Rate: load.rate, GitHubPayloads: simulate.PayloadsFull})
					if err != nil {
						b.Fatal(err)
					}
					uniq = uniqueEvents(evs)
					jobs = countJobs(uniq)
				}
				for range b.N {
					if seed == nil {
						s := seedCost(b, c, uniq)
						seed = &s
					}
					recs := lambdaRecords(b, evs)
					batches := mappingBatches(len(recs), load.rate, batching.size, batching.window)
					sf := streamfoldCost(b, c, evs, recs, batches)
					per := float64(len(recs))
					sfTotal, seedTotal := sf.Write+sf.Read, seed.Write+seed.Read
					b.ReportMetric(sfTotal/per, "streamfold-CU/event")
					b.ReportMetric(seedTotal/per, "seed-CU/event")
					b.ReportMetric(sfTotal/seedTotal, "ratio")
					b.ReportMetric(per/float64(len(batches)), "records/batch")
					if load.perJob {
						b.ReportMetric(sfTotal/float64(jobs), "streamfold-CU/job")
						b.ReportMetric(seedTotal/float64(jobs), "seed-CU/job")
					}
					b.Logf("%s %s: %d records, %d batches, %d jobs", load.name, batching.name, len(recs), len(batches), jobs)
					b.Logf("streamfold per event: %.3fW %.3fR: %s", sf.Write/per, sf.Read/per, breakdown(sf, per))
					b.Logf("seed per event:       %.3fW %.3fR: %s", seed.Write/per, seed.Read/per, breakdown(*seed, per))
				}
			})
		}
	}
}

// costBatching is how streamfold's side batches the records: up to size
// records, closed early when window (if positive) has passed since the
// batch's first record arrived.
type costBatching struct {
	name   string
	size   int
	window time.Duration
}

// deployedMapping returns the batch size and batching window of the
// projector's event source mapping as terraform/variables.tf defaults
// them.
func deployedMapping(t testing.TB) (int, time.Duration) {
	t.Helper()
	src, err := os.ReadFile("../terraform/variables.tf")
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string) int {
		m := regexp.MustCompile(`variable "` + name + `" \{[^}]*?default\s*=\s*(\d+)`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("terraform/variables.tf: no default for %s", name)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	return def("projector_batch_size"), time.Duration(def("projector_batching_window_seconds")) * time.Second
}

// mappingBatches splits n records, record i arriving at i/rate seconds,
// into the batches an event source mapping forms: [start, end) ranges of
// at most size records, each closed when the next record arrives window or
// more after the batch's first. A window of 0 batches by size alone.
func mappingBatches(n, rate, size int, window time.Duration) [][2]int {
	arrival := func(i int) time.Duration { return time.Duration(i) * time.Second / time.Duration(rate) }
	var out [][2]int
	for first := 0; first < n; {
		end := first + 1
		for end < n && end-first < size && (window <= 0 || arrival(end)-arrival(first) < window) {
			end++
		}
		out = append(out, [2]int{first, end})
		first = end
	}
	return out
}

func TestMappingBatches(t *testing.T) {
	tests := []struct {
		name                string
		n, rate, size       int
		window              time.Duration
		want                [][2]int
		wantBatches, wantLe int // when want is nil: the count, and the largest
	}{
		{name: "fixed size, no window", n: 5, rate: 1, size: 2, want: [][2]int{{0, 2}, {2, 4}, {4, 5}}},
		{name: "1 event/s, 1 s window: one record per batch", n: 3, rate: 1, size: 500, window: time.Second, want: [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{name: "2 events/s, 1 s window", n: 5, rate: 2, size: 500, window: time.Second, want: [][2]int{{0, 2}, {2, 4}, {4, 5}}},
		{name: "100 events/s, 1 s window: 100 per batch", n: 250, rate: 100, size: 500, window: time.Second, want: [][2]int{{0, 100}, {100, 200}, {200, 250}}},
		{name: "size closes before the window", n: 2500, rate: 1000, size: 500, window: time.Second, wantBatches: 5, wantLe: 500},
		{name: "no records", n: 0, rate: 100, size: 500, window: time.Second, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mappingBatches(tt.n, tt.rate, tt.size, tt.window)
			if tt.want != nil || tt.wantBatches == 0 {
				if !slices.Equal(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				return
			}
			if len(got) != tt.wantBatches {
				t.Fatalf("got %d batches, want %d", len(got), tt.wantBatches)
			}
			for _, r := range got {
				if r[1]-r[0] > tt.wantLe {
					t.Fatalf("batch %v larger than %d", r, tt.wantLe)
				}
			}
		})
	}
}

// uniqueEvents drops repeated deliveries (same subject and id), keeping
// the first: the records lambdaRecords makes, in its order.
func uniqueEvents(evs []schema.Event) []schema.Event {
	seen := map[string]bool{}
	var out []schema.Event
	for _, e := range evs {
		if k := e.Subject + "\x00" + e.ID; !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

func countJobs(evs []schema.Event) int {
	jobs := map[string]bool{}
	for _, e := range evs {
		if k, _ := projector.KindFor(e.Type); k == projector.KindJob {
			jobs[e.Subject] = true
		}
	}
	return len(jobs)
}

// streamfoldCost appends evs into fresh tables and projects recs in the
// given batches; it returns the units of both, by table.
func streamfoldCost(b *testing.B, c *awsclient.Clients, evs []schema.Event, recs []events.DynamoDBEventRecord, batches [][2]int) capacity.Snapshot {
	b.Helper()
	m := capacity.NewMeter()
	prefix := meteredPipeline(b, c, evs, recs, batches, m, m)
	return m.Snapshot().TrimTablePrefix(prefix)
}

// seedTables are the other seeds' tables the seed side writes directly.
var seedTables = []string{schema.TableExecutions, schema.TableWorkflows, schema.TableMessages}

// seedCost applies uniq (no duplicates) the seeds' way on fresh tables and
// returns the units, by table: GitHub events through seed003.Writer, the
// other domains' items and sf/ldf metrics rows as an in-memory projector
// computes them, one PutItem each (see BenchmarkCostVsSeed).
func seedCost(b *testing.B, c *awsclient.Clients, uniq []schema.Event) capacity.Snapshot {
	b.Helper()
	ctx := context.Background()
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	prefix := "s" + hex.EncodeToString(rb[:]) + "-"
	tables := seed003.NewTables(prefix)
	names := tables.Names()
	b.Cleanup(func() {
		for _, name := range names {
			_, _ = c.DynamoDB.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	})
	if err := tables.Create(ctx, c.DynamoDB); err != nil {
		b.Fatal(err)
	}
	for _, logical := range seedTables {
		spec, _ := schema.TableSpec(logical)
		if _, err := c.DynamoDB.CreateTable(ctx, spec.CreateTableInput(prefix+logical)); err != nil {
			b.Fatal(err)
		}
		names = append(names, prefix+logical)
	}
	m := capacity.NewMeter()
	ddb := dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(m))
	w := seed003.NewWriter(ddb, tables)
	rec := &recordingStore{MemStore: projector.NewMemStore()}
	proj, err := projector.New(rec, projector.Config{Concurrency: 1})
	if err != nil {
		b.Fatal(err)
	}
	h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
	recs := lambdaRecords(b, uniq)
	now := time.Now().UTC()
	for i, e := range uniq {
		received := now.Add(time.Duration(i) * time.Millisecond)
		if k, _ := schema.KindOf(e.Type); k.Domain == schema.DomainGitHub {
			if err := w.Apply(ctx, e, received); err != nil {
				b.Fatal(err)
			}
			continue
		}
		rec.puts = rec.puts[:0]
		if resp, err := h.Handle(ctx, events.DynamoDBEvent{Records: recs[i : i+1]}); err != nil || len(resp.BatchItemFailures) > 0 {
			b.Fatalf("record %d: %+v, %v", i, resp, err)
		}
		for _, it := range rec.puts {
			if !slices.Contains(seedTables, it.Table) {
				continue
			}
			item := schema.StripInternal(maps.Clone(it.Item))
			if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(prefix + it.Table), Item: item}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return m.Snapshot().TrimTablePrefix(prefix)
}

// recordingStore is a MemStore that records the items and counter rows
// written, for the seed side to write them directly.
type recordingStore struct {
	*projector.MemStore
	puts []projector.Item
}

func (r *recordingStore) Commit(ctx context.Context, tx projector.Tx) error {
	if err := r.MemStore.Commit(ctx, tx); err != nil {
		return err
	}
	for _, row := range tx.Rows {
		r.puts = append(r.puts, projector.Item{Table: row.Table, Item: row.Item})
	}
	return nil
}

func (r *recordingStore) PutItems(ctx context.Context, owner string, version int64, items []projector.Item) error {
	if err := r.MemStore.PutItems(ctx, owner, version, items); err != nil {
		return err
	}
	r.puts = append(r.puts, items...)
	return nil
}

// breakdown lists a snapshot's tables, most units first, per record, with
// each index's share.
func breakdown(s capacity.Snapshot, per float64) string {
	names := slices.SortedFunc(maps.Keys(s.ByTable), func(a, c string) int {
		ua, uc := s.ByTable[a], s.ByTable[c]
		return cmp.Or(cmp.Compare(uc.Write+uc.Read, ua.Write+ua.Read), strings.Compare(a, c))
	})
	var parts []string
	for _, name := range names {
		t := s.ByTable[name]
		p := fmt.Sprintf("%s %.3fW %.3fR", name, t.Write/per, t.Read/per)
		if len(t.Indexes) > 0 {
			var ix []string
			for _, in := range slices.Sorted(maps.Keys(t.Indexes)) {
				ix = append(ix, fmt.Sprintf("%s %.3fW", in, t.Indexes[in].Write/per))
			}
			p += " (" + strings.Join(ix, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

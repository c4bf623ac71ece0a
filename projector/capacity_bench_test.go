package projector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// BenchmarkCapacityDynamoDBLocal measures what users pay: the DynamoDB
// capacity units DynamoDB Local reports (ReturnConsumedCapacity, AWS's
// rules: 1 write unit per KB written, twice that in a transaction, GSI
// writes on top) for appending a workload and projecting it, at batch sizes
// 1, 100 and 1,000, on fresh tables each time. Two workloads, both in
// arrival order (events interleaved across aggregates, simulate's default)
// with one projector writing (Concurrency 1; see splitTx for why)
// with GitHub webhooks of the size GitHub sends (simulate's full payloads):
//
//   - mixed: the default mix of the four domains, reported per event;
//   - jobs: GitHub jobs only (webhooks and runner events), reported per job
//     lifecycle (appended, projected and summarised in its run's row).
//
// STREAMFOLD_BENCH_EVENTS (mixed) and STREAMFOLD_BENCH_JOB_EVENTS (jobs)
// name NDJSON files of events to use instead of generating them (so that
// another version of streamfold can be measured on the very same events);
// STREAMFOLD_BENCH_DUMP writes the generated ones to <dir>/mixed.ndjson and
// <dir>/jobs.ndjson. Needs DynamoDB Local (STREAMFOLD_DYNAMODB_ENDPOINT).
//
//	go test ./projector -run '^$' -bench CapacityDynamoDBLocal -benchtime 1x
func BenchmarkCapacityDynamoDBLocal(b *testing.B) {
	start := testclock.RecentMonday(2)
	// The jobs workload arrives at 1 event/s, so that its 2,000 events
	// span whole job lifecycles (queued to completed, minutes apart) with
	// other jobs' events between them; at the default 100 events/s a
	// 2,000-event slice of the stream would cut most lifecycles short.
	loads := []struct {
		name, env string
		mix       simulate.Mix
		events    int
		rate      int
	}{
		{"mixed", "STREAMFOLD_BENCH_EVENTS", simulate.Mix{}, 3000, 0},
		{"jobs", "STREAMFOLD_BENCH_JOB_EVENTS", simulate.Mix{Jobs: 1}, 2000, 1},
	}
	c := testenv.Clients(b)
	for _, load := range loads {
		evs := benchEvents(b, load.env, simulate.Config{Seed: 21, Events: load.events, Days: 1, Start: start, Mix: load.mix, Rate: load.rate, GitHubPayloads: simulate.PayloadsFull})
		if dir := os.Getenv("STREAMFOLD_BENCH_DUMP"); dir != "" {
			dumpEvents(b, dir+"/"+load.name+".ndjson", evs)
		}
		jobs := map[string]int{}
		for _, e := range evs {
			if k, _ := projector.KindFor(e.Type); k == projector.KindJob {
				jobs[e.Subject]++
			}
		}
		for _, size := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("%s/batch=%d", load.name, size), func(b *testing.B) {
				for range b.N {
					appendM, projM := capacity.NewMeter(), capacity.NewMeter()
					recs := lambdaRecords(b, evs)
					prefix := meteredPipeline(b, c, evs, recs, mappingBatches(len(recs), 1, size, 0), appendM, projM)
					a := appendM.Snapshot().TrimTablePrefix(prefix)
					p := projM.Snapshot().TrimTablePrefix(prefix)
					per := float64(len(recs))
					unit, div := "event", per
					if load.name == "jobs" {
						unit, div = "job", float64(len(jobs))
					}
					b.ReportMetric(a.Write/per, "append-WCU/event")
					b.ReportMetric(p.Write/per, "project-WCU/event")
					b.ReportMetric(p.Read/per, "project-RCU/event")
					total := a.Write + a.Read + p.Write + p.Read
					b.ReportMetric(total/per, "CU/event")
					if unit == "job" {
						b.ReportMetric(total/div, "CU/job")
						b.ReportMetric((a.Write+p.Write)/div, "WCU/job")
						b.ReportMetric((a.Read+p.Read)/div, "RCU/job")
					}
					dollars := (capacity.Price(a.Units) + capacity.Price(p.Units)) / div * 1e6
					b.ReportMetric(dollars, "$/M-"+unit+"s")
					var tables []string
					for t, u := range p.ByTable {
						tables = append(tables, fmt.Sprintf("%s %.3fW %.3fR", t, u.Write/per, u.Read/per))
					}
					sort.Strings(tables)
					b.Logf("%s batch %d: %d records, %d jobs (%.2f events per job); append %.3f WCU/event; projector per event by table: %s",
						load.name, size, len(recs), len(jobs), float64(jobEvents(jobs))/float64(max(len(jobs), 1)), a.Write/per, strings.Join(tables, ", "))
				}
			})
		}
	}
}

// meteredPipeline appends evs into fresh tables through an Appender
// metered by appendM, and projects recs in the given batches ([start, end)
// ranges) through the projector's Lambda handler (Concurrency 1, each
// transaction action sent alone: splitTx) metered by projM. It returns the
// tables' prefix, for Snapshot.TrimTablePrefix.
func meteredPipeline(b *testing.B, c *awsclient.Clients, evs []schema.Event, recs []events.DynamoDBEventRecord, batches [][2]int, appendM, projM *capacity.Meter) string {
	b.Helper()
	n, _ := testenv.Tables(b, c)
	ap, err := ingest.NewAppender(dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(appendM)), ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ap.Append(context.Background(), evs); err != nil {
		b.Fatal(err)
	}
	store, err := projector.NewDynamoStore(splitTx{dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(projM))}, n)
	if err != nil {
		b.Fatal(err)
	}
	proj, err := projector.New(store, projector.Config{Concurrency: 1})
	if err != nil {
		b.Fatal(err)
	}
	h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
	for _, r := range batches {
		resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: recs[r[0]:r[1]]})
		if err != nil || len(resp.BatchItemFailures) > 0 {
			b.Fatalf("batch %v: %+v, %v", r, resp, err)
		}
	}
	return strings.TrimSuffix(n.Table(schema.TableEvents), schema.TableEvents)
}

// splitTx sends each action of a TransactWriteItems as a transaction of
// its own. DynamoDB Local reports the consumed capacity of a transaction
// with several actions on one table as if it held one (checked: 1, 2 and
// 10 puts of 2.5 KB all report 6 units for the table and 6 for its GSI),
// while AWS charges every action (twice a standard write). A one-action
// transaction is reported right, and in a benchmark with one writer and no
// conflicting writes the split applies exactly the same writes, so the
// sum of the parts is what AWS would charge for the whole.
type splitTx struct{ *dynamodb.Client }

func (s splitTx) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out := &dynamodb.TransactWriteItemsOutput{}
	for _, it := range in.TransactItems {
		one := *in
		one.TransactItems = []types.TransactWriteItem{it}
		o, err := s.Client.TransactWriteItems(ctx, &one, optFns...)
		if err != nil {
			return nil, err
		}
		out.ConsumedCapacity = append(out.ConsumedCapacity, o.ConsumedCapacity...)
	}
	return out, nil
}

func jobEvents(jobs map[string]int) int {
	n := 0
	for _, c := range jobs {
		n += c
	}
	return n
}

// benchEvents reads the events from the NDJSON file named by env, or
// generates them.
func benchEvents(b *testing.B, env string, cfg simulate.Config) []schema.Event {
	b.Helper()
	if path := os.Getenv(env); path != "" {
		return readNDJSON(b, path)
	}
	evs, _, err := simulate.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return evs
}

func dumpEvents(b *testing.B, path string, evs []schema.Event) {
	b.Helper()
	var sb strings.Builder
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(line)
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

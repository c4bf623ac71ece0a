package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// BenchmarkAppendDynamoDBLocal compares one-at-a-time appends (Concurrency 1)
// with the Appender's concurrent conditional writes, side by side in one run
// against DynamoDB Local. Each iteration appends 500 new events over 250
// subjects; the metric events/s is what to compare.
//
//	go test ./ingest -run '^$' -bench AppendDynamoDBLocal -benchtime 4x
func BenchmarkAppendDynamoDBLocal(b *testing.B) {
	c := testenv.Clients(b)
	n, _ := testenv.Tables(b, c)
	table := n.Table(schema.TableEvents)
	seq := 0
	for _, conc := range []int{1, 4, 16, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			a, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: table, Concurrency: conc})
			if err != nil {
				b.Fatal(err)
			}
			total := 0
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				events := make([]schema.Event, 0, 500)
				for j := 0; j < 250; j++ {
					seq++
					events = append(events, messageEvent(seq, schema.TypeMessageCreated), messageEvent(seq, schema.TypeMessageFailed))
				}
				b.StartTimer()
				start := time.Now()
				res, err := a.Append(context.Background(), events)
				elapsed += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if got := res.Count(ingest.Accepted); got != len(events) {
					b.Fatalf("accepted %d of %d", got, len(events))
				}
				total += len(events)
			}
			b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
		})
	}
}

// BenchmarkAppendCapacity measures what an append costs in write capacity
// units, as DynamoDB Local reports it (ReturnConsumedCapacity TOTAL on every
// PutItem, AWS's rules: one unit per started KB of the item), with data
// stored as text (the format before compression), zstd-compressed without a
// dictionary and with the trained dictionary (the default), side by side in
// one run on fresh tables. The payload sets:
//
//   - github-examples: the example workflow_job webhooks of testdata/github,
//     minified as GitHub sends them (7.2-8.0 KB);
//   - github-renamed: the same under an owner, repository, sender and ids
//     the dictionary was not trained on (7.4-8.3 KB);
//   - simulated: a simulate workload (seed 7, 2,000 events, the default
//     interleaved order, trimmed webhook bodies), producer redeliveries
//     dropped so that every event is written;
//   - simulated-full: the same with GitHub-size webhook bodies
//     (simulate.PayloadsFull).
//
// Metrics: WCU/event over all events, max-WCU (the dearest event), B/item
// (mean item size) and, for the simulated sets, WCU/webhook over their
// workflow_job events alone.
//
//	go test ./ingest -run '^$' -bench AppendCapacity -benchtime 1x
func BenchmarkAppendCapacity(b *testing.B) {
	c := testenv.Clients(b)
	n, _ := testenv.Tables(b, c)
	table := n.Table(schema.TableEvents)
	sets := []struct {
		name   string
		events []schema.Event
	}{
		{"github-examples", exampleWebhooks(b, nil)},
		{"github-renamed", exampleWebhooks(b, strings.NewReplacer(
			"runs-on/test", "northwind-traders/inventory-api", `"name": "test"`, `"name": "inventory-api"`,
			"runs-on", "northwind-traders", "crohr", "mlopez", "683245122", "591827364", "143185231", "77123456", "6114", "90210"))},
		{"simulated", simulated(b, simulate.PayloadsTrimmed)},
		{"simulated-full", simulated(b, simulate.PayloadsFull)},
	}
	for _, set := range sets {
		for _, enc := range []schema.DataEncoding{schema.DataPlain, schema.DataCompressedNoDictionary, schema.DataCompressed} {
			b.Run(set.name+"/"+enc.String(), func(b *testing.B) {
				rec := &recordingCapacity{PutItemAPI: c.DynamoDB}
				a, err := ingest.NewAppender(rec, ingest.AppenderConfig{Table: table, DataEncoding: enc})
				if err != nil {
					b.Fatal(err)
				}
				var puts []consumedPut
				for i := 0; i < b.N; i++ {
					events := make([]schema.Event, len(set.events))
					for j, e := range set.events {
						e.ID = fmt.Sprintf("%s-%s-%s-%d", e.ID, set.name, enc, i) // a new item every time
						events[j] = e
					}
					res, err := a.Append(context.Background(), events)
					if err != nil {
						b.Fatal(err)
					}
					if got := res.Count(ingest.Accepted); got != len(events) {
						b.Fatalf("accepted %d of %d", got, len(events))
					}
					puts = append(puts, rec.take()...)
				}
				var units, maxUnits, hookUnits float64
				var bytes, hooks int
				for _, p := range puts {
					units += p.units
					maxUnits = max(maxUnits, p.units)
					bytes += p.size
					if strings.HasPrefix(p.eventType, schema.WorkflowJobTypePrefix) {
						hookUnits += p.units
						hooks++
					}
				}
				b.ReportMetric(units/float64(len(puts)), "WCU/event")
				b.ReportMetric(maxUnits, "max-WCU")
				b.ReportMetric(float64(bytes)/float64(len(puts)), "B/item")
				if hooks > 0 && hooks < len(puts) {
					b.ReportMetric(hookUnits/float64(hooks), "WCU/webhook")
				}
			})
		}
	}
}

// exampleWebhooks returns the example webhooks of testdata/github, edited by
// r when it is not nil, minified and decoded as deliveries.
func exampleWebhooks(b *testing.B, r *strings.Replacer) []schema.Event {
	b.Helper()
	files, err := filepath.Glob("testdata/github/*.json")
	if err != nil || len(files) == 0 {
		b.Fatalf("no webhook examples (%v)", err)
	}
	var out []schema.Event
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if r != nil {
			raw = []byte(r.Replace(string(raw)))
		}
		var body bytes.Buffer
		if err := json.Compact(&body, raw); err != nil {
			b.Fatal(err)
		}
		e, err := ingest.FromGitHubDelivery(ingest.GitHubDelivery{
			Headers: map[string]string{"X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": fmt.Sprintf("delivery-%d", i)},
			Body:    body.Bytes(),
		}, time.Now())
		if err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		out = append(out, e)
	}
	return out
}

// simulated returns a 2,000-event simulate workload without its producer
// redeliveries.
func simulated(b *testing.B, payloads simulate.Payloads) []schema.Event {
	b.Helper()
	evs, _, err := simulate.Generate(simulate.Config{Seed: 7, Events: 2000, GitHubPayloads: payloads})
	if err != nil {
		b.Fatal(err)
	}
	seen := map[string]bool{}
	var out []schema.Event
	for _, e := range evs {
		if key := e.Subject + "\x00" + e.ID; !seen[key] {
			seen[key] = true
			out = append(out, e)
		}
	}
	return out
}

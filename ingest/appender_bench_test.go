package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/testenv"
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

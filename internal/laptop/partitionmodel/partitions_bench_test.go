package partitionmodel_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/partitionmodel"
)

// seconds is how much traffic the benchmark simulates:
// STREAMFOLD_PARTITIONS_SECONDS, default 20.
func seconds(tb testing.TB) int {
	tb.Helper()
	s := os.Getenv("STREAMFOLD_PARTITIONS_SECONDS")
	if s == "" {
		return 20
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("STREAMFOLD_PARTITIONS_SECONDS=%q: want a positive number of seconds", s)
	}
	return n
}

// gsiShards is the number of write shards of the "after" figures.
const gsiShards = 4

// BenchmarkPartitions10k runs 20 s (STREAMFOLD_PARTITIONS_SECONDS) of simulate's default mix at 10,000
// events/s through 16 shards and the projector with the deployed batching
// (500 records or 1 s), and reports, per table and index, the most write
// units one partition key value takes in one second (metric
// "before:<table>/<index>-maxWCU/s"), and the same with every index whose
// hottest key took more than partitionmodel.ShardAbove write-sharded into 4
// ("after:..."); it logs the tables of docs/benchmarks.md and the top keys.
//
//	go test ./internal/laptop/partitionmodel -run '^$' -bench Partitions10k -benchtime 1x -v
func BenchmarkPartitions10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		before, after, st, err := partitionmodel.Simulate(context.Background(), partitionmodel.Traffic{Seed: 22, Rate: 10000, Seconds: seconds(b)}, 3, gsiShards)
		if err != nil {
			b.Fatal(err)
		}
		if st.Failed+st.Poison > 0 {
			b.Fatalf("%d subjects failed, %d poison", st.Failed, st.Poison)
		}
		b.Logf("%+v", st)
		for _, run := range []struct {
			name string
			reps []partitionmodel.Report
		}{{"before", before}, {"after", after}} {
			b.Logf("%s:\n%s", run.name, partitionmodel.Format(run.reps))
			var top strings.Builder
			for _, r := range run.reps {
				name := r.Table
				if r.Index != "" {
					name += "/" + r.Index
				}
				b.ReportMetric(r.Max, run.name+":"+name+"-maxWCU/s")
				for _, u := range r.Top {
					top.WriteString(name + "  " + strconv.FormatFloat(u.Units, 'f', 0, 64) + "  " + u.Key + "\n")
				}
			}
			b.Logf("%s, top keys (max WCU/s in one second):\n%s", run.name, top.String())
		}
	}
}

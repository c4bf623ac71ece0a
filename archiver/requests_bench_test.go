package archiver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// BenchmarkBatchRequests counts the S3 requests the archive makes per
// stream batch (in-memory S3, so only the counts matter) and prices them at
// S3 Standard's request prices: PUT, LIST $0.005 per 1,000; GET $0.0004 per
// 1,000; DELETE free. The workload: simulated events over one day in
// arrival order, all four tables interleaved, in batches of the given size.
// The same file runs unchanged against the pre-Iceberg archiver (a
// worktree of 309899c), for a side-by-side comparison.
func BenchmarkBatchRequests(b *testing.B) {
	recs := simRecords(b, 42, 20000, 1)
	for _, size := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			var calls map[string]int
			var n int
			for i := 0; b.Loop(); i++ {
				mem := s3mem.New("bench")
				a := newArchive(b, mem, archiver.Config{Bucket: "bench", Prefix: fmt.Sprintf("p%d-%d", size, i)})
				n = 0
				for _, batch := range batches(recs, size) {
					if _, err := a.WriteBatch(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
					n++
				}
				calls = mem.Calls()
			}
			put, get, list := float64(calls["PutObject"]), float64(calls["GetObject"]), float64(calls["ListObjectsV2"])
			b.ReportMetric(put/float64(n), "PUT/batch")
			b.ReportMetric(get/float64(n), "GET/batch")
			b.ReportMetric(list/float64(n), "LIST/batch")
			dollars := (put+list)*0.005/1000 + get*0.0004/1000
			b.ReportMetric(dollars/float64(len(recs))*1e6, "$/M-events")
		})
	}
}

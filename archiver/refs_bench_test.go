package archiver_test

import (
	"context"
	"testing"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/schema"
)

// BenchmarkEventRefs compares what reconcile reads of one table's day,
// EventRefs (the identity, recorded time and content hash of each row,
// decoding only the columns those need), with reading the same files'
// full records (Read, as Scan does), without and with computing their
// content hashes, on in-memory S3: rows per second of CPU-bound decoding,
// without network time. The content hash (canonical JSON of the data) is
// most of EventRefs' time.
func BenchmarkEventRefs(b *testing.B) {
	ctx := context.Background()
	mem := s3mem.New("bench")
	a := newArchive(b, mem, archiver.Config{Bucket: "bench", Prefix: "refs"})
	recs, date := dayOf(simRecords(b, 27, 40000, 1), archiver.TableGitHubJobs)
	for _, batch := range batches(recs, 2500) {
		if _, err := a.WriteBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	keys, err := a.Objects(ctx, archiver.TableGitHubJobs, date)
	if err != nil {
		b.Fatal(err)
	}
	rowsPerSec := func(b *testing.B, rows int) {
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("EventRefs", func(b *testing.B) {
		rows := 0
		for b.Loop() {
			err := a.EventRefs(ctx, archiver.TableGitHubJobs, []string{date}, func(archiver.EventRef) error {
				rows++
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if rows != len(recs)*b.N {
			b.Fatalf("%d rows, want %d", rows, len(recs)*b.N)
		}
		rowsPerSec(b, rows)
	})
	for _, hash := range []bool{false, true} {
		name := "Read"
		if hash {
			name = "Read+ContentHash"
		}
		b.Run(name, func(b *testing.B) {
			rows := 0
			for b.Loop() {
				for _, k := range keys {
					rs, err := a.Read(ctx, k)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range rs {
						if hash {
							if _, err := schema.ContentHash(r.Event); err != nil {
								b.Fatal(err)
							}
						}
						rows++
					}
				}
			}
			if rows != len(recs)*b.N {
				b.Fatalf("%d rows, want %d", rows, len(recs)*b.N)
			}
			rowsPerSec(b, rows)
		})
	}
}

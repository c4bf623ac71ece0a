package archiver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/ingest/simulate"
)

// encodeInput is one workload's records: in stream order, by table as
// read back from files (no decoded payload: compaction and migration decode
// each event on write), and by table as a stream batch reaches the encoder
// (each record carrying the payload the handler decoded to validate it).
type encodeInput struct {
	recs  []archiver.Record
	byTbl map[string][]archiver.Record
	batch map[string][]archiver.Record
}

func newEncodeInput(recs []archiver.Record) encodeInput {
	in := encodeInput{recs: recs, byTbl: byTable(recs), batch: map[string][]archiver.Record{}}
	for tb, rs := range in.byTbl {
		for _, r := range rs {
			in.batch[tb] = append(in.batch[tb], archiver.WithPayload(r))
		}
	}
	return in
}

// encodeFormats are the encodings BenchmarkEncode compares, each turning
// the same records into bytes: Parquet (one file per table, as the archive
// stores them), NDJSON of the event envelopes, and that NDJSON gzipped.
// "parquet-batch" is the archiver's write path for a stream batch (records
// as DecodeRecord returns them); "parquet" and "parquet-zstd-better" encode
// records without a decoded payload, as compaction does (zstd-better is
// compaction's level).
var encodeFormats = []struct {
	name string
	enc  func(in encodeInput) (int, error)
}{
	{"parquet-batch", func(in encodeInput) (int, error) {
		return encodeParquet(in.batch, archiver.EncodeOptions{})
	}},
	{"parquet", func(in encodeInput) (int, error) {
		return encodeParquet(in.byTbl, archiver.EncodeOptions{})
	}},
	{"parquet-zstd-better", func(in encodeInput) (int, error) {
		return encodeParquet(in.byTbl, archiver.EncodeOptions{Compression: "zstd-better"})
	}},
	{"ndjson", func(in encodeInput) (int, error) {
		var buf bytes.Buffer
		err := writeNDJSON(&buf, in.recs)
		return buf.Len(), err
	}},
	{"ndjson-gzip", func(in encodeInput) (int, error) { return encodeGzipNDJSON(in.recs, nil) }},
}

// processCPU is the process's CPU time (user and system): on this shared
// machine, rows per CPU second (cpu-rows/s) is the rate an idle core would
// give, which the wall clock only shows when no other process runs (the
// encoder is one goroutine; the garbage collector's time counts too).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func encodeParquet(byTbl map[string][]archiver.Record, opts archiver.EncodeOptions) (int, error) {
	n := 0
	for tb, rs := range byTbl {
		var buf bytes.Buffer
		if err := archiver.Encode(&buf, tb, rs, opts); err != nil {
			return 0, err
		}
		n += buf.Len()
	}
	return n, nil
}

func encodeGzipNDJSON(recs []archiver.Record, _ map[string][]archiver.Record) (int, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := writeNDJSON(zw, recs); err != nil {
		return 0, err
	}
	err := zw.Close()
	return buf.Len(), err
}

func writeNDJSON(w interface{ Write([]byte) (int, error) }, recs []archiver.Record) error {
	enc := json.NewEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i].Event); err != nil {
			return err
		}
	}
	return nil
}

// encodeWorkloads are BenchmarkEncode's workloads: 20,000 simulated events
// of one day, with the default mix, once with trimmed GitHub webhook bodies
// (simulate's default) and once with the bodies GitHub sends.
var encodeWorkloads = []struct {
	name string
	cfg  simulate.Config
}{
	{"mix", simulate.Config{Seed: 42, Events: 20000, Days: 1}},
	{"full", simulate.Config{Seed: 42, Events: 20000, Days: 1, GitHubPayloads: simulate.PayloadsFull}},
}

// BenchmarkEncode encodes each workload as Parquet (zstd, as batches are
// written, and zstd-better, as compaction writes), NDJSON and gzip NDJSON,
// reporting rows/s and bytes/event of each. The Parquet formats also report
// their size relative to the others (bytes-vs-ndjson, bytes-vs-gzip-ndjson:
// deterministic) and, because the machine's speed varies from minute to
// minute, their speed relative to gzip NDJSON measured in the same
// iterations: each iteration encodes gzip NDJSON right after Parquet
// (gzip-ndjson-rows/s, rows-vs-gzip-ndjson).
//
//	go test ./archiver -run '^$' -bench BenchmarkEncode -benchtime 5x
func BenchmarkEncode(b *testing.B) {
	for _, wl := range encodeWorkloads {
		b.Run(wl.name, func(b *testing.B) {
			recs := simRecordsCfg(b, wl.cfg)
			in := newEncodeInput(recs)
			sizes := map[string]int{}
			for _, f := range encodeFormats {
				n, err := f.enc(in)
				if err != nil {
					b.Fatal(err)
				}
				sizes[f.name] = n
			}
			for _, f := range encodeFormats {
				b.Run(f.name, func(b *testing.B) {
					parquet := strings.HasPrefix(f.name, "parquet")
					var own, gz, cpu time.Duration
					for b.Loop() {
						start, cpu0 := time.Now(), processCPU(b)
						if _, err := f.enc(in); err != nil {
							b.Fatal(err)
						}
						own += time.Since(start)
						cpu += processCPU(b) - cpu0
						if parquet {
							b.StopTimer() // ns/op is Parquet's alone
							start = time.Now()
							if _, err := encodeGzipNDJSON(recs, nil); err != nil {
								b.Fatal(err)
							}
							gz += time.Since(start)
							b.StartTimer()
						}
					}
					rows := float64(len(recs)) * float64(b.N)
					b.ReportMetric(rows/own.Seconds(), "rows/s")
					b.ReportMetric(rows/cpu.Seconds(), "cpu-rows/s")
					b.ReportMetric(float64(sizes[f.name])/float64(len(recs)), "bytes/event")
					if parquet {
						b.ReportMetric(float64(sizes[f.name])/float64(sizes["ndjson"]), "bytes-vs-ndjson")
						b.ReportMetric(float64(sizes[f.name])/float64(sizes["ndjson-gzip"]), "bytes-vs-gzip-ndjson")
						b.ReportMetric(rows/gz.Seconds(), "gzip-ndjson-rows/s")
						b.ReportMetric(gz.Seconds()/own.Seconds(), "rows-vs-gzip-ndjson")
					}
				})
			}
		})
	}
}

// BenchmarkCompaction archives a simulated workload (20,000 events over 3
// days) in stream batches of 100 records, as the Lambda would, then
// compacts every partition; it reports the objects per table and day
// before and after. It uses MinIO when STREAMFOLD_S3_ENDPOINT is set, else
// the in-memory S3 (which passes the same conformance suite).
//
//	go test ./archiver -run '^$' -bench BenchmarkCompaction -benchtime 1x
func BenchmarkCompaction(b *testing.B) {
	recs := simRecords(b, 42, 20000, 3)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		var api archiver.S3API
		bucket := "bench"
		if os.Getenv("STREAMFOLD_S3_ENDPOINT") != "" {
			c, bk := newBucket(b)
			api, bucket = c.S3, bk
		} else {
			api = s3mem.New(bucket)
		}
		a := newArchive(b, api, archiver.Config{Bucket: bucket, Prefix: "bench"})
		for _, batch := range batches(recs, 100) {
			if _, err := a.WriteBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		partitions, before, after := 0, 0, 0
		start := time.Now()
		for _, tb := range archiver.Tables() {
			dates, err := a.Partitions(ctx, tb.Name)
			if err != nil {
				b.Fatal(err)
			}
			for _, d := range dates {
				st, err := a.Compact(ctx, tb.Name, d, archiver.CompactOptions{MinAge: -1})
				if err != nil {
					b.Fatal(err)
				}
				partitions++
				before += st.ObjectsBefore
				after += st.ObjectsAfter
			}
		}
		compactTime := time.Since(start)
		b.ReportMetric(float64(before)/float64(partitions), "objects/partition-before")
		b.ReportMetric(float64(after)/float64(partitions), "objects/partition-after")
		b.ReportMetric(float64(partitions), "partitions")
		b.ReportMetric(compactTime.Seconds(), "compact-s")
	}
}

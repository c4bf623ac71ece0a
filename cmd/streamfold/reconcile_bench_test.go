package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// S3 Standard's request prices in us-east-1: GET $0.0004 per 1,000; PUT,
// LIST $0.005 per 1,000 (as archiver/requests_bench_test.go).
const (
	s3GetPrice  = 0.0004 / 1000
	s3ListPrice = 0.005 / 1000
)

// benchEvents is BenchmarkReconcile's window: STREAMFOLD_RECONCILE_BENCH_EVENTS,
// default 20,000.
func benchEvents(b *testing.B) int {
	v := os.Getenv("STREAMFOLD_RECONCILE_BENCH_EVENTS")
	if v == "" {
		return 20000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("STREAMFOLD_RECONCILE_BENCH_EVENTS=%q: want a positive number of events", v)
	}
	return n
}

// plainScan reads every item of table with segments parallel,
// eventually consistent Scan segments (ReturnConsumedCapacity on, as
// reconcile's) and returns how many it read.
func plainScan(ctx context.Context, api *dynamodb.Client, table string, segments int) (int64, error) {
	var items atomic.Int64
	errs := make([]error, segments)
	var wg sync.WaitGroup
	for seg := range segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := dynamodb.NewScanPaginator(api, &dynamodb.ScanInput{
				TableName: aws.String(table), Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)),
				ConsistentRead: aws.Bool(false), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					errs[seg] = err
					return
				}
				items.Add(int64(len(page.Items)))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return items.Load(), nil
}

// BenchmarkReconcile measures, side by side on one fresh event table of
// STREAMFOLD_RECONCILE_BENCH_EVENTS events (default 20,000) that the
// consumers (streamfold run, its default archive batching) have fully
// projected and archived:
//
//   - scan: a plain parallel Scan of the table (4 segments, eventually
//     consistent), metered like every DynamoDB call (internal/capacity);
//   - reconcile: reconcile.Reconcile over the same events (4 segments),
//     its DynamoDB calls through the same kind of meter (the Scan and the
//     projector's state reads), its archive's S3 requests counted.
//
// Custom metrics: events/s; read units per million events (runits/Mevent);
// reconcile's S3 GET and LIST requests per million events; its dollars
// per million events (DynamoDB on demand, internal/capacity's prices, and
// S3 Standard's request prices); x-scan-units and x-scan-time, reconcile's
// units and time over the plain scan's. Run it with -benchtime 1x:
//
//	go test ./cmd/streamfold -run '^$' -bench Reconcile -benchtime 1x
func BenchmarkReconcile(b *testing.B) {
	size := benchEvents(b)
	const segments = 4
	ctx := context.Background()
	c := testenv.S3Clients(b)
	n, _ := testenv.Tables(b, c)
	bucket := testenv.Bucket(b, c, n.BucketName())
	env := localEnv(n)
	from := time.Now().UTC().Add(-time.Second)
	_, appended := appendSimulated(b, c, n, 81, size, 3)
	to := time.Now().UTC().Add(time.Second)
	if code, out, errOut := runCLI(b, env, "", "run", "--until-caught-up", "--quiet"); code != exitOK {
		b.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	events := float64(appended.Count(ingest.Accepted))
	b.Logf("%d events appended and consumed", int(events))

	var scanUnits, scanSeconds float64
	b.Run("scan", func(b *testing.B) {
		meter := capacity.NewMeter()
		ddb := c.MeteredDynamoDB(meter)
		b.ResetTimer()
		for range b.N {
			got, err := plainScan(ctx, ddb, n.Table(schema.TableEvents), segments)
			if err != nil {
				b.Fatal(err)
			}
			if float64(got) != events {
				b.Fatalf("scanned %d items, want %.0f", got, events)
			}
		}
		b.StopTimer()
		scanSeconds = b.Elapsed().Seconds() / float64(b.N)
		scanUnits = meter.Snapshot().Units.Read / float64(b.N)
		b.ReportMetric(events/scanSeconds, "events/s")
		b.ReportMetric(scanUnits/events*1e6, "runits/Mevent")
		b.ReportMetric(capacity.Price(capacity.Units{Read: scanUnits})/events*1e6, "$/Mevent")
	})

	b.Run("reconcile", func(b *testing.B) {
		meter := capacity.NewMeter()
		ddb := c.MeteredDynamoDB(meter)
		store, err := projector.NewDynamoStore(ddb, n)
		if err != nil {
			b.Fatal(err)
		}
		proj, err := projector.New(store, projector.Config{})
		if err != nil {
			b.Fatal(err)
		}
		a, err := archiver.New(c.S3, archiver.Config{Bucket: bucket, Prefix: "archive", Catalog: testCatalogURI(n), Namespace: conn.ArchiveNamespace(bucket, n)})
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		cfg := reconcile.Config{DynamoDB: ddb, Naming: n, Projector: proj, Meter: meter, Archive: a,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		var units float64
		req0 := a.Requests()
		b.ResetTimer()
		for range b.N {
			rep, err := reconcile.Reconcile(ctx, cfg, reconcile.Options{From: from, To: to, Segments: segments, TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			if float64(rep.Events) != events || rep.Gaps() != 0 {
				b.Fatalf("reconcile: %d events (want %.0f), %d gaps: %+v", rep.Events, events, rep.Gaps(), rep.Rows)
			}
			units += rep.ReadUnits + rep.WriteUnits
		}
		b.StopTimer()
		perRun := float64(b.N)
		seconds := b.Elapsed().Seconds() / perRun
		units /= perRun
		req := a.Requests().Sub(req0)
		gets, lists := float64(req.Get)/perRun, float64(req.List)/perRun
		dollars := capacity.Price(capacity.Units{Read: units}) + gets*s3GetPrice + lists*s3ListPrice
		b.ReportMetric(events/seconds, "events/s")
		b.ReportMetric(units/events*1e6, "runits/Mevent")
		b.ReportMetric(gets/events*1e6, "s3get/Mevent")
		b.ReportMetric(lists/events*1e6, "s3list/Mevent")
		b.ReportMetric(dollars/events*1e6, "$/Mevent")
		if scanUnits > 0 {
			b.ReportMetric(units/scanUnits, "x-scan-units")
			b.ReportMetric(seconds/scanSeconds, "x-scan-time")
		}
	})
}

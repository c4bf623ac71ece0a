package archiver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// chaos wraps the archiver's handler the way the event source mapping is
// tested: of the calls that wrote their batch, every fourth (from the
// first) is failed with an error afterwards (the runner bisects the batch
// and re-sends both halves) and every fourth from the third reports its
// first record as failed (the whole batch comes again); and the S3 client
// under the archive fails one PutObject in 31.
type chaos struct {
	h     streamrun.Handler
	mu    sync.Mutex
	calls int // calls that wrote their batch
	stats map[string]int
}

func (c *chaos) handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp, err := c.h(ctx, ev)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || len(resp.BatchItemFailures) > 0 {
		c.stats["failed (S3)"]++
		return resp, err
	}
	c.calls++ // successful writes
	switch {
	case c.calls%4 == 1 && len(ev.Records) > 1:
		c.stats["written, then bisected"]++
		return events.DynamoDBEventResponse{}, errors.New("injected error after the write")
	case c.calls%4 == 3:
		c.stats["written, then re-sent"]++
		return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[0].Change.SequenceNumber}}}, nil
	}
	return resp, nil
}

// TestIntegrationStreamToArchive drives the real path: a simulated
// workload appended to DynamoDB Local, its stream consumed by
// internal/laptop/streamrun into the archiver on MinIO, under injected S3
// failures, bisections and re-sent batches; a poison item and a deletion
// in the stream. The archive then holds every stored event exactly once,
// as stored; the poison item is under errors/; then every partition is
// compacted and still holds every event once, in fewer objects.
func TestIntegrationStreamToArchive(t *testing.T) {
	ctx := context.Background()
	c, bucket := newBucket(t)
	n, res := testenv.Tables(t, c)
	stream := testenv.EventStream(t, res)
	// GitHub-size webhook bodies: their items hold data compressed (B), and
	// the archive must still hold the original JSON byte for byte.
	evs, _, err := simulate.Generate(simulate.Config{Seed: 31, Events: 800, Days: 2, GitHubPayloads: simulate.PayloadsFull})
	if err != nil {
		t.Fatal(err)
	}
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents), Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := app.Append(ctx, evs); err != nil || r.Count(ingest.Rejected) > 0 {
		t.Fatalf("append: %v %v", err, r.Errors)
	}
	if n := compressedItems(t, c, n.Table(schema.TableEvents)); n < 50 {
		t.Fatalf("only %d items hold data compressed; the test needs real-size webhooks", n)
	}
	// A poison item (data that fails validation) and a deletion.
	poison := map[string]types.AttributeValue{
		"subject": &types.AttributeValueMemberS{Value: "messages/x"}, "id": &types.AttributeValueMemberS{Value: "poison-1"},
		"source": &types.AttributeValueMemberS{Value: "test"}, "type": &types.AttributeValueMemberS{Value: schema.TypeMessageFailed},
		"time": &types.AttributeValueMemberS{Value: "2026-01-05T10:00:00Z"}, "data": &types.AttributeValueMemberS{Value: `{"message_id":"x"}`},
	}
	tbl := n.Table(schema.TableEvents)
	if _, err := c.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: poison}); err != nil {
		t.Fatal(err)
	}
	deleted := evs[10]
	if _, err := c.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: map[string]types.AttributeValue{
		"subject": &types.AttributeValueMemberS{Value: deleted.Subject}, "id": &types.AttributeValueMemberS{Value: deleted.ID}}}); err != nil {
		t.Fatal(err)
	}

	f := newFaultS3(c.S3)
	var puts int
	var pmu sync.Mutex
	f.setFail(func(op, key string) bool {
		pmu.Lock()
		defer pmu.Unlock()
		puts++
		return op == "PutObject" && puts%31 == 0
	})
	a := newArchive(t, f, archiver.Config{Bucket: bucket, Prefix: "events"})
	ch := &chaos{h: archiver.NewHandler(a, quietLog()).Handle, stats: map[string]int{}}
	var poisoned []string
	r, err := streamrun.New(c.Streams, streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints)), ch.handle, streamrun.Config{
		StreamARN: stream, Consumer: "archiver", BatchSize: 100, UntilCaughtUp: true, BisectOnError: true,
		MaxRetryAttempts: 100, PollInterval: 50 * time.Millisecond, Logger: quietLog(),
		OnPoison: func(_ context.Context, rec events.DynamoDBEventRecord, cause error) error {
			poisoned = append(poisoned, rec.Change.SequenceNumber+": "+cause.Error())
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx) // no deadline of its own: go test -timeout bounds it (load must not fail it)
	defer cancel()
	if err := r.Run(rctx); err != nil {
		t.Fatal(err)
	}
	if len(poisoned) > 0 {
		t.Fatalf("records exhausted their retries: %v", poisoned)
	}
	st := r.Stats()
	t.Logf("stream: %d batches, %d records handed over, %d retries, %d bisections; injected: %v", st.Batches, st.Records, st.Retries, st.Bisections, ch.stats)
	if ch.stats["written, then bisected"] == 0 || ch.stats["written, then re-sent"] == 0 || ch.stats["failed (S3)"] == 0 {
		t.Fatalf("the injections did not all happen: %v", ch.stats)
	}
	f.heal()

	// What the archive must hold: every event appended (the deleted one
	// too: the archive keeps history), as the table stored it: an agent
	// execution's input and output hashed by the Appender's payload policy.
	want := map[string]schema.Event{}
	for _, e := range evs {
		ingest.ApplyPayloadPolicy(&e, ingest.DefaultPayloadPolicy)
		want[e.Subject+"\x00"+e.ID] = e
	}
	reader := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "events"})
	checkEvents := func(stage string) {
		t.Helper()
		got := map[string]int{}
		err := reader.Events(ctx, func(e schema.Event) error {
			k := e.Subject + "\x00" + e.ID
			got[k]++
			w, ok := want[k]
			switch {
			case !ok:
				t.Errorf("%s: archived an event that was never appended: %s", stage, k)
			case string(w.Data) != string(e.Data) || !w.Time.Equal(e.Time) || w.Type != e.Type || w.Source != e.Source || e.RecordedAt == nil:
				t.Errorf("%s: event %s differs from what was appended", stage, k)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if got[k] != 1 {
				t.Fatalf("%s: event %q archived %d times", stage, k, got[k])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d events archived, want %d", stage, len(got), len(want))
		}
	}
	checkEvents("after the stream")

	errs, err := reader.Errors(ctx)
	if err != nil || len(errs) != 1 || !strings.Contains(errs[0].Reason, "data.message_id: must be a UUID") {
		t.Fatalf("errors/: %+v %v; want the poison item with its reason", errs, err)
	}

	before, after := 0, 0
	for _, tb := range archiver.Tables() {
		dates, err := reader.Partitions(ctx, tb.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dates {
			st, err := reader.Compact(ctx, tb.Name, d, archiver.CompactOptions{MinAge: -1})
			if err != nil {
				t.Fatal(err)
			}
			before += st.ObjectsBefore
			after += st.ObjectsAfter
		}
	}
	t.Logf("objects: %d before compaction, %d after", before, after)
	if after >= before {
		t.Fatalf("compaction did not reduce the objects: %d -> %d", before, after)
	}
	checkEvents("after compaction")
}

// TestIntegrationCompactCrashSafety runs the crash-after-each-step test of
// compaction against MinIO.
func TestIntegrationCompactCrashSafety(t *testing.T) {
	c, bucket := newBucket(t)
	recs, date := dayOf(simRecords(t, 8, 400, 1), archiver.TableGitHubJobs)
	testCompactCrashes(t, c.S3, bucket, recs, archiver.TableGitHubJobs, date, len(recs)/6+1)
}

// compressedItems counts the items of the event table whose data is stored
// compressed.
func compressedItems(t *testing.T, c *awsclient.Clients, table string) int {
	t.Helper()
	n := 0
	p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(table),
		FilterExpression: aws.String("attribute_exists(#e)"), ExpressionAttributeNames: map[string]string{"#e": schema.AttrDataEncoding}, Select: types.SelectCount})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += int(page.Count)
	}
	return n
}

// TestIntegrationConcurrentCommitters runs, on MinIO and one SQLite
// catalog, four archives (four catalog connections, as four archiver
// containers would have) that each archive their own shard of batches into
// the same tables and days at once, redelivering some batches, while a
// fifth compacts those days over and over (files older than 5 s). Optimistic commits lose races
// and retry; in the end each event is archived exactly once.
func TestIntegrationConcurrentCommitters(t *testing.T) {
	ctx := context.Background()
	c, bucket := newBucket(t)
	cfg := archiver.Config{Bucket: bucket, Prefix: "conc"}
	recs := simRecords(t, 77, 1600, 1)
	const writers = 4
	shards := make([][]archiver.Record, writers)
	for i, r := range recs {
		shards[i%writers] = append(shards[i%writers], r)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	done := make(chan struct{})
	var slow atomic.Int64
	for w := 0; w < writers; w++ {
		a := newArchive(t, c.S3, cfg)
		wg.Add(1)
		go func(w int, a *archiver.Archive) {
			defer wg.Done()
			for i, b := range batches(shards[w], 40) {
				start := time.Now()
				if _, err := a.WriteBatch(ctx, b); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %w", w, i, err)
					return
				}
				// A redelivery: the checkpoint was lost. Only when the batch
				// committed well within the compactor's MinAge of writing
				// its files: that is the invariant MinAge stands for (no
				// redelivery after it), which a commit slowed by contention
				// past it would break in this scaled-down test.
				if took := time.Since(start); took >= 2*time.Second {
					slow.Add(1)
				} else if i%3 == 0 {
					if st, err := a.WriteBatch(ctx, b); err != nil || st.Skipped != len(b) {
						errs <- fmt.Errorf("writer %d redelivery %d: %+v %v", w, i, st, err)
						return
					}
				}
			}
		}(w, a)
	}
	comp := newArchive(t, c.S3, cfg)
	compactions := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			default:
			}
			for _, table := range []string{archiver.TableGitHubJobs, archiver.TableMessages} {
				dates, err := comp.Partitions(ctx, table)
				if err != nil {
					errs <- err
					return
				}
				for _, d := range dates {
					// Only files older than the writers' redeliveries (which
					// follow their writes at once): the MinAge invariant, that
					// compaction never takes a file a batch may still
					// redeliver, scaled down from the stream's 24 hours.
					st, err := comp.Compact(ctx, table, d, archiver.CompactOptions{MinAge: 5 * time.Second})
					if err != nil && !errors.Is(err, archiver.ErrCompactionConflict) {
						errs <- fmt.Errorf("compact %s %s: %w", table, d, err)
						return
					}
					compactions += min(st.Outputs, 1)
				}
			}
			if stopped(&wg) {
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if compactions == 0 {
		t.Log("no compaction committed while the writers ran (timing); the final state is still checked")
	}
	t.Logf("%d compactions committed while %d writers ran; %d batches took 2 s or more to commit (not redelivered)", compactions, writers, slow.Load())
	exactlyOnce(t, comp, recs)
}

// stopped reports whether wg's count is zero, without blocking.
func stopped(wg *sync.WaitGroup) bool {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-time.After(10 * time.Millisecond):
		return false
	}
}

package queries_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// The acceptance test of issue 4's archive: a simulate workload appended to
// DynamoDB Local, its stream consumed twice through internal/laptop/streamrun (the
// projector into its tables, the archiver into MinIO, with injected
// redeliveries of batches the archiver had already written), then DuckDB,
// an independent reader, over exactly the data files of the Iceberg tables'
// current snapshots.

// redeliver wraps the archiver's handler: on the calls named in bisect it
// lets the batch be written, then fails it (the runner bisects it and
// re-sends both halves); on the calls named in resend it lets the batch be
// written, then reports its first record as failed (the whole batch comes
// again, as Lambda re-sends it).
type redeliver struct {
	h              streamrun.Handler
	bisect, resend map[int]bool

	mu                 sync.Mutex
	calls              int
	bisected, resent   int
	recordsRedelivered int
}

var errInjected = errors.New("injected failure after the batch was written")

func (r *redeliver) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	r.mu.Lock()
	r.calls++
	call := r.calls
	r.mu.Unlock()
	resp, err := r.h(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) > 0 || len(ev.Records) < 2 {
		return resp, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.bisect[call]:
		r.bisected++
		r.recordsRedelivered += len(ev.Records)
		return events.DynamoDBEventResponse{}, errInjected
	case r.resend[call]:
		r.resent++
		r.recordsRedelivered += len(ev.Records)
		return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[0].Change.SequenceNumber}}}, nil
	}
	return resp, nil
}

// consume reads the event stream until caught up with one consumer.
func consume(t *testing.T, c *awsclient.Clients, n schema.Naming, stream, consumer string, h streamrun.Handler, dl *projector.DeadLetters, batch int, bisect bool) streamrun.Stats {
	t.Helper()
	r, err := streamrun.New(c.Streams, streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints)), h, streamrun.Config{
		StreamARN: stream, Consumer: consumer, BatchSize: batch, UntilCaughtUp: true, BisectOnError: bisect,
		PollInterval: 50 * time.Millisecond, Logger: testenv.QuietLog(), OnPoison: dl.OnPoison(consumer),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background()) // no deadline of its own: go test -timeout bounds it (load must not fail it)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatalf("%s: %v", consumer, err)
	}
	st := r.Stats()
	if st.Poisoned > 0 {
		t.Fatalf("%s: %d records poisoned", consumer, st.Poisoned)
	}
	return st
}

func scanTable(t *testing.T, c *awsclient.Clients, name string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	pg := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan %s: %v", name, err)
		}
		out = append(out, page.Items...)
	}
	return out
}

// storedEvents returns the (subject, id) pairs of the event table by
// archive table: what the archive must hold, exactly.
func storedEvents(t *testing.T, c *awsclient.Clients, n schema.Naming) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, it := range scanTable(t, c, n.Table(schema.TableEvents)) {
		e, err := schema.EventFromItem(it)
		if err != nil {
			t.Fatal(err)
		}
		table, ok := archiver.TableFor(e.Type)
		if !ok {
			t.Fatalf("no archive table for stored event type %s", e.Type)
		}
		if out[table] == nil {
			out[table] = map[string]bool{}
		}
		out[table][e.Subject+" "+e.ID] = true
	}
	return out
}

func getObject(t *testing.T, c *awsclient.Clients, bucket, key string) []byte {
	t.Helper()
	obj, err := c.S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
	}
	defer obj.Body.Close()
	body, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// download fetches exactly the data files of the tables' current snapshots
// (what Athena reads of an Iceberg table): the files Archive.Objects lists
// per partition, checked against the files Iceberg scan planning of the
// whole table returns (Archive.Table), each in its day's directory. It
// writes them into dir in the archive's layout (prefix removed:
// <table>/data/event_date=D/<file>.parquet) and returns them by table, and
// the number of files per table and day.
func download(t *testing.T, c *awsclient.Clients, a *archiver.Archive, bucket, prefix, dir string) (map[string][]string, map[string]int) {
	t.Helper()
	ctx := context.Background()
	perDay := map[string]int{}
	for _, td := range archiver.Tables() {
		planned := map[string]bool{}
		for _, f := range plannedFiles(t, a, td.Name, nil) {
			planned[f.key] = true
		}
		dates, err := a.Partitions(ctx, td.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dates {
			keys, err := a.Objects(ctx, td.Name, d)
			if err != nil {
				t.Fatal(err)
			}
			perDay[td.Name+"/"+d] = len(keys)
			for _, k := range keys {
				if !planned[k] {
					t.Fatalf("%s %s: Archive.Objects lists %s, which Iceberg scan planning of the table does not return", td.Name, d, k)
				}
				delete(planned, k)
				rel, ok := strings.CutPrefix(k, prefix+"/")
				if !ok || !strings.HasPrefix(rel, td.Name+"/data/event_date="+d+"/") {
					t.Fatalf("listed key %s is not under %s/%s/data/event_date=%s/", k, prefix, td.Name, d)
				}
				body := getObject(t, c, bucket, k)
				path := filepath.Join(dir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(planned) > 0 {
			t.Fatalf("%s: Iceberg scan planning returns files no partition's Archive.Objects lists: %v", td.Name, planned)
		}
	}
	return localFiles(t, dir), perDay
}

// checkExactlyOnce asserts that the DuckDB views hold exactly the stored
// events: the same count per table, no (subject, event_id) twice, none
// missing, none extra.
func checkExactlyOnce(t *testing.T, db *sql.DB, stored map[string]map[string]bool) {
	t.Helper()
	for _, td := range archiver.Tables() {
		want := stored[td.Name]
		var rows, distinct int
		if err := db.QueryRow("SELECT count(*), count(DISTINCT (subject, event_id)) FROM "+td.Name).Scan(&rows, &distinct); err != nil {
			t.Fatal(err)
		}
		if rows != len(want) || distinct != rows {
			t.Errorf("%s: DuckDB reads %d rows (%d distinct subject/event_id pairs), the event table holds %d events", td.Name, rows, distinct, len(want))
		}
		q, err := db.Query("SELECT subject, event_id FROM " + td.Name)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for q.Next() {
			var s, id string
			if err := q.Scan(&s, &id); err != nil {
				t.Fatal(err)
			}
			got[s+" "+id] = true
		}
		q.Close()
		if missing, extra := diffKeys(got, want); len(missing) > 0 || len(extra) > 0 {
			t.Errorf("%s: %d stored events missing from the archive (e.g. %.3q), %d archived events not stored (e.g. %.3q)", td.Name, len(missing), missing, len(extra), extra)
		}
	}
}

func TestArchiveAcceptance(t *testing.T) {
	c := testenv.S3Clients(t)
	n, res := testenv.Tables(t, c)
	stream := testenv.EventStream(t, res)
	ctx := context.Background()
	began := time.Now()

	// A bucket of its own.
	bucket, prefix := testenv.Bucket(t, c, ""), "archive/v1"

	// A simulate workload over the last four days (projection TTLs lie
	// ahead), its producer redeliveries included: the appender drops them.
	start := testclock.RecentMonday(3)
	evs, st, err := simulate.Generate(simulate.Config{Seed: 20261122, Events: 3000, Days: 4, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents), Concurrency: 32})
	if err != nil {
		t.Fatal(err)
	}
	var accepted, dups int
	for i := 0; i < len(evs); i += 1000 {
		r, err := app.Append(ctx, evs[i:min(i+1000, len(evs))])
		if err != nil || r.Count(ingest.Rejected) > 0 || r.Count(ingest.Failed) > 0 {
			t.Fatalf("append: %v (rejected %d, failed %d: %v)", err, r.Count(ingest.Rejected), r.Count(ingest.Failed), r.Errors)
		}
		accepted += r.Count(ingest.Accepted)
		dups += r.Count(ingest.Duplicate)
	}
	if dups != st.Redeliveries || accepted != len(evs)-st.Redeliveries {
		t.Fatalf("appended %d, %d duplicates; simulate made %d events with %d redeliveries", accepted, dups, len(evs), st.Redeliveries)
	}
	appended := time.Now()

	// Two consumers of the one stream, with their own checkpoints.
	dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := projector.New(store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	consume(t, c, n, stream, "projector", projector.NewHandler(proj, dl, projector.HandlerConfig{}, testenv.QuietLog()).Handle, dl, 500, false)
	projected := time.Now()

	a, err := archiver.New(c.S3, archiver.Config{Bucket: bucket, Prefix: prefix, Catalog: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	inj := &redeliver{h: archiver.NewHandler(a, testenv.QuietLog()).Handle, bisect: map[int]bool{2: true}, resend: map[int]bool{5: true}}
	ast := consume(t, c, n, stream, "archiver", inj.Handle, dl, 200, true)
	if inj.bisected != 1 || inj.resent != 1 || ast.Bisections < 1 || ast.Records <= int64(accepted) {
		t.Fatalf("injection did not happen: bisected %d, resent %d; runner %+v", inj.bisected, inj.resent, ast)
	}
	if errs, err := a.Errors(ctx); err != nil || len(errs) > 0 {
		t.Fatalf("archive errors/: %v %+v", err, errs)
	}
	archived := time.Now()
	t.Logf("%d events appended (%d redeliveries dropped) in %s; projected in %s; archived in %s (%d records handed over, %d re-sent by injection)",
		accepted, dups, appended.Sub(began).Round(time.Millisecond), projected.Sub(appended).Round(time.Millisecond),
		archived.Sub(projected).Round(time.Millisecond), ast.Records, inj.recordsRedelivered)

	stored := storedEvents(t, c, n)
	p := projections{}
	for _, table := range []string{schema.TableExecutions, schema.TableWorkflows, schema.TableWorkflowJobs, schema.TableMetrics} {
		p[table] = scanTable(t, c, n.Table(table))
	}
	from, to := start.Format("2006-01-02"), start.AddDate(0, 0, 3).Format("2006-01-02")

	// (a) the archive holds exactly the appended events; (c) the named
	// queries agree with the projections.
	files, before := download(t, c, a, bucket, prefix, t.TempDir())
	db := openDuck(t)
	createViews(t, db, files)
	checkExactlyOnce(t, db, stored)
	rowsCompared := checkAll(t, db, p, from, to)
	for _, q := range []string{"daily_failure_rate_per_agent", "message_success_rate_per_stage", "p95_job_queue_time_per_repository", "sf_vs_ldf_cost_per_execution"} {
		if rowsCompared[q] < 3 {
			t.Errorf("%s: only %d rows compared", q, rowsCompared[q])
		}
	}

	// (b) compact every table and day; the same must hold, with fewer
	// objects.
	var objsBefore, objsAfter int
	for _, td := range archiver.Tables() {
		dates, err := a.Partitions(ctx, td.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dates {
			cs, err := a.Compact(ctx, td.Name, d, archiver.CompactOptions{MinAge: -1})
			if err != nil {
				t.Fatalf("compact %s %s: %v", td.Name, d, err)
			}
			if cs.Duplicates != 0 {
				t.Errorf("compact %s %s dropped %d duplicate rows: the batches wrote an event twice", td.Name, d, cs.Duplicates)
			}
		}
	}
	files, after := download(t, c, a, bucket, prefix, t.TempDir())
	db = openDuck(t)
	createViews(t, db, files)
	checkExactlyOnce(t, db, stored)
	checkAll(t, db, p, from, to)
	for _, d := range days(t, from, to) {
		checkAll(t, db, p, d, d) // one day's window reads the days either side
	}
	for k, nb := range before {
		objsBefore += nb
		objsAfter += after[k]
		if after[k] > nb || (nb > 1 && after[k] >= nb) {
			t.Errorf("%s: %d objects before compaction, %d after", k, nb, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("partitions before compaction %d, after %d", len(before), len(after))
	}
	t.Logf("objects: %d in %d partitions before compaction, %d after; rows compared per query: %v; total %s",
		objsBefore, len(before), objsAfter, rowsCompared, time.Since(began).Round(time.Millisecond))
	if objsAfter >= objsBefore {
		t.Errorf("compaction left %d objects of %d", objsAfter, objsBefore)
	}
}

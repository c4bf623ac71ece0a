package projector_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// pipeline is the projector wired to a fresh set of DynamoDB Local tables.
type pipeline struct {
	c       *awsclient.Clients
	n       schema.Naming
	stream  string
	handler *projector.Handler
	dl      *projector.DeadLetters
	store   *projector.DynamoStore
}

func newPipeline(t *testing.T) *pipeline { return newPipelineTB(t) }

func newPipelineTB(t testing.TB) *pipeline {
	t.Helper()
	c := testenv.Clients(t)
	n, res := testenv.Tables(t, c)
	p := &pipeline{c: c, n: n, stream: testenv.EventStream(t, res)}
	var err error
	if p.store, err = projector.NewDynamoStore(c.DynamoDB, n); err != nil {
		t.Fatal(err)
	}
	proj, err := projector.New(p.store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.dl = projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	p.handler = projector.NewHandler(proj, p.dl, projector.HandlerConfig{}, testenv.QuietLog())
	return p
}

func (p *pipeline) append(t *testing.T, evs []schema.Event) {
	t.Helper()
	a, err := ingest.NewAppender(p.c.DynamoDB, ingest.AppenderConfig{Table: p.n.Table(schema.TableEvents), Concurrency: 32})
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < len(evs); start += 1000 {
		res, err := a.Append(context.Background(), evs[start:min(start+1000, len(evs))])
		if err != nil || res.Count(ingest.Rejected) > 0 {
			t.Fatalf("append: %v (%d rejected: %v)", err, res.Count(ingest.Rejected), res.Errors)
		}
	}
}

// run consumes the stream until caught up through h (default: the handler).
func (p *pipeline) run(t *testing.T, ctx context.Context, h streamrun.Handler, cfg streamrun.Config) (streamrun.Stats, error) {
	t.Helper()
	if h == nil {
		h = p.handler.Handle
	}
	cfg.StreamARN, cfg.UntilCaughtUp = p.stream, true
	if cfg.Consumer == "" {
		cfg.Consumer = "projector"
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 500
	}
	cfg.PollInterval = 50 * time.Millisecond
	cfg.Logger = testenv.QuietLog()
	cfg.OnPoison = p.dl.OnPoison(cfg.Consumer)
	r, err := streamrun.New(p.c.Streams, streamrun.NewDynamoCheckpoints(p.c.DynamoDB, p.n.Table(schema.TableCheckpoints)), h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(ctx)
	return r.Stats(), err
}

// stored reads back every event of the event table: the set the reference folds.
func (p *pipeline) stored(t *testing.T) []schema.Event {
	t.Helper()
	var out []schema.Event
	pg := dynamodb.NewScanPaginator(p.c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(p.n.Table(schema.TableEvents)), ConsistentRead: aws.Bool(true)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			e, err := schema.EventFromItem(it)
			if err != nil {
				continue // raw poison items planted by a test
			}
			if _, err := schema.Validate(&e); err != nil {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

func (p *pipeline) get(t *testing.T, table string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := p.c.DynamoDB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.n.Table(table)), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// runSummary reads a run's summary as the query package does: its partition of
// workflow-runs and its jobs (GSI3), summed.
func (p *pipeline) runSummary(t *testing.T, pk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := p.c.DynamoDB.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(p.n.Table(schema.TableWorkflowRuns)), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk"), ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Split(pk, "#")
	if len(ids) != 3 {
		t.Fatalf("run key %q: want installation#run#attempt", pk)
	}
	jobs, err := p.c.DynamoDB.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(p.n.Table(schema.TableWorkflowJobs)), IndexName: aws.String("GSI3"),
		KeyConditionExpression:   aws.String("#i = :i AND #r = :r AND #a = :a"),
		ExpressionAttributeNames: map[string]string{"#i": "installation_id", "#r": "run_id", "#a": "run_attempt"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":i": &types.AttributeValueMemberN{Value: ids[0]}, ":r": &types.AttributeValueMemberN{Value: ids[1]}, ":a": &types.AttributeValueMemberN{Value: ids[2]}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := schema.SummarizeRun(out.Items, jobs.Items)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// readNDJSON reads an NDJSON file of envelopes as a producer would send
// them: without recordedat.
func readNDJSON(t testing.TB, path string) []schema.Event {
	t.Helper()
	evs := testenv.LoadEvents(t, path)
	for i := range evs {
		evs[i].RecordedAt = nil
	}
	return evs
}

func sAttr(item map[string]types.AttributeValue, k string) string {
	switch v := item[k].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	return ""
}

// TestSeedExamplesThroughTheStream appends the seeds' own examples to DynamoDB
// Local, consumes the real stream with streamfold's runner and checks the
// projections: against the reference fold in full, and the seeds' figures.
func TestSeedExamplesThroughTheStream(t *testing.T) {
	p := newPipeline(t)
	files, _ := filepath.Glob("testdata/fold/seed00*.ndjson")
	if len(files) != 4 {
		t.Fatalf("want 4 seed fixtures, found %v", files)
	}
	var all []schema.Event
	for _, f := range files {
		all = append(all, readNDJSON(t, f)...)
	}
	p.append(t, all)
	st, err := p.run(t, context.Background(), nil, streamrun.Config{BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if letters, _ := p.dl.List(context.Background(), "projector"); len(letters) > 0 || st.Poisoned > 0 {
		t.Fatalf("valid events were dead-lettered (stats %+v): %+v", st, letters)
	}
	want, counters := reference(t, p.stored(t))
	got := actual(t, p.c, p.n, counters)
	compareViews(t, want, got)
	// The tables have TTL on, and the examples are dated 2025: each item
	// with a TTL expires 90 days after its events were recorded (now), not
	// after their own time, so none is born expired.
	soon := time.Now().AddDate(0, 0, 89).Unix()
	withTTL := 0
	for id, it := range got {
		table, _, _ := strings.Cut(id, "|")
		if spec, _ := schema.TableSpec(table); spec.TTLAttribute == "" {
			continue
		}
		ttl, ok := nv(it, schema.AttrTTL)
		switch {
		case !ok:
			t.Errorf("%s has no ttl", id)
		case ttl.Num().Int64() < soon:
			t.Errorf("%s expires %s, before the retention period of its recording", id, time.Unix(ttl.Num().Int64(), 0).UTC())
		}
		withTTL++
	}
	if withTTL == 0 {
		t.Error("no item of a table with a TTL: the check checks nothing")
	}

	ex := p.get(t, schema.TableExecutions, map[string]types.AttributeValue{"executionArn": &types.AttributeValueMemberS{Value: "arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123"}})
	if sAttr(ex, "status") != "SUCCEEDED" || sAttr(ex, "durationSeconds") != "10" || sAttr(ex, "agentName") != "my-agent" {
		t.Errorf("seed 002 execution = status %q durationSeconds %q agentName %q; want SUCCEEDED 10 my-agent", sAttr(ex, "status"), sAttr(ex, "durationSeconds"), sAttr(ex, "agentName"))
	}
	S := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	checks := []struct {
		table string
		key   map[string]types.AttributeValue
		want  map[string]string
	}{
		// seed 003: duplicate queued webhooks (same and different delivery id),
		// spot interruption and reschedule, usage summed over both instances.
		{schema.TableWorkflowJobs, map[string]types.AttributeValue{"pk": S("12345#67890"), "sk": S("v")},
			map[string]string{"status": "completed", "conclusion": "success", "usage_in_seconds": "307"}},
		// seed 003: in_progress delivered before queued, then completed.
		{schema.TableWorkflowJobs, map[string]types.AttributeValue{"pk": S("12345#67893"), "sk": S("v")},
			map[string]string{"status": "completed", "conclusion": "failure", "started_at": "2025-01-15T10:00:30.000Z"}},
		// seed 004: created -> queued -> processing -> completed, and -> failed with error_message.
		{schema.TableMessages, map[string]types.AttributeValue{"message_id": S("550e8400-e29b-41d4-a716-446655440000")},
			map[string]string{"status": "completed", "processing_started_at": "2025-10-21T14:30:05.000Z", "processing_completed_at": "2025-10-21T14:30:15.000Z"}},
		{schema.TableMessages, map[string]types.AttributeValue{"message_id": S("7a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")},
			map[string]string{"status": "failed", "error_message": "ntfy.sh returned 503"}},
	}
	for _, c := range checks {
		it := p.get(t, c.table, c.key)
		for k, v := range c.want {
			if got := sAttr(it, k); got != v {
				t.Errorf("%s %v: %s = %q, want %q", c.table, c.key, k, got, v)
			}
		}
	}
	// Replaying the whole stream from the start changes nothing.
	before := actual(t, p.c, p.n, counters)
	if _, err := p.run(t, context.Background(), nil, streamrun.Config{Consumer: "replay-from-start", BatchSize: 3}); err != nil {
		t.Fatal(err)
	}
	compareViews(t, before, actual(t, p.c, p.n, counters))
}

// TestPoisonRecordsAreDeadLettered plants items that can never be projected
// between valid events: they land in the dead-letter table with the raw
// record, the error and the position, and the shard keeps moving.
func TestPoisonRecordsAreDeadLettered(t *testing.T) {
	p := newPipeline(t)
	evs := readNDJSON(t, "testdata/fold/seed004_messages.ndjson")
	p.append(t, evs[:2])
	table := p.n.Table(schema.TableEvents)
	put := func(item map[string]types.AttributeValue) {
		if _, err := p.c.DynamoDB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put(map[string]types.AttributeValue{"subject": s("x/1"), "id": s("poison-type"), "source": s("t"), "type": s("nope.unknown"), "time": s("2026-01-05T00:00:00Z"), "data": s(`{}`)})
	put(map[string]types.AttributeValue{"subject": s("x/2"), "id": s("poison-data"), "source": s("t"), "type": s(schema.TypeMessageCreated), "time": s("2026-01-05T00:00:00Z"), "data": s(`{not json`)})
	put(map[string]types.AttributeValue{"subject": s("x/3"), "id": s("poison-shape"), "type": &types.AttributeValueMemberN{Value: "7"}})
	p.append(t, evs[2:])
	if _, err := p.run(t, context.Background(), nil, streamrun.Config{BatchSize: 2}); err != nil {
		t.Fatal(err)
	}
	letters, err := p.dl.List(context.Background(), "projector")
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 3 {
		t.Fatalf("%d dead letters, want 3: %+v", len(letters), letters)
	}
	for _, d := range letters {
		rec, err := d.LambdaRecord()
		if err != nil || d.Error == "" || d.SequenceNumber == "" || rec.Change.SequenceNumber != d.SequenceNumber || d.Reason != "poison" {
			t.Errorf("dead letter %+v: want the raw record, error, position and reason poison (decode err %v)", d, err)
		}
	}
	want, counters := reference(t, p.stored(t))
	compareViews(t, want, actual(t, p.c, p.n, counters))
}

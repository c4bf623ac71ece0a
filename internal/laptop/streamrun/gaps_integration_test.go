package streamrun

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

// seqLog is a handler that remembers the sequence numbers and event ids
// it was handed, in order, and can fail one sequence number always.
type seqLog struct {
	mu     sync.Mutex
	seqs   []string
	ids    []string
	fail   string
	onCall func(n int)
	calls  int
}

func (s *seqLog) handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		if rec.Change.SequenceNumber == s.fail {
			resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: s.fail}}
			break
		}
		if !slices.Contains(s.seqs, rec.Change.SequenceNumber) {
			s.seqs = append(s.seqs, rec.Change.SequenceNumber)
			s.ids = append(s.ids, rec.Change.Keys[schema.AttrID].String())
		}
	}
	if s.onCall != nil {
		s.onCall(s.calls)
	}
	return resp, nil
}

func (s *seqLog) snapshot() (seqs, ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seqs), slices.Clone(s.ids)
}

// TestIntegrationGaps, on DynamoDB Local with Streams: a consumer started
// at LATEST skips the records already there and records a GapLatest; a
// checkpoint moved past unread records (the checkpoints table written
// directly) is a GapSequenceJump; a record discarded after its retries is
// a GapDiscarded; heartbeats name the last record with a plausible lag.
func TestIntegrationGaps(t *testing.T) {
	c := testenv.Clients(t)
	naming, res := testenv.Tables(t, c)
	arn := testenv.EventStream(t, res)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // ends the polling below; generous, so that load never fails it
	defer cancel()
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: naming.Table(schema.TableEvents), Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	appendN := func(from, n int) []string {
		t.Helper()
		evs := make([]schema.Event, n)
		ids := make([]string, n)
		for i := range evs {
			evs[i] = messageEvent(from + i)
			ids[i] = evs[i].ID
		}
		// One at a time: their order in the stream is the order here.
		for _, e := range evs {
			if out, err := app.Append(ctx, []schema.Event{e}); err != nil || out.Count(ingest.Accepted) != 1 {
				t.Fatalf("Append %s: %v", e.ID, err)
			}
		}
		return ids
	}
	table := naming.Table(schema.TableCheckpoints)
	ops := opsrec.Store{API: c.DynamoDB, Table: table}
	cps := NewDynamoCheckpoints(c.DynamoDB, table)
	begin := time.Now().Add(-time.Hour) // gaps are stamped with the local clock
	newRunner := func(consumer string, h Handler, mod func(*Config)) *Runner {
		cfg := Config{StreamARN: arn, Consumer: consumer, BatchSize: 5, PollInterval: 20 * time.Millisecond,
			UntilCaughtUp: true, Ops: ops, Logger: slog.New(slog.DiscardHandler),
			OnPoison: func(context.Context, events.DynamoDBEventRecord, error) error { return nil }}
		if mod != nil {
			mod(&cfg)
		}
		r, err := New(c.Streams, cps, h, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.retryBase, r.retryMax = time.Millisecond, 5*time.Millisecond
		return r
	}
	gapsOf := func(consumer string) []opsrec.Gap {
		t.Helper()
		all, err := ops.Gaps(ctx, begin)
		if err != nil {
			t.Fatal(err)
		}
		var out []opsrec.Gap
		for _, g := range all {
			if g.Consumer == consumer {
				out = append(out, g)
			}
		}
		return out
	}

	before := appendN(0, 12)

	// 1. LATEST: the 12 records are skipped (a GapLatest), what comes
	// after the start is handed over.
	latest := &seqLog{}
	rl := newRunner("latest", latest.handle, func(c *Config) { c.StartingPosition = Latest; c.UntilCaughtUp = false })
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rl.Run(runCtx) }()
	for len(gapsOf("latest")) == 0 {
		if ctx.Err() != nil {
			t.Fatalf("no GapLatest recorded (stats %+v)", rl.Stats())
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := appendN(100, 6)
	for {
		if _, ids := latest.snapshot(); len(ids) >= len(after) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("latest run: %v", err)
	}
	_, ids := latest.snapshot()
	if !slices.Equal(ids, after) {
		t.Fatalf("started at LATEST, handed over %v, want only %v", ids, after)
	}
	g := gapsOf("latest")
	if len(g) != 1 || g[0].Kind != opsrec.GapLatest || g[0].Shard == "" || g[0].FirstSeq == "" || g[0].From.IsZero() || g[0].To.Before(g[0].From) {
		t.Fatalf("gaps %+v, want one GapLatest from the first record", g)
	}

	// A consumer reading from TRIM_HORIZON sees all 18 and notices nothing.
	all := &seqLog{}
	if err := newRunner("all", all.handle, nil).Run(ctx); err != nil {
		t.Fatal(err)
	}
	seqs, ids := all.snapshot()
	if !slices.Equal(ids, slices.Concat(before, after)) || len(gapsOf("all")) != 0 {
		t.Fatalf("from TRIM_HORIZON: %v, gaps %+v", ids, gapsOf("all"))
	}
	if g[0].FirstSeq != seqs[0] {
		t.Fatalf("GapLatest begins at %s, the shard's first record is %s", g[0].FirstSeq, seqs[0])
	}

	// Heartbeats: the last one names the newest record, with a lag that
	// is not negative (DynamoDB Local rounds record times down to the
	// minute) and the records counted.
	beats, err := ops.Progresses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var beat *opsrec.Progress
	for i, b := range beats {
		if b.Consumer == "all" {
			beat = &beats[i]
		}
	}
	if beat == nil || beat.LastSeq != seqs[len(seqs)-1] || beat.Lag < 0 || beat.Lag > time.Hour || beat.Records <= 0 || beat.LastRecord.IsZero() || beat.Updated.Before(beat.Since) {
		t.Fatalf("heartbeats %+v: want one of consumer all ending at %s", beats, seqs[len(seqs)-1])
	}

	// 2. A checkpoint moved past unread records: the consumer stops after
	// its first batch (5 records), then the checkpoint is set to the 10th.
	moved := &seqLog{}
	mctx, mstop := context.WithCancel(ctx)
	moved.onCall = func(n int) { mstop() }
	if err := newRunner("moved", moved.handle, func(c *Config) { c.UntilCaughtUp = false }).Run(mctx); err != nil {
		t.Fatal(err)
	}
	cpAll, err := cps.Load(ctx, "moved")
	if err != nil || len(cpAll) != 1 {
		t.Fatalf("checkpoints %+v %v", cpAll, err)
	}
	var shard string
	for id, cp := range cpAll {
		shard = id
		if cp.SequenceNumber != seqs[4] || cp.RunnerSeq != seqs[4] || cp.RecordTime.IsZero() {
			t.Fatalf("checkpoint %+v, want %s saved by the runner with its record time", cp, seqs[4])
		}
	}
	if _, err := c.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			AttrConsumer: &types.AttributeValueMemberS{Value: "moved"}, AttrShardID: &types.AttributeValueMemberS{Value: shard},
		},
		UpdateExpression:          aws.String("SET #s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": AttrSequenceNumber},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: seqs[9]}},
	}); err != nil {
		t.Fatal(err)
	}
	moved.onCall = nil
	if err := newRunner("moved", moved.handle, nil).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := moved.snapshot(); !slices.Equal(got, slices.Concat(seqs[:5], seqs[10:])) {
		t.Fatalf("moved: handed over %v", got)
	}
	mg := gapsOf("moved")
	if len(mg) != 1 || mg[0].Kind != opsrec.GapSequenceJump || mg[0].Shard != shard || mg[0].LastSeq != seqs[9] || mg[0].From.IsZero() ||
		!strings.Contains(mg[0].Detail, seqs[4]) || !strings.Contains(mg[0].Detail, seqs[10]) {
		t.Fatalf("gaps %+v, want one jump after %s up to %s", mg, seqs[4], seqs[9])
	}

	// 3. A record that fails every attempt is discarded: a GapDiscarded.
	disc := &seqLog{fail: seqs[7]}
	if err := newRunner("discard", disc.handle, func(c *Config) { c.MaxRetryAttempts = 1 }).Run(ctx); err != nil {
		t.Fatal(err)
	}
	dg := gapsOf("discard")
	if len(dg) != 1 || dg[0].Kind != opsrec.GapDiscarded || dg[0].FirstSeq != seqs[7] || dg[0].Records != 1 || dg[0].From.IsZero() {
		t.Fatalf("gaps %+v, want one discarded %s", dg, seqs[7])
	}
}

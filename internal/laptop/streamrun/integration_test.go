package streamrun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// messageEvent builds a valid message-created event (as in the ingest tests).
func messageEvent(i int) schema.Event {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	b, _ := json.Marshal(map[string]any{
		"message_id": id, "stage": "dev", "created_by": "scheduler", "message_type": "scheduled_hello",
		"payload": map[string]any{"text": "hello"}, "correlation_id": id,
	})
	return schema.Event{
		ID: fmt.Sprintf("%s-%d", schema.TypeMessageCreated, i), Source: "test", Type: schema.TypeMessageCreated,
		Time: time.Date(2026, 1, 5, 10, 0, i%60, 0, time.UTC), Data: b,
	}
}

// flakyHandler records every delivery and fails some records once each,
// through BatchItemFailures.
type flakyHandler struct {
	mu        sync.Mutex
	calls     int
	delivered map[string]int    // event id -> times handed over
	bySeq     map[string]string // sequence number -> event id
	failed    map[string]bool   // sequence numbers failed once already
	onCall    func(n int)
}

func (h *flakyHandler) handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		seq := rec.Change.SequenceNumber
		id := rec.Change.Keys[schema.AttrID].String()
		if prev, ok := h.bySeq[seq]; ok && prev != id {
			return resp, fmt.Errorf("sequence number %s carried %s and %s", seq, prev, id)
		}
		h.bySeq[seq] = id
		h.delivered[id]++
		if seqMod(seq, 97) == 0 && !h.failed[seq] {
			h.failed[seq] = true
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
		}
	}
	if h.onCall != nil {
		h.onCall(h.calls)
	}
	return resp, nil
}

// seqMod returns the sequence number modulo m (DynamoDB Local numbers them
// consecutively, so this fails about one record in m).
func seqMod(seq string, m int) int {
	r := 0
	for _, c := range seq {
		r = (r*10 + int(c-'0')) % m
	}
	return r
}

func TestIntegrationDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	naming, res := testenv.Tables(t, c)
	arn := testenv.EventStream(t, res)
	// Appending dominates the run time: about 2,000 PutItems take 5 s on a
	// fresh DynamoDB Local and minutes on a shared one under load. Neither
	// the append nor the runs below have a deadline of their own that load
	// could exceed: they end when done, and go test's -timeout bounds them.
	appendCtx := context.Background()
	n := 2000
	if testing.Short() {
		n = 400
	}
	evs := make([]schema.Event, n)
	for i := range evs {
		evs[i] = messageEvent(i)
	}
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: naming.Table(schema.TableEvents), Concurrency: 32})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := app.Append(appendCtx, evs)
	if err != nil || out.Count(ingest.Accepted) != n {
		t.Fatalf("Append: %v, %d accepted", err, out.Count(ingest.Accepted))
	}
	t.Logf("appended %d events in %s", n, time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want := map[string]bool{}
	for _, e := range evs {
		want[e.ID] = true
	}

	cps := NewDynamoCheckpoints(c.DynamoDB, naming.Table(schema.TableCheckpoints))
	h := &flakyHandler{delivered: map[string]int{}, bySeq: map[string]string{}, failed: map[string]bool{}}
	poisoned := func(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
		t.Errorf("record %s poisoned: %v", rec.Change.SequenceNumber, cause)
		return nil
	}
	newRunner := func(untilCaughtUp bool) *Runner {
		r, err := New(c.Streams, cps, h.handle, Config{
			StreamARN: arn, Consumer: "integration", BatchSize: 100,
			PollInterval: 50 * time.Millisecond, UntilCaughtUp: untilCaughtUp,
			OnPoison: poisoned, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		r.retryBase, r.retryMax = 5*time.Millisecond, 50*time.Millisecond
		return r
	}

	// 1. Stop midway: cancel after 5 batches.
	runCtx, stop := context.WithCancel(ctx)
	h.onCall = func(n int) {
		if n == 5 {
			stop()
		}
	}
	r1 := newRunner(false)
	if err := r1.Run(runCtx); err != nil {
		t.Fatalf("first run: %v", err)
	}
	h.onCall = nil
	h.mu.Lock()
	midway := len(h.delivered)
	if len(h.bySeq) > 0 {
		t.Logf("sample sequence number %s", maxSeqOf(h.bySeq))
	}
	h.mu.Unlock()
	if midway == 0 || midway >= n {
		t.Fatalf("first run delivered %d distinct events, want some but not all", midway)
	}

	// 2. A new runner with the same consumer catches up.
	r2 := newRunner(true)
	start = time.Now()
	if err := r2.Run(ctx); err != nil {
		t.Fatalf("second run: %v", err)
	}
	st := r2.Stats()
	t.Logf("first run: %d distinct events in %+v; second run in %s: %+v", midway, r1.Stats(), time.Since(start).Round(time.Millisecond), st)

	h.mu.Lock()
	for id := range want {
		if h.delivered[id] == 0 {
			t.Errorf("event %s never delivered", id)
		}
	}
	for id := range h.delivered {
		if !want[id] {
			t.Errorf("delivered %s, which was never appended", id)
		}
	}
	if len(h.delivered) != n || len(h.bySeq) != n {
		t.Errorf("delivered %d distinct events with %d sequence numbers, want %d", len(h.delivered), len(h.bySeq), n)
	}
	failedOnce := len(h.failed)
	maxSeq := maxSeqOf(h.bySeq)
	h.mu.Unlock()
	if failedOnce == 0 || r1.Stats().Retries+st.Retries == 0 {
		t.Errorf("no transient failures exercised (%d failed, stats %+v)", failedOnce, st)
	}

	// The checkpoint of the (single, open) shard is the last record.
	all, err := cps.Load(ctx, "integration")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("checkpoints %+v, want one shard", all)
	}
	for id, cp := range all {
		got, ok, err := cps.Get(ctx, "integration", id)
		if err != nil || !ok || got != cp || cp.SequenceNumber != maxSeq || cp.Done {
			t.Fatalf("checkpoint %+v (Get %+v %v %v), want %s and not done", cp, got, ok, err, maxSeq)
		}
	}

	// 3. Yet another runner delivers nothing new.
	h.mu.Lock()
	calls := h.calls
	h.mu.Unlock()
	r3 := newRunner(true)
	if err := r3.Run(ctx); err != nil {
		t.Fatalf("third run: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.calls != calls || r3.Stats().Records != 0 {
		t.Fatalf("third run delivered %d batches (%+v), want none", h.calls-calls, r3.Stats())
	}
}

func maxSeqOf(m map[string]string) string {
	var out string
	for seq := range m {
		if out == "" || streamimage.CompareSeq(seq, out) > 0 {
			out = seq
		}
	}
	return out
}

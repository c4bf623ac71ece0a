package streamrun

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// batchOf returns n records with sequence numbers 101, 102, ...
func batchOf(n int) []events.DynamoDBEventRecord {
	out := make([]events.DynamoDBEventRecord, n)
	for i := range out {
		out[i] = events.DynamoDBEventRecord{EventID: "e" + strconv.Itoa(i), Change: events.DynamoDBStreamRecord{SequenceNumber: strconv.Itoa(101 + i)}}
	}
	return out
}

func seqsOf(recs []events.DynamoDBEventRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Change.SequenceNumber
	}
	return out
}

// scripted is a handler that answers invocation n with respond(n, seqs)
// and remembers what it was given.
type scripted struct {
	mu      sync.Mutex
	calls   [][]string
	respond func(n int, seqs []string) (events.DynamoDBEventResponse, error)
}

func (s *scripted) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	s.mu.Lock()
	n := len(s.calls)
	seqs := seqsOf(ev.Records)
	s.calls = append(s.calls, seqs)
	s.mu.Unlock()
	if s.respond == nil {
		return events.DynamoDBEventResponse{}, nil
	}
	return s.respond(n, seqs)
}

func failures(ids ...string) events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	for _, id := range ids {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
	}
	return resp
}

func testDelivery(h Handler) *Delivery {
	return &Delivery{Handler: h, Backoff: func(int) time.Duration { return time.Millisecond }, Logger: slog.New(slog.DiscardHandler)}
}

// TestDeliverItemIdentifier: how Deliver reads a partial batch response,
// as Lambda's event source mapping does ("Configuring partial batch
// response with DynamoDB and Lambda", success and failure conditions): the
// batch resumes at the lowest reported SequenceNumber; an ItemIdentifier
// that is empty or not a SequenceNumber of the batch (even beside valid
// ones) fails the whole batch, which is retried from its first record.
func TestDeliverItemIdentifier(t *testing.T) {
	tests := []struct {
		name     string
		first    events.DynamoDBEventResponse
		wantNext []string // the second invocation
		wantDone []string // Done calls
	}{
		{"lowest of several", failures("105", "103"), []string{"103", "104", "105", "106"}, []string{"102", "106"}},
		{"the first record", failures("101"), []string{"101", "102", "103", "104", "105", "106"}, []string{"106"}},
		{"unknown", failures("999"), []string{"101", "102", "103", "104", "105", "106"}, []string{"106"}},
		{"unknown beside a valid one", failures("104", "999"), []string{"101", "102", "103", "104", "105", "106"}, []string{"106"}},
		{"empty", failures(""), []string{"101", "102", "103", "104", "105", "106"}, []string{"106"}},
		{"empty beside a valid one", failures("", "104"), []string{"101", "102", "103", "104", "105", "106"}, []string{"106"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &scripted{respond: func(n int, _ []string) (events.DynamoDBEventResponse, error) {
				if n == 0 {
					return tt.first, nil
				}
				return events.DynamoDBEventResponse{}, nil
			}}
			d := testDelivery(h.handle)
			var done []string
			d.Done = func(_ context.Context, seq string) error { done = append(done, seq); return nil }
			d.BisectOnError = true // an invalid response is not a function error: no bisection
			n, err := d.Deliver(context.Background(), batchOf(6))
			if err != nil || n != 6 {
				t.Fatalf("Deliver = %d, %v; want 6, nil", n, err)
			}
			if len(h.calls) != 2 || !slices.Equal(h.calls[1], tt.wantNext) {
				t.Fatalf("calls %v; want the second %v", h.calls, tt.wantNext)
			}
			if !slices.Equal(done, tt.wantDone) {
				t.Fatalf("done %v; want %v", done, tt.wantDone)
			}
		})
	}
}

// TestDeliverBatches: records go over in batches of BatchSize, in order.
func TestDeliverBatches(t *testing.T) {
	h := &scripted{}
	d := testDelivery(h.handle)
	d.BatchSize = 4
	if n, err := d.Deliver(context.Background(), batchOf(10)); n != 10 || err != nil {
		t.Fatalf("Deliver = %d, %v", n, err)
	}
	want := [][]string{{"101", "102", "103", "104"}, {"105", "106", "107", "108"}, {"109", "110"}}
	if !slices.EqualFunc(h.calls, want, slices.Equal) {
		t.Fatalf("calls %v, want %v", h.calls, want)
	}
}

// TestDeliverRetriesExhausted: without OnFailure, a batch that still fails
// after MaxRetryAttempts retries stops Deliver with ErrRetriesExhausted,
// having dealt with the records before the failing one; with OnFailure the
// failing record goes there and the rest is delivered.
func TestDeliverRetriesExhausted(t *testing.T) {
	respond := func(_ int, seqs []string) (events.DynamoDBEventResponse, error) {
		if slices.Contains(seqs, "103") {
			return failures("103"), nil
		}
		return events.DynamoDBEventResponse{}, nil
	}
	h := &scripted{respond: respond}
	d := testDelivery(h.handle)
	d.MaxRetryAttempts = 2
	n, err := d.Deliver(context.Background(), batchOf(5))
	if !errors.Is(err, ErrRetriesExhausted) || n != 2 || len(h.calls) != 3 {
		t.Fatalf("Deliver = %d, %v after %d calls; want 2, ErrRetriesExhausted after 3", n, err, len(h.calls))
	}

	h = &scripted{respond: respond}
	d = testDelivery(h.handle)
	d.MaxRetryAttempts = 2
	var sent []string
	d.OnFailure = func(_ context.Context, rec events.DynamoDBEventRecord, cause error) error {
		sent = append(sent, rec.Change.SequenceNumber)
		return nil
	}
	n, err = d.Deliver(context.Background(), batchOf(5))
	if err != nil || n != 5 || !slices.Equal(sent, []string{"103"}) || !slices.Equal(h.calls[len(h.calls)-1], []string{"104", "105"}) {
		t.Fatalf("Deliver = %d, %v; on failure %v; calls %v", n, err, sent, h.calls)
	}
}

// TestDeliverBisect: with BisectOnError a function error halves the batch
// down to the bad record.
func TestDeliverBisect(t *testing.T) {
	h := &scripted{respond: func(_ int, seqs []string) (events.DynamoDBEventResponse, error) {
		if slices.Contains(seqs, "103") {
			return events.DynamoDBEventResponse{}, errors.New("boom")
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	d := testDelivery(h.handle)
	d.BisectOnError = true
	d.MaxRetryAttempts = 1
	var sent []string
	d.OnFailure = func(_ context.Context, rec events.DynamoDBEventRecord, _ error) error {
		sent = append(sent, rec.Change.SequenceNumber)
		return nil
	}
	if n, err := d.Deliver(context.Background(), batchOf(4)); n != 4 || err != nil || !slices.Equal(sent, []string{"103"}) {
		t.Fatalf("Deliver = %d, %v; on failure %v; calls %v", n, err, sent, h.calls)
	}
}

// permanentErr is a handler error that says no retry can fix it.
type permanentErr struct{ error }

func (permanentErr) Permanent() bool { return true }

// TestDeliverStopsOnAPermanentError: a handler error reporting Permanent()
// stops Deliver at once with a *StoppedError wrapping it: no retry, no
// bisection, nothing to OnFailure, nothing marked done. An error that is not
// permanent is still retried.
func TestDeliverStopsOnAPermanentError(t *testing.T) {
	gone := permanentErr{errors.New("archive gone")}
	h := &scripted{respond: func(n int, seqs []string) (events.DynamoDBEventResponse, error) {
		return failures(seqs[0]), gone
	}}
	var done []string
	failed := 0
	d := &Delivery{Handler: h.handle, BisectOnError: true, MaxRetryAttempts: 5, Backoff: func(int) time.Duration { return 0 },
		Logger:    slog.New(slog.DiscardHandler),
		Done:      func(_ context.Context, seq string) error { done = append(done, seq); return nil },
		OnFailure: func(context.Context, events.DynamoDBEventRecord, error) error { failed++; return nil }}
	n, err := d.Deliver(context.Background(), batchOf(4))
	var stopped *StoppedError
	if n != 0 || !errors.As(err, &stopped) || stopped.Seq != "101" || !errors.Is(err, gone) {
		t.Fatalf("Deliver = %d, %v; want 0 and a *StoppedError at 101 wrapping the handler's error", n, err)
	}
	if len(h.calls) != 1 || len(done) != 0 || failed != 0 {
		t.Fatalf("calls %v, done %v, OnFailure %d: want one call and nothing else", h.calls, done, failed)
	}

	h = &scripted{respond: func(n int, seqs []string) (events.DynamoDBEventResponse, error) {
		if n == 0 {
			return events.DynamoDBEventResponse{}, errors.New("transient")
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	d.Handler, d.BisectOnError, done = h.handle, false, nil
	if n, err := d.Deliver(context.Background(), batchOf(4)); n != 4 || err != nil || len(h.calls) != 2 {
		t.Fatalf("transient error: Deliver = %d, %v after %d calls; want a retry that succeeds", n, err, len(h.calls))
	}
}

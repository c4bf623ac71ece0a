package deadletter_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
)

// memSink is a Sink in memory that fails for the sequence numbers in fail.
type memSink struct {
	mu   sync.Mutex
	got  map[string]error
	fail map[string]bool
}

func (s *memSink) Quarantine(_ context.Context, rec events.DynamoDBEventRecord, cause error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := rec.Change.SequenceNumber
	if s.fail[seq] {
		return fmt.Errorf("sink down for %s", seq)
	}
	if s.got == nil {
		s.got = map[string]error{}
	}
	s.got[seq] = cause
	return nil
}

func (s *memSink) seqs() []string {
	var out []string
	for seq := range s.got {
		out = append(out, seq)
	}
	slices.Sort(out)
	return out
}

func rec(seq, name string) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventID: "e" + seq, EventName: name, Change: events.DynamoDBStreamRecord{SequenceNumber: seq}}
}

func ttlRemove(seq string) events.DynamoDBEventRecord {
	r := rec(seq, "REMOVE")
	r.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
	return r
}

// decode: INSERT "good" records decode to their sequence number, EventID
// "eskip..." is skipped, "epoison..." is poison.
func decode(r events.DynamoDBEventRecord) (string, bool, error) {
	switch {
	case r.EventName != "INSERT", r.EventID == "eskip":
		return "", false, nil
	case r.EventID == "epoison":
		return "", false, fmt.Errorf("test: %w: bad image", deadletter.ErrPoison)
	}
	return r.Change.SequenceNumber, true, nil
}

func batch() []events.DynamoDBEventRecord {
	poison := rec("103", "INSERT")
	poison.EventID = "epoison"
	skip := rec("106", "INSERT")
	skip.EventID = "eskip"
	return []events.DynamoDBEventRecord{rec("101", "INSERT"), rec("102", "MODIFY"), poison, rec("104", "INSERT"), ttlRemove("105"), skip, rec("107", "REMOVE"), rec("108", "INSERT")}
}

func TestBatchRun(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	handlerErr := errors.New("store down")
	tests := []struct {
		name       string
		whole      bool
		sinkFails  []string
		outcome    deadletter.Outcome
		handlerErr error
		wantCalled bool
		wantStats  deadletter.BatchStats
		wantFailed string
		wantErr    error
		wantSunk   []string
	}{
		{
			name: "poison quarantined, the rest handled", wantCalled: true,
			wantStats: deadletter.BatchStats{Records: 8, SkippedNonInsert: 2, TTLRemoves: 1, Skipped: 1, Poison: 1},
			wantSunk:  []string{"103"},
		},
		{
			name: "the handler's failures and poison", wantCalled: true,
			outcome: deadletter.Outcome{
				Failed: []events.DynamoDBEventRecord{rec("108", "INSERT"), rec("104", "INSERT")},
				Poison: []deadletter.Poisoned{{Record: rec("101", "INSERT"), Cause: deadletter.ErrPoison}},
			},
			wantStats:  deadletter.BatchStats{Records: 8, SkippedNonInsert: 2, TTLRemoves: 1, Skipped: 1, Poison: 2},
			wantFailed: "104", wantSunk: []string{"101", "103"},
		},
		{
			name: "a failed quarantine fails its record", sinkFails: []string{"103"}, wantCalled: true,
			wantStats:  deadletter.BatchStats{Records: 8, SkippedNonInsert: 2, TTLRemoves: 1, Skipped: 1},
			wantFailed: "103",
		},
		{
			name: "whole batch: a failed quarantine fails the batch before the handler", whole: true, sinkFails: []string{"103"},
			wantStats:  deadletter.BatchStats{Records: 8, SkippedNonInsert: 2, TTLRemoves: 1, Skipped: 1},
			wantFailed: "101", wantErr: errors.New("sink down for 103"),
		},
		{
			name: "whole batch: a handler's failure names the first record", whole: true, wantCalled: true,
			outcome:    deadletter.Outcome{Failed: []events.DynamoDBEventRecord{rec("108", "INSERT")}},
			wantStats:  deadletter.BatchStats{Records: 8, SkippedNonInsert: 2, TTLRemoves: 1, Skipped: 1, Poison: 1},
			wantFailed: "101", wantSunk: []string{"103"},
		},
		{
			name: "the handler's error fails the batch", handlerErr: handlerErr, wantCalled: true,
			wantStats:  deadletter.BatchStats{Records: 8, SkippedNonInsert: 2, TTLRemoves: 1, Skipped: 1, Poison: 1},
			wantFailed: "101", wantErr: handlerErr, wantSunk: []string{"103"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &memSink{fail: map[string]bool{}}
			for _, s := range tt.sinkFails {
				sink.fail[s] = true
			}
			var handled []string
			called := false
			b := deadletter.Batch[string]{
				Decode: decode, Sink: sink, WholeBatch: tt.whole, Concurrency: 3, Logger: quiet,
				Handle: func(_ context.Context, items []deadletter.Item[string]) (deadletter.Outcome, error) {
					called = true
					for _, it := range items {
						handled = append(handled, it.Value)
					}
					return tt.outcome, tt.handlerErr
				},
			}
			res := b.Run(context.Background(), batch())
			if called != tt.wantCalled || (called && !slices.Equal(handled, []string{"101", "104", "108"})) {
				t.Fatalf("handler called %v with %v; want called %v with 101 104 108", called, handled, tt.wantCalled)
			}
			if res.Stats != tt.wantStats || res.Failed != tt.wantFailed || fmt.Sprint(res.Err) != fmt.Sprint(tt.wantErr) {
				t.Fatalf("Run = %+v; want stats %+v, failed %q, err %v", res, tt.wantStats, tt.wantFailed, tt.wantErr)
			}
			if !slices.Equal(sink.seqs(), tt.wantSunk) {
				t.Fatalf("quarantined %v, want %v", sink.seqs(), tt.wantSunk)
			}
			for seq, cause := range sink.got {
				if !errors.Is(cause, deadletter.ErrPoison) {
					t.Errorf("%s quarantined with %v, which is not ErrPoison", seq, cause)
				}
			}
			resp := res.Response()
			if (tt.wantFailed == "") != (len(resp.BatchItemFailures) == 0) || (tt.wantFailed != "" && resp.BatchItemFailures[0].ItemIdentifier != tt.wantFailed) {
				t.Fatalf("response %+v, want failure %q", resp, tt.wantFailed)
			}
		})
	}
}

// TestBatchRunEmpty: nothing to handle calls no handler and fails nothing.
func TestBatchRunEmpty(t *testing.T) {
	b := deadletter.Batch[string]{Decode: decode, Sink: &memSink{}, Handle: func(context.Context, []deadletter.Item[string]) (deadletter.Outcome, error) {
		t.Fatal("handler called")
		return deadletter.Outcome{}, nil
	}}
	if res := b.Run(context.Background(), nil); res.Failed != "" || res.Err != nil || res.Stats != (deadletter.BatchStats{}) {
		t.Fatalf("Run(nil) = %+v", res)
	}
}

// putter records the letters a TableSink puts.
type putter struct{ got []deadletter.Letter }

func (p *putter) Put(_ context.Context, d deadletter.Letter) error {
	p.got = append(p.got, d)
	return nil
}

// TestTableSink: a record becomes the Letter of the sink's consumer and
// reason, at its stream position, holding the record and the cause.
func TestTableSink(t *testing.T) {
	p := &putter{}
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.FixedZone("x", 3600))
	s := deadletter.TableSink{Table: p, Consumer: "archiver", Reason: deadletter.ReasonRetriesExhausted, Now: func() time.Time { return at }}
	r := rec("42", "INSERT")
	r.EventSourceArn = "arn:stream"
	if err := s.Quarantine(context.Background(), r, errors.New("still failing")); err != nil {
		t.Fatal(err)
	}
	if len(p.got) != 1 {
		t.Fatalf("%d letters", len(p.got))
	}
	d := p.got[0]
	back, err := d.LambdaRecord()
	if err != nil || back.Change.SequenceNumber != "42" || back.EventSourceArn != "arn:stream" {
		t.Fatalf("record %+v, %v", back, err)
	}
	d.Record = ""
	want := deadletter.Letter{Consumer: "archiver", Position: deadletter.Position("42", "e42"), StreamARN: "arn:stream", SequenceNumber: "42", EventID: "e42",
		EventName: "INSERT", Reason: "retries-exhausted", Error: "still failing", QuarantinedAt: at.UTC(), Status: "quarantined"}
	if d != want {
		t.Fatalf("letter %+v\nwant   %+v", d, want)
	}
}

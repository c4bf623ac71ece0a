package localrun

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
)

func record(seq, id string) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventID: id, Change: events.DynamoDBStreamRecord{SequenceNumber: seq}}
}

type putFunc func(context.Context, deadletter.Letter) error

func (f putFunc) Put(ctx context.Context, d deadletter.Letter) error { return f(ctx, d) }

// TestQuarantineTally: a record quarantined again (a retry of its batch)
// counts once, by whichever path; a failed store counts nothing.
func TestQuarantineTally(t *testing.T) {
	ctx := context.Background()
	q := NewQuarantineTally()
	q.Note(record("1", "a"))
	q.Note(record("1", "a"))
	ok := q.Putter(putFunc(func(context.Context, deadletter.Letter) error { return nil }))
	if err := ok.Put(ctx, deadletter.Letter{SequenceNumber: "1", EventID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := ok.Put(ctx, deadletter.Letter{SequenceNumber: "2", EventID: "b"}); err != nil {
		t.Fatal(err)
	}
	broken := q.Putter(putFunc(func(context.Context, deadletter.Letter) error { return errors.New("down") }))
	if err := broken.Put(ctx, deadletter.Letter{SequenceNumber: "3", EventID: "c"}); err == nil {
		t.Fatal("a failed put reported no error")
	}
	onPoison := q.OnPoison(func(_ context.Context, rec events.DynamoDBEventRecord, _ error) error {
		if rec.EventID == "e" {
			return errors.New("down")
		}
		return nil
	})
	if err := onPoison(ctx, record("4", "d"), nil); err != nil {
		t.Fatal(err)
	}
	if err := onPoison(ctx, record("5", "e"), nil); err == nil {
		t.Fatal("a failed OnPoison reported no error")
	}
	if got := q.N(); got != 3 {
		t.Fatalf("N = %d, want 3 (1/a, 2/b, 4/d)", got)
	}
}

type permanent struct{}

func (permanent) Error() string   { return "bucket gone" }
func (permanent) Permanent() bool { return true }

func TestStopOnPermanent(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		stopped bool
	}{
		{"ok", nil, false},
		{"transient", errors.New("slow down"), false},
		{"permanent", permanent{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := StopOnPermanent(func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: "1"}}}, tt.err
			})
			resp, err := h(context.Background(), events.DynamoDBEvent{})
			if (err != nil) != tt.stopped || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("resp %+v, err %v; want the response kept and an error only when permanent", resp, err)
			}
			if tt.stopped != streamrun.IsPermanent(err) {
				t.Fatalf("IsPermanent(%v) = %v", err, !tt.stopped)
			}
		})
	}
}

package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/testenv"
	"github.com/streamfold/streamfold/schema"
)

func messageEvent(i int, typ string) schema.Event {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	data := map[string]any{"message_id": id, "stage": "dev"}
	switch typ {
	case schema.TypeMessageCreated:
		data["created_by"] = "scheduler"
		data["message_type"] = "scheduled_hello"
		data["payload"] = map[string]any{"text": "hello"}
		data["correlation_id"] = id
	case schema.TypeMessageFailed:
		data["error_message"] = "boom"
	}
	b, _ := json.Marshal(data)
	return schema.Event{
		ID: fmt.Sprintf("%s-%d", typ, i), Source: "test", Type: typ,
		Time: time.Date(2026, 1, 5, 10, 0, i%60, 0, time.UTC), Data: b,
	}
}

// fakePut fails the first `throttle` calls with a throttling error, then
// succeeds, remembering keys to report duplicates.
type fakePut struct {
	throttle int32
	calls    atomic.Int32
	fatal    error
}

func (f *fakePut) PutItem(ctx context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	n := f.calls.Add(1)
	if f.fatal != nil {
		return nil, f.fatal
	}
	if n <= f.throttle {
		return nil, &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "slow down"}
	}
	return &dynamodb.PutItemOutput{}, nil
}

func TestAppenderRetriesThrottling(t *testing.T) {
	f := &fakePut{throttle: 3}
	a, err := ingest.NewAppender(f, ingest.AppenderConfig{Table: "t", BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Append(context.Background(), []schema.Event{messageEvent(1, schema.TypeMessageCreated)})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if res.Outcomes[0] != ingest.Accepted || f.calls.Load() != 4 {
		t.Fatalf("outcome %v after %d calls, want accepted after 4", res.Outcomes[0], f.calls.Load())
	}
}

func TestAppenderGivesUpOnPermanentError(t *testing.T) {
	f := &fakePut{fatal: &smithy.GenericAPIError{Code: "ValidationException", Message: "bad item"}}
	a, _ := ingest.NewAppender(f, ingest.AppenderConfig{Table: "t", BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	res, err := a.Append(context.Background(), []schema.Event{messageEvent(1, schema.TypeMessageCreated)})
	var we *ingest.WriteError
	if !errors.As(err, &we) || res.Outcomes[0] != ingest.Failed || f.calls.Load() != 1 {
		t.Fatalf("err=%v outcome=%v calls=%d; want one attempt, Failed, *WriteError", err, res.Outcomes[0], f.calls.Load())
	}
}

func TestAppenderConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  ingest.AppenderConfig
		want string
	}{
		{"no table", ingest.AppenderConfig{}, "ingest: AppenderConfig.Table: is required"},
		{"too many workers", ingest.AppenderConfig{Table: "t", Concurrency: 1000}, "ingest: AppenderConfig.Concurrency: must be between 1 and 256, got 1000"},
		{"negative attempts", ingest.AppenderConfig{Table: "t", MaxAttempts: -1}, "ingest: AppenderConfig.MaxAttempts: must be at least 1, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ingest.NewAppender(&fakePut{}, tt.cfg)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("NewAppender error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestPrepareDerivesStableID(t *testing.T) {
	a, b := messageEvent(7, schema.TypeMessageCreated), messageEvent(7, schema.TypeMessageCreated)
	a.ID, b.ID = "", ""
	if err := ingest.Prepare(&a); err != nil {
		t.Fatal(err)
	}
	if err := ingest.Prepare(&b); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.ID != b.ID {
		t.Fatalf("derived ids %q and %q, want equal and non-empty", a.ID, b.ID)
	}
}

// TestAppendToDynamoDBLocalAndReadStream appends events to a real event table
// with Streams on, appends them again, and reads the stream back through the
// dynamodbstreams API: every event appears exactly once.
func TestAppendToDynamoDBLocalAndReadStream(t *testing.T) {
	c := testenv.Clients(t)
	naming, tables := testenv.Tables(t, c)
	streamARN := testenv.EventStream(t, tables)
	a, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: naming.Table(schema.TableEvents)})
	if err != nil {
		t.Fatal(err)
	}
	var events []schema.Event
	for i := 0; i < 150; i++ {
		events = append(events, messageEvent(i, schema.TypeMessageCreated))
		if i%3 == 0 {
			events = append(events, messageEvent(i, schema.TypeMessageFailed))
		}
	}
	bad := messageEvent(999, schema.TypeMessageFailed)
	bad.Data = []byte(`{"message_id":"nope","stage":"dev","error_message":"x"}`)
	ctx := context.Background()
	res, err := a.Append(ctx, append(append([]schema.Event{}, events...), bad))
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if got := res.Count(ingest.Accepted); got != len(events) {
		t.Fatalf("accepted %d, want %d", got, len(events))
	}
	if res.Outcomes[len(events)] != ingest.Rejected || res.Errors[len(events)].Error() != "data.message_id: must be a UUID" {
		t.Fatalf("bad event: %v %v", res.Outcomes[len(events)], res.Errors[len(events)])
	}
	// Appending the same ids again writes nothing.
	res, err = a.Append(ctx, events)
	if err != nil {
		t.Fatalf("second Append: %v", err)
	}
	if got := res.Count(ingest.Duplicate); got != len(events) {
		t.Fatalf("duplicates %d, want %d", got, len(events))
	}

	seen, order := readStream(t, c.Streams, streamARN)
	if len(seen) != len(events) {
		t.Fatalf("stream holds %d INSERT records, want %d", len(seen), len(events))
	}
	for _, e := range events {
		if n := seen[e.ID]; n != 1 {
			t.Fatalf("event %s appears %d times in the stream, want 1", e.ID, n)
		}
	}
	// Events of one subject reach the stream in append order.
	for i := 0; i < 150; i += 3 {
		created, failed := order[messageEvent(i, schema.TypeMessageCreated).ID], order[messageEvent(i, schema.TypeMessageFailed).ID]
		if created >= failed {
			t.Fatalf("subject %d: created at stream position %d, failed at %d; want created first", i, created, failed)
		}
	}
}

// readStream reads every shard of a stream from TRIM_HORIZON until each is
// exhausted and counts INSERT records by event id; order gives each id's
// position in the read (one shard per subject keeps per-subject order).
func readStream(t *testing.T, s *dynamodbstreams.Client, arn string) (seen map[string]int, order map[string]int) {
	t.Helper()
	ctx := context.Background()
	seen, order = map[string]int{}, map[string]int{}
	d, err := s.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("DescribeStream: %v", err)
	}
	for _, sh := range d.StreamDescription.Shards {
		it, err := s.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			t.Fatalf("GetShardIterator: %v", err)
		}
		iter := it.ShardIterator
		for empty := 0; iter != nil && empty < 3; {
			out, err := s.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatalf("GetRecords: %v", err)
			}
			if len(out.Records) == 0 {
				empty++
			}
			for _, r := range out.Records {
				if r.EventName != streamtypes.OperationTypeInsert {
					continue
				}
				id, ok := r.Dynamodb.NewImage[schema.AttrID].(*streamtypes.AttributeValueMemberS)
				if !ok {
					t.Fatalf("record without id: %+v", r.Dynamodb.NewImage)
				}
				seen[id.Value]++
				order[id.Value] = len(order)
			}
			iter = out.NextShardIterator
		}
	}
	return seen, order
}

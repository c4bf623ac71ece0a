package ingest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
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

// TestAppenderRejectsWhatDynamoDBRefuses: a write DynamoDB refuses as
// invalid fails the same way on every attempt, so the event is Rejected
// (400 over HTTP) after one attempt, never Failed (503, "retry later").
func TestAppenderRejectsWhatDynamoDBRefuses(t *testing.T) {
	f := &fakePut{fatal: &smithy.GenericAPIError{Code: "ValidationException", Message: "bad item"}}
	a, _ := ingest.NewAppender(f, ingest.AppenderConfig{Table: "t", BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	res, err := a.Append(context.Background(), []schema.Event{messageEvent(1, schema.TypeMessageCreated)})
	var re *ingest.RefusedError
	var p interface{ Permanent() bool }
	if err != nil || res.Outcomes[0] != ingest.Rejected || !errors.As(res.Errors[0], &re) || !errors.As(res.Errors[0], &p) || !p.Permanent() || f.calls.Load() != 1 {
		t.Fatalf("err=%v outcome=%v (%v) calls=%d; want one attempt, Rejected, a permanent *RefusedError", err, res.Outcomes[0], res.Errors[0], f.calls.Load())
	}
}

func TestAppenderGivesUpOnPermanentError(t *testing.T) {
	f := &fakePut{fatal: &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "no table"}}
	a, _ := ingest.NewAppender(f, ingest.AppenderConfig{Table: "t", BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	res, err := a.Append(context.Background(), []schema.Event{messageEvent(1, schema.TypeMessageCreated)})
	var we *ingest.WriteError
	if !errors.As(err, &we) || res.Outcomes[0] != ingest.Failed || f.calls.Load() != 1 {
		t.Fatalf("err=%v outcome=%v calls=%d; want one attempt, Failed, *WriteError", err, res.Outcomes[0], f.calls.Load())
	}
}

// TestAppenderAcceptsEveryDataEncoding: a producer can write each format
// schema.ItemEncoded writes (the older ones for older consumers).
func TestAppenderAcceptsEveryDataEncoding(t *testing.T) {
	for _, enc := range []schema.DataEncoding{schema.DataCompressed, schema.DataPlain, schema.DataCompressedNoDictionary, schema.DataCompressedKeepURLs} {
		if _, err := ingest.NewAppender(&fakePut{}, ingest.AppenderConfig{Table: "t", DataEncoding: enc}); err != nil {
			t.Errorf("%s: %v", enc, err)
		}
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
		{"unknown data encoding", ingest.AppenderConfig{Table: "t", DataEncoding: 9}, "ingest: AppenderConfig.DataEncoding: unknown DataEncoding(9)"},
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

// contentHashAttr is a content hash attribute (each has the same size).
var contentHashAttr = &types.AttributeValueMemberS{Value: schema.ContentHashPrefix + strings.Repeat("0", 64)}

// paddedMessage is a valid message event whose payload text is pad.
func paddedMessage(i int, pad string) schema.Event {
	e := messageEvent(i, schema.TypeMessageCreated)
	e.Data = []byte(strings.Replace(string(e.Data), `"text":"hello"`, `"text":"`+pad+`"`, 1))
	return e
}

// noise returns n characters of deterministic base64 of random bytes: text
// that zstd shrinks by only a quarter.
func noise(n int, seed byte) string {
	b := make([]byte, n)
	r := rand.New(rand.NewChaCha8([32]byte{seed}))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// TestAppenderRejectsTooLarge: an event whose item stays above DynamoDB's
// 400 KB limit compressed is Rejected with a *TooLargeError naming the sizes,
// and is never sent; the other events of the call are written.
func TestAppenderRejectsTooLarge(t *testing.T) {
	f := &fakePut{}
	a, err := ingest.NewAppender(f, ingest.AppenderConfig{Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	huge := paddedMessage(2, noise(600<<10, 1))
	plain := paddedMessage(3, strings.Repeat("0123456789", 45<<10)) // 450 KB that compresses
	res, err := a.Append(context.Background(), []schema.Event{messageEvent(1, schema.TypeMessageCreated), huge, plain})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if want := []ingest.Outcome{ingest.Accepted, ingest.Rejected, ingest.Accepted}; !slices.Equal(res.Outcomes, want) {
		t.Fatalf("outcomes %v, want %v (errors %v)", res.Outcomes, want, res.Errors)
	}
	if f.calls.Load() != 2 {
		t.Fatalf("%d PutItem calls, want 2: the event too large to store must not be sent", f.calls.Load())
	}
	var tl *ingest.TooLargeError
	if !errors.Is(res.Errors[1], ingest.ErrTooLarge) || !errors.As(res.Errors[1], &tl) {
		t.Fatalf("error %v is not a *TooLargeError matching ErrTooLarge", res.Errors[1])
	}
	if !tl.Compressed || tl.DataBytes != len(huge.Data) || tl.ItemBytes <= schema.MaxItemBytes || tl.Limit != schema.MaxItemBytes || tl.ID != huge.ID {
		t.Fatalf("TooLargeError %+v", tl)
	}
	want := fmt.Sprintf("ingest: event messages/00000000-0000-4000-8000-000000000002/%s is too large to store: its item would be %d bytes (data %d bytes, stored compressed) and DynamoDB's item limit is 409600 bytes (400 KB)",
		huge.ID, tl.ItemBytes, len(huge.Data))
	if got := res.Errors[1].Error(); got != want {
		t.Fatalf("error text\n got %s\nwant %s", got, want)
	}

	// With DataPlain even the compressible payload is too large.
	a, _ = ingest.NewAppender(f, ingest.AppenderConfig{Table: "t", DataEncoding: schema.DataPlain})
	res, _ = a.Append(context.Background(), []schema.Event{paddedMessage(3, strings.Repeat("0123456789", 45<<10))})
	if !errors.As(res.Errors[0], &tl) || tl.Compressed {
		t.Fatalf("plain 450 KB: %v, want a TooLargeError stored as text", res.Errors[0])
	}
}

// recordingCapacity is a PutItemAPI that asks DynamoDB for the consumed
// capacity of every put and keeps it with the item's event type and size.
type recordingCapacity struct {
	ingest.PutItemAPI
	mu   sync.Mutex
	puts []consumedPut
}

// consumedPut is what one successful put consumed.
type consumedPut struct {
	eventType string
	size      int // schema.ItemSize of the item
	units     float64
}

func (r *recordingCapacity) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := r.PutItemAPI.PutItem(ctx, in, opts...)
	if err == nil && out.ConsumedCapacity != nil && out.ConsumedCapacity.CapacityUnits != nil {
		typ, _ := in.Item[schema.AttrEventType].(*types.AttributeValueMemberS)
		r.mu.Lock()
		r.puts = append(r.puts, consumedPut{eventType: typ.Value, size: schema.ItemSize(in.Item), units: *out.ConsumedCapacity.CapacityUnits})
		r.mu.Unlock()
	}
	return out, err
}

// take returns the puts recorded since the last call.
func (r *recordingCapacity) take() []consumedPut {
	r.mu.Lock()
	defer r.mu.Unlock()
	puts := r.puts
	r.puts = nil
	return puts
}

// TestItemSizeAgainstDynamoDBLocal checks schema.ItemSize, on which both the
// compression threshold and the 400 KB rejection rest, against an
// independent implementation: DynamoDB Local charges WriteUnits(size) for
// items on each side of a write-unit boundary, stores an item of exactly
// MaxItemBytes, and refuses one byte more, which the Appender rejects before
// sending. Two ttl values cover the number encoding (trailing zero pairs
// trimmed or not).
func TestItemSizeAgainstDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	naming, _ := testenv.Tables(t, c)
	table := naming.Table(schema.TableEvents)
	ctx := context.Background()
	id := 0
	for _, now := range []time.Time{
		time.Unix(1767000000, 0).Add(-14 * 24 * time.Hour), // ttl 1767000000
		time.Unix(1767012345, 0).Add(-14 * 24 * time.Hour), // ttl 1767012345
	} {
		rec := &recordingCapacity{PutItemAPI: c.DynamoDB}
		// The events are dated weeks after now: the skew limit is lifted.
		a, err := ingest.NewAppender(rec, ingest.AppenderConfig{Table: table, DataEncoding: schema.DataPlain, Now: func() time.Time { return now }, MaxFutureSkew: ingest.MaxMaxFutureSkew})
		if err != nil {
			t.Fatal(err)
		}
		// sized returns an event whose plain item is exactly size bytes.
		sized := func(size int) schema.Event {
			id++
			e := paddedMessage(id, "x")
			if err := ingest.Prepare(&e); err != nil {
				t.Fatal(err)
			}
			e.RecordedAt = &now
			item, err := schema.ItemEncoded(e, schema.EventRetentionDays*24*time.Hour, schema.DataPlain)
			if err != nil {
				t.Fatal(err)
			}
			item[schema.AttrContentHash] = contentHashAttr // every hash has the same size
			return paddedMessage(id, noise(size-schema.ItemSize(item)+1, byte(id)))
		}
		for _, size := range []int{1024, 1025, 3072, 3073, schema.MaxItemBytes} {
			res, err := a.Append(ctx, []schema.Event{sized(size)})
			if err != nil || res.Outcomes[0] != ingest.Accepted {
				t.Fatalf("ttl %d, %d-byte item: %v %v", now.Unix(), size, res.Outcomes, err)
			}
			puts := rec.take()
			if len(puts) != 1 || puts[0].size != size || puts[0].units != float64(schema.WriteUnits(size)) {
				t.Errorf("ttl %d, %d-byte item: DynamoDB Local charged %+v, ItemSize says %d write units", now.Unix(), size, puts, schema.WriteUnits(size))
			}
		}
		over := sized(schema.MaxItemBytes + 1)
		res, _ := a.Append(ctx, []schema.Event{over})
		if !errors.Is(res.Errors[0], ingest.ErrTooLarge) {
			t.Fatalf("ttl %d, item one byte over the limit: %v, want ErrTooLarge", now.Unix(), res.Errors[0])
		}
		if err := ingest.Prepare(&over); err != nil {
			t.Fatal(err)
		}
		over.RecordedAt = &now
		item, _ := schema.ItemEncoded(over, schema.EventRetentionDays*24*time.Hour, schema.DataPlain)
		item[schema.AttrContentHash] = contentHashAttr
		_, err = c.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
		var api smithy.APIError
		if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" {
			t.Fatalf("ttl %d: DynamoDB Local took an item of MaxItemBytes+1 (err %v): ItemSize undercounts", now.Unix(), err)
		}
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

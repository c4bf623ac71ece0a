package archiver_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// streamRecord is the Lambda stream record of an INSERT of item.
func streamRecord(t testing.TB, seq string, name string, item map[string]types.AttributeValue) events.DynamoDBEventRecord {
	t.Helper()
	img, err := streamimage.ToLambda(item)
	if err != nil {
		t.Fatal(err)
	}
	r := events.DynamoDBEventRecord{
		EventID: "sev-" + seq, EventName: name, EventSource: "aws:dynamodb", EventSourceArn: "arn:aws:dynamodb:us-east-1:1:table/t/stream/x",
		Change: events.DynamoDBStreamRecord{SequenceNumber: seq, StreamViewType: "NEW_IMAGE",
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Date(2026, 1, 7, 10, 0, 0, 0, time.UTC)}},
	}
	if name == "REMOVE" {
		r.Change.OldImage = img
	} else {
		r.Change.NewImage = img
	}
	return r
}

func eventItem(t testing.TB, r archiver.Record) map[string]types.AttributeValue {
	t.Helper()
	item, err := schema.Item(r.Event, 14*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return item
}

func TestHandler(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt", Prefix: "arch"})
	h := archiver.NewHandler(a, quietLog())
	good := simRecords(t, 20, 60, 1)

	var batch []events.DynamoDBEventRecord
	var want []archiver.Record
	seq := 1000
	next := func() string { seq++; return strconv.Itoa(seq) }
	for i, r := range good {
		s := next()
		batch = append(batch, streamRecord(t, s, "INSERT", eventItem(t, r)))
		want = append(want, archiver.Record{Event: r.Event, Seq: s, StreamEventID: "sev-" + s})
		switch i {
		case 5: // a TTL deletion of an event
			rec := streamRecord(t, next(), "REMOVE", eventItem(t, r))
			rec.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
			batch = append(batch, rec)
		case 6: // a REMOVE by someone else, and a MODIFY
			batch = append(batch, streamRecord(t, next(), "REMOVE", eventItem(t, r)), streamRecord(t, next(), "MODIFY", eventItem(t, r)))
		case 7: // invalid data
			bad := r
			bad.Event.Data = json.RawMessage(`{"message_id":"nope"}`)
			bad.Event.Type = schema.TypeMessageFailed
			batch = append(batch, streamRecord(t, next(), "INSERT", eventItem(t, bad)))
		case 8: // an item that is no event at all
			batch = append(batch, streamRecord(t, next(), "INSERT", map[string]types.AttributeValue{"subject": &types.AttributeValueMemberS{Value: "x"}}))
		}
	}
	for i, r := range want {
		// What the handler archives is the event as the table returns it.
		e := r.Event
		e.SpecVersion = schema.SpecVersion
		want[i].Event = e
	}

	// An S3 failure fails the whole batch, reported as its first record.
	f.setFail(func(op, key string) bool { return strings.Contains(key, "/metadata/") })
	resp, err := h.Handle(ctx, events.DynamoDBEvent{Records: batch})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != batch[0].Change.SequenceNumber {
		t.Fatalf("failed write: %+v, %v; want the first record as the only failure", resp, err)
	}
	f.heal()
	// The retry succeeds and archives every event once.
	resp, err = h.Handle(ctx, events.DynamoDBEvent{Records: batch})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("retry: %+v, %v", resp, err)
	}
	exactlyOnce(t, a, want)
	// Once more, with the counts: a redelivery changes nothing (its files
	// are committed already: none is written).
	st, err := h.ArchiveRecords(ctx, batch)
	wantSt := archiver.BatchStats{BatchStats: deadletter.BatchStats{Records: len(batch), TTLRemoves: 1, SkippedNonInsert: 2, Poison: 2}, Archived: len(want)}
	if err != nil || st != wantSt {
		t.Fatalf("ArchiveRecords = %+v, %v; want %+v", st, err, wantSt)
	}
	exactlyOnce(t, a, want)

	errs, err := a.Errors(ctx)
	if err != nil || len(errs) != 2 {
		t.Fatalf("errors: %d, %v; want the 2 poison records", len(errs), err)
	}
	for _, e := range errs {
		if !strings.HasPrefix(e.Key, "arch/errors/event_date=2026-01-07/") || e.EventName != "INSERT" || e.Reason == "" || len(e.Record) == 0 {
			t.Errorf("error record %+v", e)
		}
		var rec events.DynamoDBEventRecord
		if err := json.Unmarshal(e.Record, &rec); err != nil || rec.Change.SequenceNumber != e.SequenceNumber {
			t.Errorf("error record does not hold the raw record: %v", err)
		}
	}
	if !strings.Contains(errs[0].Reason+errs[1].Reason, "data.message_id: must be a UUID") {
		t.Errorf("reasons do not name the field: %q, %q", errs[0].Reason, errs[1].Reason)
	}
	if resp, err := h.Handle(ctx, events.DynamoDBEvent{}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("empty batch: %+v %v", resp, err)
	}
}

func TestDecodeRecord(t *testing.T) {
	r := simRecords(t, 21, 5, 1)[0]
	rec := streamRecord(t, "77", "INSERT", eventItem(t, r))
	got, ok, err := archiver.DecodeRecord(rec)
	if err != nil || !ok || got.Seq != "77" || got.StreamEventID != "sev-77" || got.Event.ID != r.Event.ID || string(got.Event.Data) != string(r.Event.Data) {
		t.Fatalf("DecodeRecord = %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := archiver.DecodeRecord(streamRecord(t, "78", "MODIFY", eventItem(t, r))); ok || err != nil {
		t.Fatalf("MODIFY: %v %v", ok, err)
	}
	rec.Change.SequenceNumber = ""
	if _, _, err := archiver.DecodeRecord(rec); err == nil {
		t.Fatal("a record without a sequence number was accepted")
	}
}

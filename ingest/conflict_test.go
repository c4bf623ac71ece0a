package ingest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// conflictEvent is a valid message event; data is its error_message.
func conflictEvent(id, msg string) schema.Event {
	return schema.Event{ID: id, Source: "rez_agent/dev", Type: schema.TypeMessageFailed, Time: agentAt,
		Data: []byte(`{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","error_message":"` + msg + `"}`)}
}

// storedItem is the item of e as the Appender writes it (withHash) or as
// it was written before content hashes existed.
func storedItem(t *testing.T, e schema.Event, withHash bool) map[string]types.AttributeValue {
	t.Helper()
	if err := Prepare(&e); err != nil {
		t.Fatal(err)
	}
	rec := agentAt.Add(time.Hour)
	e.RecordedAt = &rec
	item, err := schema.Item(e, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if withHash {
		h, err := schema.ContentHash(e)
		if err != nil {
			t.Fatal(err)
		}
		item[schema.AttrContentHash] = &types.AttributeValueMemberS{Value: h}
	}
	return item
}

// TestCompareStored: the decision between duplicate and conflict, from the
// item a failed condition returns.
func TestCompareStored(t *testing.T) {
	boom, other := conflictEvent("e-1", "boom"), conflictEvent("e-1", "other")
	// The same content laid out differently: the same event.
	relaid := boom
	relaid.Data = []byte(`{ "stage": "dev", "error_message": "boom", "message_id": "550e8400-e29b-41d4-a716-446655440000" }`)
	tests := []struct {
		name       string
		item       map[string]types.AttributeValue
		sent       schema.Event
		conflict   bool
		legacy     bool
		storedRead bool
	}{
		{"hashed, same content", storedItem(t, boom, true), boom, false, false, true},
		{"hashed, same content laid out differently", storedItem(t, boom, true), relaid, false, false, true},
		{"hashed, other content", storedItem(t, boom, true), other, true, false, true},
		{"legacy, same content", storedItem(t, boom, false), relaid, false, true, true},
		{"legacy, other content", storedItem(t, boom, false), other, true, true, true},
		{"no item returned", nil, boom, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.sent
			if err := Prepare(&e); err != nil {
				t.Fatal(err)
			}
			hash, err := schema.ContentHash(e)
			if err != nil {
				t.Fatal(err)
			}
			c := CompareStored(e, hash, tt.item)
			if (c != nil) != tt.conflict {
				t.Fatalf("CompareStored = %v, want conflict %v", c, tt.conflict)
			}
			if c == nil {
				return
			}
			if c.Legacy != tt.legacy || c.NewHash != hash || c.StoredHash == hash || (c.Stored.ID == "e-1") != tt.storedRead || !isPermanent(c) {
				t.Fatalf("conflict %+v", c)
			}
			if want := "ingest: event " + e.Subject + "/e-1 conflicts with the stored event of the same subject and id: its content hash is " + hash; !strings.HasPrefix(c.Error(), want) {
				t.Fatalf("error %q, want it to start %q", c.Error(), want)
			}
		})
	}
}

// capturePut records the inputs it is sent and fails each as
// ConditionalCheckFailed with the stored item when returnOld.
type capturePut struct {
	ins       []*dynamodb.PutItemInput
	stored    map[string]types.AttributeValue
	returnOld bool
}

func (c *capturePut) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.ins = append(c.ins, in)
	if c.stored == nil {
		return &dynamodb.PutItemOutput{}, nil
	}
	ccf := &types.ConditionalCheckFailedException{}
	if c.returnOld && in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld {
		ccf.Item = c.stored
	}
	return nil, ccf
}

// TestAppendWritesContentHash: the write carries the content hash and asks
// for the stored item on a failed condition, so that telling a duplicate
// from a conflict takes no read.
func TestAppendWritesContentHash(t *testing.T) {
	put := &capturePut{}
	app, err := NewAppender(put, AppenderConfig{Table: "events", Now: func() time.Time { return agentAt }})
	if err != nil {
		t.Fatal(err)
	}
	e := conflictEvent("e-1", "boom")
	if res, err := app.Append(context.Background(), []schema.Event{e}); err != nil || res.Outcomes[0] != Accepted {
		t.Fatalf("Append = %+v, %v", res, err)
	}
	in := put.ins[0]
	_ = Prepare(&e)
	want, _ := schema.ContentHash(e)
	if got := attrS(in.Item, schema.AttrContentHash); got != want || !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+64 {
		t.Fatalf("item %s = %q, want %q", schema.AttrContentHash, got, want)
	}
	if in.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld || *in.ConditionExpression != "attribute_not_exists(#s)" {
		t.Fatalf("input %+v", in)
	}
}

// TestConflictLetterBounded: a conflict whose two versions would not fit a
// dead-letter item keeps the new version's data and leaves out the stored
// one's (which stays in the event table), then the new one's too.
func TestConflictLetterBounded(t *testing.T) {
	big := strings.Repeat("x", MaxConflictRecordBytes/2+10)
	stored, newer := conflictEvent("e-1", big), conflictEvent("e-1", big+"y")
	c := &ConflictError{Subject: "s", ID: "e-1", StoredHash: "sha256:a", NewHash: "sha256:b", Stored: stored, New: newer}
	d, err := ConflictLetter(c, agentAt)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ParseConflictDeadLetter(d.Record)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Record) > MaxConflictRecordBytes || !rec.StoredDataOmitted || rec.NewDataOmitted || !bytes.Contains(rec.New.Data, []byte(big+"y")) || string(rec.Stored.Data) != "null" {
		t.Fatalf("record of %d bytes: stored omitted %v, new omitted %v", len(d.Record), rec.StoredDataOmitted, rec.NewDataOmitted)
	}
	c.New = conflictEvent("e-1", big+big)
	if d, err = ConflictLetter(c, agentAt); err != nil {
		t.Fatal(err)
	}
	if rec, _ = ParseConflictDeadLetter(d.Record); len(d.Record) > MaxConflictRecordBytes || !rec.StoredDataOmitted || !rec.NewDataOmitted {
		t.Fatalf("record of %d bytes: stored omitted %v, new omitted %v", len(d.Record), rec.StoredDataOmitted, rec.NewDataOmitted)
	}
}

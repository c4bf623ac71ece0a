package projector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// limitMessage is a rez_agent message created event whose payload holds
// extra (a JSON member list, possibly empty).
func limitMessage(n int, id string, at time.Time, extra string) schema.Event {
	payload := `{"text":"hello","priority":"default","tags":["a"]` + extra + `}`
	return schema.Event{
		ID: id, Source: "rez_agent/dev", Type: schema.TypeMessageCreated, Time: at,
		Data: json.RawMessage(fmt.Sprintf(`{"message_id":"%s","stage":"dev","created_by":"limits","message_type":"manual_notification",`+
			`"correlation_id":"660e8400-e29b-41d4-a716-44665544000%d","payload":%s}`, limitMessageID(n), n, payload)),
	}
}

func limitMessageID(n int) string { return fmt.Sprintf("550e8400-e29b-41d4-a716-44665544000%d", n) }

// deepJSON nests depth objects.
func deepJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// TestInvalidEventDoesNotWedgeItsSubject reproduces the wedge of issue 20:
// three messages are created by valid events, then each gets a later event
// that DynamoDB cannot store in its item (a number of 1e200, 41 digits, a
// payload nested 40 levels), written to the event table by another path
// than ingest (which refuses them). Each invalid event is quarantined alone
// with a reason naming the field and the limit; the valid ones are
// projected; the message items and the per-stage counters agree.
func TestInvalidEventDoesNotWedgeItsSubject(t *testing.T) {
	p := newPipeline(t)
	base := time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC)
	var valid []schema.Event
	for n := 1; n <= 3; n++ {
		valid = append(valid, limitMessage(n, "valid-"+strconv.Itoa(n), base, ""))
	}
	p.append(t, valid)
	invalid := map[string]string{ // id -> the field its dead letter names
		"invalid-1": "data.payload.amount",
		"invalid-2": "data.payload.n",
		"invalid-3": "data.payload.deep" + strings.Repeat(".a", 30),
	}
	extras := []string{`,"amount":1e200`, `,"n":12345678901234567890123456789012345678901`, `,"deep":` + deepJSON(40)}
	recorded := time.Now().UTC()
	for n := 1; n <= 3; n++ {
		e := limitMessage(n, "invalid-"+strconv.Itoa(n), base.Add(time.Minute), extras[n-1])
		e.Subject, e.SpecVersion, e.RecordedAt = "messages/"+limitMessageID(n), schema.SpecVersion, &recorded
		item, err := schema.Item(e, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.c.DynamoDB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(p.n.Table(schema.TableEvents)), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	// One batch holds every event, so each subject's valid and invalid
	// events are folded together: the worst case.
	ctx, cancel := context.WithCancel(context.Background()) // no deadline of its own: go test -timeout bounds it (load must not fail it)
	defer cancel()
	st, err := p.run(t, ctx, nil, streamrun.Config{BatchSize: 100, MaxRetryAttempts: 2})
	if err != nil {
		t.Fatalf("run: %v (stats %+v)", err, st)
	}
	letters, err := p.dl.List(context.Background(), "projector")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range letters {
		rec, err := d.LambdaRecord()
		if err != nil {
			t.Fatal(err)
		}
		id := rec.Change.NewImage[schema.AttrID].String()
		got = append(got, id)
		field, ok := invalid[id]
		switch {
		case !ok:
			t.Errorf("dead letter of %s, a valid event: %s", id, d.Error)
		case !strings.Contains(d.Error, field+": must") || !strings.Contains(d.Error, "DynamoDB"):
			t.Errorf("dead letter of %s: %q does not name %s and its limit", id, d.Error, field)
		}
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "invalid-1 invalid-2 invalid-3" {
		t.Fatalf("dead letters %v, want exactly the three invalid events", got)
	}
	// Every valid event is projected, with its payload.
	for n := 1; n <= 3; n++ {
		it := p.get(t, schema.TableMessages, map[string]types.AttributeValue{"message_id": &types.AttributeValueMemberS{Value: limitMessageID(n)}})
		if sAttr(it, "status") != "created" || it["payload"] == nil {
			t.Errorf("message %d = %v, want created with its payload", n, it)
		}
	}
	// The message list and the stats agree: the stage's daily row counts
	// exactly the items.
	row := p.get(t, schema.TableMetrics, map[string]types.AttributeValue{"scope": &types.AttributeValueMemberS{Value: schema.MessageScope("dev")}, "date": &types.AttributeValueMemberS{Value: "2025-10-21"}})
	if sAttr(row, "total") != "3" || sAttr(row, "created") != "3" {
		t.Errorf("messages/dev 2025-10-21 counts total %q created %q, want 3 and 3 (the items)", sAttr(row, "total"), sAttr(row, "created"))
	}
	want, counters := reference(t, p.stored(t))
	compareViews(t, want, actual(t, p.c, p.n, counters))
}

// TestCheckItemAgreesWithDynamoDB writes items at and just over each limit
// schema.CheckItem enforces to DynamoDB Local: what CheckItem accepts is
// stored, what it refuses DynamoDB refuses too (a ValidationException,
// which projector.IsPermanent classifies as poison), so the projector's
// check before a commit is neither looser nor stricter than the table.
func TestCheckItemAgreesWithDynamoDB(t *testing.T) {
	p := newPipeline(t)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	deep := func(depth int) types.AttributeValue {
		var v types.AttributeValue = num("1")
		for i := 0; i < depth; i++ {
			if i%2 == 0 {
				v = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": v}}
			} else {
				v = &types.AttributeValueMemberL{Value: []types.AttributeValue{v}}
			}
		}
		return v
	}
	msg := func(attr string, v types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"message_id": s(randomID()), "stage": s("dev"), "created_date": s("2025-10-21"), attr: v}
	}
	tests := []struct {
		name  string
		table string
		item  map[string]types.AttributeValue
		ok    bool
	}{
		{"31 nested maps and lists (32 levels with the item)", schema.TableMessages, msg("payload", deep(31)), true},
		{"32 nested maps and lists", schema.TableMessages, msg("payload", deep(32)), false},
		{"38 digits", schema.TableMessages, msg("n", num("12345678901234567890123456789012345678")), true},
		{"39 digits", schema.TableMessages, msg("n", num("123456789012345678901234567890123456789")), false},
		{"9.99E+125", schema.TableMessages, msg("n", num("9.9999999999999999999999999999999999999E+125")), true},
		{"1E+126", schema.TableMessages, msg("n", num("1E+126")), false},
		{"1e200", schema.TableMessages, msg("n", num("1e200")), false},
		{"1E-130", schema.TableMessages, msg("n", num("1E-130")), true},
		{"9E-131", schema.TableMessages, msg("n", num("9E-131")), false},
		{"partition key 2048 bytes", schema.TableExecutions, map[string]types.AttributeValue{"executionArn": s(strings.Repeat("é", 1024))}, true},
		{"partition key 2049 bytes", schema.TableExecutions, map[string]types.AttributeValue{"executionArn": s(strings.Repeat("a", 2049))}, false},
		{"sort key 1024 bytes", schema.TableEvents, map[string]types.AttributeValue{"subject": s("x"), "id": s(strings.Repeat("a", 1024))}, true},
		{"sort key 1025 bytes", schema.TableEvents, map[string]types.AttributeValue{"subject": s("x"), "id": s(strings.Repeat("a", 1025))}, false},
		{"GSI partition key 2048 bytes", schema.TableMessages, msg("message_type", s(strings.Repeat("a", 2048))), true},
		{"GSI partition key 2049 bytes", schema.TableMessages, msg("message_type", s(strings.Repeat("a", 2049))), false},
		{"GSI sort key 1025 bytes", schema.TableMessages, map[string]types.AttributeValue{"message_id": s(randomID()), "stage": s("dev"), "created_date": s(strings.Repeat("a", 1025))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr := schema.CheckItem(tt.table, tt.item)
			_, putErr := p.c.DynamoDB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(p.n.Table(tt.table)), Item: tt.item})
			if (checkErr == nil) != tt.ok || (putErr == nil) != tt.ok {
				t.Fatalf("CheckItem = %v, PutItem = %v; want both ok=%v", checkErr, putErr, tt.ok)
			}
			if !tt.ok && (!projector.IsPermanent(putErr) || !projector.IsPermanent(checkErr)) {
				t.Fatalf("IsPermanent(%v) or IsPermanent(%v) is false", putErr, checkErr)
			}
		})
	}
}

var idSeq int

func randomID() string {
	idSeq++
	return fmt.Sprintf("limits-%d-%d", time.Now().UnixNano(), idSeq)
}

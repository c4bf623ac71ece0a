package ingest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// TestConflictDynamoDBLocal: against DynamoDB Local, the conditional put
// returns the stored item (ReturnValuesOnConditionCheckFailure) and the
// Appender tells a duplicate from a conflict by its content hash; every
// route answers 409 for the conflict, and the dead-letters table holds one
// letter per conflicting version (consumer ingest, reason conflict) with
// both versions, as `deadletter list --consumer ingest` reads it.
func TestConflictDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	dl := deadletter.NewTable(c.DynamoDB, n.Table(schema.TableDeadLetters))
	app, err := NewAppender(c.DynamoDB, AppenderConfig{Table: n.Table(schema.TableEvents), Now: func() time.Time { return agentAt }, DeadLetters: dl})
	if err != nil {
		t.Fatal(err)
	}
	h := routeHandler(t, app)
	for _, r := range agentRoutes {
		t.Run(r.name, func(t *testing.T) {
			id := "e-" + strings.ReplaceAll(r.name, " ", "-")
			for i, step := range []struct {
				variant string
				want    int
			}{{"", http.StatusAccepted}, {"", http.StatusOK}, {"-other", http.StatusConflict}, {"-other", http.StatusConflict}} {
				if got := r.send(t, h, app, id, step.variant); got.code != step.want {
					t.Fatalf("step %d: answer %d, want %d: %s", i, got.code, step.want, got.body)
				}
			}
			stored := getEvent(t, c.DynamoDB, n.Table(schema.TableEvents), id)
			var mine []deadletter.Letter
			letters, err := dl.List(context.Background(), DeadLetterConsumer)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range letters {
				if d.EventID == id {
					mine = append(mine, d)
				}
			}
			if len(mine) != 1 {
				t.Fatalf("%d dead letters for %s, want 1: %+v", len(mine), id, mine)
			}
			checkConflictLetter(t, mine[0], stored)
		})
	}
}

// getEvent reads the one stored event of id (scanning: the tests' tables
// are small).
func getEvent(t *testing.T, ddb *dynamodb.Client, table, id string) schema.Event {
	t.Helper()
	out, err := ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("#i = :i"), ExpressionAttributeNames: map[string]string{"#i": schema.AttrID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":i": &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 {
		t.Fatalf("%d items of id %s", len(out.Items), id)
	}
	e, err := schema.EventFromItem(out.Items[0])
	if err != nil {
		t.Fatal(err)
	}
	if attrS(out.Items[0], schema.AttrContentHash) == "" {
		t.Fatalf("item of %s has no %s", id, schema.AttrContentHash)
	}
	return e
}

// TestConflictLegacyItemDynamoDBLocal: an item written before content
// hashes existed (no contenthash attribute) is hashed from its attributes
// when an event of its key comes again: the same content is a duplicate,
// other content a conflict marked legacy.
func TestConflictLegacyItemDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	table := n.Table(schema.TableEvents)
	old := conflictEvent("legacy-1", "boom")
	item := storedItem(t, old, false)
	if _, err := c.DynamoDB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
	dl := &memLetters{}
	app, err := NewAppender(c.DynamoDB, AppenderConfig{Table: table, Now: func() time.Time { return agentAt }, DeadLetters: dl})
	if err != nil {
		t.Fatal(err)
	}
	// The same content, laid out differently.
	same := old
	same.Data = []byte(`{"error_message": "boom", "stage": "dev", "message_id": "550e8400-e29b-41d4-a716-446655440000"}`)
	res, err := app.Append(context.Background(), []schema.Event{same, conflictEvent("legacy-1", "other")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcomes[0] != Duplicate || res.Outcomes[1] != Conflict {
		t.Fatalf("outcomes %v, errors %v; want duplicate, conflict", res.Outcomes, res.Errors)
	}
	var ce *ConflictError
	if !errors.As(res.Errors[1], &ce) || !ce.Legacy || ce.Stored.RecordedAt == nil {
		t.Fatalf("error %#v", res.Errors[1])
	}
	letters := dl.letters()
	if len(letters) != 1 {
		t.Fatalf("%d letters", len(letters))
	}
	rec, err := ParseConflictDeadLetter(letters[0].Record)
	if err != nil || !rec.StoredLegacy || !bytes.Contains(rec.Stored.Data, []byte(`"boom"`)) || !bytes.Contains(rec.New.Data, []byte(`"other"`)) {
		t.Fatalf("record %s (%v)", letters[0].Record, err)
	}
	// The stored item is untouched: still without a hash.
	got, err := c.DynamoDB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
		schema.AttrSubject: item[schema.AttrSubject], schema.AttrID: item[schema.AttrID]}})
	if err != nil || got.Item == nil || got.Item[schema.AttrContentHash] != nil {
		t.Fatalf("stored item %v (%v)", got.Item, err)
	}
}

// TestPrivacyDynamoDBLocal: the same agent event through every route leaves
// no verbatim input or cause in the event table.
func TestPrivacyDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	table := n.Table(schema.TableEvents)
	app, err := NewAppender(c.DynamoDB, AppenderConfig{Table: table, Now: func() time.Time { return agentAt }})
	if err != nil {
		t.Fatal(err)
	}
	h := routeHandler(t, app)
	for _, r := range agentRoutes {
		if got := r.send(t, h, app, "p-"+strings.ReplaceAll(r.name, " ", "-"), ""); got.code != http.StatusAccepted {
			t.Fatalf("%s: answer %d: %s", r.name, got.code, got.body)
		}
	}
	out, err := c.DynamoDB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != len(agentRoutes) {
		t.Fatalf("%d items, want %d", len(out.Items), len(agentRoutes))
	}
	for _, item := range out.Items {
		e, err := schema.EventFromItem(item)
		if err != nil {
			t.Fatal(err)
		}
		privacyCheck(t, e.ID, e.Data)
		for name, av := range item {
			if s, ok := av.(*types.AttributeValueMemberS); ok {
				privacyCheck(t, e.ID+" attribute "+name, []byte(s.Value))
			}
		}
	}
}

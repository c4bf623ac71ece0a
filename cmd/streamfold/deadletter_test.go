package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// TestDeadLetterReplay quarantines a valid record (as after exhausted
// retries) and a poison one; replay projects the first and marks it
// replayed, and leaves the poison one quarantined with exit status 1.
func TestDeadLetterReplay(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := map[string]string{"STREAMFOLD_DYNAMODB_ENDPOINT": os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT"), "STREAMFOLD_PREFIX": n.Prefix}
	now := time.Now().UTC()
	ev := schema.Event{ID: "dl-1", Source: "rez_agent/dev", Type: schema.TypeMessageCreated, Time: now, RecordedAt: &now,
		Data: []byte(`{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","message_type":"scheduled_hello","created_by":"scheduler","payload":{"text":"hi"},"correlation_id":"660e9500-f39c-52e5-b827-557766551111"}`)}
	if _, err := schema.Validate(&ev); err != nil {
		t.Fatal(err)
	}
	record := func(item map[string]any, seq string) events.DynamoDBEventRecord {
		t.Helper()
		var img map[string]events.DynamoDBAttributeValue
		b, _ := json.Marshal(item)
		if err := json.Unmarshal(b, &img); err != nil {
			t.Fatal(err)
		}
		return events.DynamoDBEventRecord{EventName: "INSERT", EventID: "e" + seq, Change: events.DynamoDBStreamRecord{SequenceNumber: seq, NewImage: img}}
	}
	item, err := schema.Item(ev, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	img, err := streamimage.ToLambda(item)
	if err != nil {
		t.Fatal(err)
	}
	good := events.DynamoDBEventRecord{EventName: "INSERT", EventID: "e1", Change: events.DynamoDBStreamRecord{SequenceNumber: "000000000000000000001", NewImage: img}}
	bad := record(map[string]any{"subject": map[string]string{"S": "x/1"}, "id": map[string]string{"S": "p"}, "type": map[string]string{"S": "nope"}}, "000000000000000000002")
	dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	for _, r := range []struct {
		rec    events.DynamoDBEventRecord
		reason string
	}{{good, "retries-exhausted"}, {bad, "poison"}} {
		d, err := projector.NewDeadLetter("projector", r.reason, r.rec, errors.New("injected"), now)
		if err != nil {
			t.Fatal(err)
		}
		if err := dl.Put(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, env, "", "deadletter", "replay")
	if code != exitFailed {
		t.Fatalf("replay exit %d, want %d (one still poison)\n%s\n%s", code, exitFailed, out, errOut)
	}
	var res struct {
		Replayed    int
		StillPoison []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Replayed != 1 || len(res.StillPoison) != 1 || !strings.Contains(res.StillPoison[0], "poison record") {
		t.Fatalf("replay result %s (%v)", out, err)
	}
	code, out, _ = runCLI(t, env, "", "deadletter", "list", "--json")
	if code != exitOK || !strings.Contains(out, `"status": "replayed"`) || !strings.Contains(out, `"status": "quarantined"`) {
		t.Fatalf("list exit %d:\n%s", code, out)
	}
	_, summary, _ := runCLI(t, env, "", "summary", "--json")
	if !strings.Contains(summary, `"messages": 1`) {
		t.Fatalf("the replayed message was not projected:\n%s", summary)
	}
}

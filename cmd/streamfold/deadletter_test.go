package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// TestDeadLetterReplay quarantines a valid record (as after exhausted
// retries) and a poison one; replay --position projects the first alone and
// marks it replayed; a position no letter has fails (exit 1); replay of all
// leaves the poison one quarantined with exit status 1.
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
	type result struct {
		Replayed    int
		StillPoison []string
	}
	// --position replays the good one alone (the poison one is not tried).
	code, out, errOut := runCLI(t, env, "", "deadletter", "replay", "--position", deadletter.Position(good.Change.SequenceNumber, good.EventID))
	var one result
	if err := json.Unmarshal([]byte(out), &one); code != exitOK || err != nil || one.Replayed != 1 || len(one.StillPoison) != 0 {
		t.Fatalf("replay --position: exit %d, result %s (%v)\n%s", code, out, err, errOut)
	}
	if code, _, errOut := runCLI(t, env, "", "deadletter", "replay", "--position", "0#none"); code != exitFailed || !strings.Contains(errOut, `no dead letter at "0#none"`) {
		t.Fatalf("replay --position of no letter: exit %d, stderr %s; want %d naming the position", code, errOut, exitFailed)
	}
	code, out, errOut = runCLI(t, env, "", "deadletter", "replay")
	if code != exitFailed {
		t.Fatalf("replay exit %d, want %d (one still poison)\n%s\n%s", code, exitFailed, out, errOut)
	}
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Replayed != 0 || len(res.StillPoison) != 1 || !strings.Contains(res.StillPoison[0], "poison record") {
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

// TestDeadLetterIngest: the ingest function's dead letters (consumer
// "ingest"), as it writes them, listed and replayed through the Step
// Functions adapter: an event with its recorded tags is appended, one whose
// state machine was gone gets its tags from --sfn-tags, one of a machine
// that is no agent is skipped, and those that still fail stay quarantined
// (exit 1). A second replay has nothing left but those.
func TestDeadLetterIngest(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := localEnv(n)
	ctx := context.Background()
	fixture := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile("../ingest/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	agent := map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}
	running := fixture("seed002_running.json")
	var other map[string]any
	if err := json.Unmarshal(running, &other); err != nil {
		t.Fatal(err)
	}
	other["id"] = "etl-1"
	other["detail"].(map[string]any)["stateMachineArn"] = "arn:aws:states:us-west-2:123:stateMachine:nightly-etl"
	other["detail"].(map[string]any)["executionArn"] = "arn:aws:states:us-west-2:123:execution:nightly-etl:1"
	etl, _ := json.Marshal(other)
	letters := []struct {
		raw    []byte
		tags   map[string]string
		reason string
	}{
		{running, agent, ingest.ReasonInvalid}, // rejected by an older version
		{fixture("eventbridge_succeeded_without_stopdate.json"), agent, ingest.ReasonInvalid},
		{fixture("eventbridge_ec2_state_change.json"), nil, ingest.ReasonNotStepFunctions},
		{etl, nil, ingest.ReasonStateMachineNotFound},
	}
	dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	for _, l := range letters {
		var ev ingest.EventBridgeEvent
		if err := json.Unmarshal(l.raw, &ev); err != nil {
			t.Fatal(err)
		}
		rec, err := ingest.StepFunctionsDeadLetter{Event: l.raw, Tags: l.tags}.Record()
		if err != nil {
			t.Fatal(err)
		}
		d := projector.DeadLetter{Consumer: ingest.DeadLetterConsumer, Position: ingest.DeadLetterPosition(ev, l.raw), EventID: ev.ID, EventName: ev.DetailType,
			Reason: l.reason, Error: "as the function reported it", Record: rec, QuarantinedAt: time.Now().UTC(), Status: "quarantined"}
		if err := dl.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	code, out, errOut := runCLI(t, env, "", "deadletter", "list", "--consumer", "ingest")
	want := []string{
		"POSITION                                                   STATUS       REASON                   ERROR",
		"2009-02-13T23:31:30Z#6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01  quarantined  invalid                  as the function reported it",
		"2009-02-13T23:31:30Z#etl-1                                 quarantined  state-machine-not-found  as the function reported it",
		"2009-02-13T23:31:40Z#0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8  quarantined  invalid                  as the function reported it",
		"2015-11-11T21:29:54Z#7bf73129-1428-4cd3-a780-95db273d1602  quarantined  not-step-functions       as the function reported it",
		`4 dead letters for consumer "ingest" in ` + n.Table(schema.TableDeadLetters),
	}
	if code != exitOK || out != strings.Join(want, "\n")+"\n" {
		t.Fatalf("list exit %d:\n%s\nwant:\n%s\n%s", code, out, strings.Join(want, "\n"), errOut)
	}

	tags := t.TempDir() + "/tags.json"
	if err := os.WriteFile(tags, []byte(`{"arn:aws:states:us-west-2:123:stateMachine:nightly-etl":{"Team":"data"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	type replay struct {
		Replayed    int
		StillPoison []string
		Failed      []string
		Results     []struct{ Position, EventID, Outcome, Error string }
	}
	code, out, errOut = runCLI(t, env, "", "deadletter", "replay", "--consumer", "ingest", "--sfn-tags", tags)
	var res replay
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s %s", err, out, errOut)
	}
	outcomes := map[string]string{}
	for _, r := range res.Results {
		outcomes[r.EventID] = r.Outcome
	}
	wantOutcomes := map[string]string{"6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01": "appended", "etl-1": "skipped",
		"0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8": "still_failing", "7bf73129-1428-4cd3-a780-95db273d1602": "still_failing"}
	if code != exitFailed || res.Replayed != 2 || len(res.StillPoison) != 2 || len(res.Failed) != 0 || fmt.Sprint(outcomes) != fmt.Sprint(wantOutcomes) {
		t.Fatalf("replay exit %d (want %d): %s", code, exitFailed, out)
	}
	if !strings.Contains(res.StillPoison[0]+res.StillPoison[1], "data.stopDate: is required when status is SUCCEEDED") {
		t.Errorf("still poison without the reason: %v", res.StillPoison)
	}
	evs, err := c.DynamoDB.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(n.Table(schema.TableEvents))})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("event table: %v items, %v; want the replayed event", len(evs.Items), err)
	}

	code, out, _ = runCLI(t, env, "", "deadletter", "replay", "--consumer", "ingest")
	res = replay{}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitFailed || res.Replayed != 0 || len(res.Results) != 2 {
		t.Fatalf("second replay exit %d: %s", code, out)
	}
	if code, _, errOut := runCLI(t, env, "", "deadletter", "redrive", "--consumer", "ingest", "-"); code != exitUsage || !strings.Contains(errOut, "use list and replay") {
		t.Fatalf("redrive --consumer ingest: exit %d %s", code, errOut)
	}
}

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// TestDeadLetterOnDynamoDBLocal: the function as main wires it, on
// DynamoDB Local: an agent's event that fails validation is written to the
// dead-letters table (consumer "ingest") and the invocation succeeds; a
// redelivery keeps one entry; a valid event is appended; `deadletter list`
// reads the entry back with everything needed to replay it.
func TestDeadLetterOnDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	ctx := context.Background()
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		t.Fatal(err)
	}
	dl := deadletter.NewTable(c.DynamoDB, n.Table(schema.TableDeadLetters))
	d := newDispatcher(t, app, agentTags, dl)
	d.sfn.now = time.Now

	invalid := readFixture(t, "eventbridge_succeeded_without_stopdate.json")
	for i := 0; i < 2; i++ { // EventBridge may deliver an event twice
		out, err := d.Handle(ctx, invalid)
		if err != nil {
			t.Fatalf("delivery %d: %v (a permanent failure must not fail the invocation)", i+1, err)
		}
		if res := out.(stepFunctionsResult); res.Outcome != "dead_lettered" || res.Reason != ingest.ReasonInvalid {
			t.Fatalf("delivery %d: %+v", i+1, res)
		}
	}
	out, err := d.Handle(ctx, readFixture(t, "seed002_running.json"))
	if err != nil || out.(stepFunctionsResult).Outcome != "appended" {
		t.Fatalf("valid event: %+v, %v", out, err)
	}

	letters, err := dl.List(ctx, ingest.DeadLetterConsumer)
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 {
		t.Fatalf("%d dead letters, want 1: %+v", len(letters), letters)
	}
	l := letters[0]
	if l.Position != "2009-02-13T23:31:40Z#0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8" || l.EventID != "0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8" ||
		l.EventName != ingest.DetailTypeExecutionStatusChange || l.Reason != "invalid" || l.Status != "quarantined" ||
		!strings.HasSuffix(l.Error, "data.stopDate: is required when status is SUCCEEDED") || time.Since(l.QuarantinedAt) > time.Minute {
		t.Errorf("dead letter %+v", l)
	}
	rec, err := ingest.ParseStepFunctionsDeadLetter(l.Record)
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.Event) != strings.TrimSpace(string(invalid)) || rec.Tags["Type"] != "Agent" || rec.Tags["Application"] != "StepFunctionsAgent" {
		t.Errorf("record %s", l.Record)
	}
	got, err := c.DynamoDB.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(n.Table(schema.TableEvents))})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 1 {
		t.Fatalf("event table holds %d items, want the valid event only", len(got.Items))
	}
}

package projector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestDeadLetterExpiresAndCounts: a dead letter stored on DynamoDB Local
// expires schema.DeadLetterRetentionDays after its quarantine, and each
// one stored is one CloudWatch metric datum in embedded metric format
// (namespace Streamfold, metric DeadLettered, dimensions Table and
// Consumer), which the deployment alarms on.
func TestDeadLetterExpiresAndCounts(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	var metrics bytes.Buffer
	table := n.Table(schema.TableDeadLetters)
	dl := projector.NewDeadLetters(c.DynamoDB, table).EmitMetrics(&metrics)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	rec := events.DynamoDBEventRecord{EventID: "e1", EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: "42"}}
	d, err := projector.NewDeadLetter("projector", "poison", rec, errors.New("bad data"), at)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := dl.Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	out, err := c.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		"consumer": &types.AttributeValueMemberS{Value: "projector"}, "position": &types.AttributeValueMemberS{Value: d.Position}}})
	if err != nil {
		t.Fatal(err)
	}
	ttl, _ := out.Item[schema.AttrTTL].(*types.AttributeValueMemberN)
	if want := strconv.FormatInt(at.AddDate(0, 0, schema.DeadLetterRetentionDays).Unix(), 10); ttl == nil || ttl.Value != want {
		t.Fatalf("ttl = %v, want %s (90 days after the quarantine)", ttl, want)
	}

	var line struct {
		AWS struct {
			Timestamp         int64 `json:"Timestamp"`
			CloudWatchMetrics []struct {
				Namespace  string              `json:"Namespace"`
				Dimensions [][]string          `json:"Dimensions"`
				Metrics    []map[string]string `json:"Metrics"`
			} `json:"CloudWatchMetrics"`
		} `json:"_aws"`
		Table, Consumer, Reason string
		DeadLettered            float64
	}
	lines := bytes.Split(bytes.TrimSpace(metrics.Bytes()), []byte("\n"))
	if len(lines) != 1 {
		t.Fatalf("%d metric lines, want 1:\n%s", len(lines), metrics.String())
	}
	if err := json.Unmarshal(lines[0], &line); err != nil {
		t.Fatal(err)
	}
	m := line.AWS.CloudWatchMetrics
	if len(m) != 1 || m[0].Namespace != projector.DeadLetterNamespace || len(m[0].Metrics) != 1 || m[0].Metrics[0]["Name"] != projector.DeadLetterMetric ||
		len(m[0].Dimensions) != 1 || len(m[0].Dimensions[0]) != 2 || line.Table != table || line.Consumer != "projector" || line.Reason != "poison" ||
		line.DeadLettered != 1 || line.AWS.Timestamp != at.UnixMilli() {
		t.Fatalf("metric line %s", lines[0])
	}
}

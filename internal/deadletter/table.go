package deadletter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/internal/emf"
	"github.com/streamfold/streamfold/schema"
)

// TableAPI is what Table needs of the DynamoDB client.
type TableAPI interface {
	ddbapi.PutItem
	ddbapi.Query
	ddbapi.UpdateItem
}

// Table stores dead letters in the dead-letters table. Putting the same
// record twice keeps one item (the key is consumer + position). Each item
// expires schema.DeadLetterRetentionDays after it was quarantined. With
// EmitMetrics, every dead letter stored is also one CloudWatch metric datum
// (Metric), which the deployment alarms on. It is safe for concurrent use.
type Table struct {
	api     TableAPI
	table   string
	metrics io.Writer
	mu      sync.Mutex // serialises metric lines
}

// NewTable returns the dead-letter store on table (a physical name).
func NewTable(api TableAPI, table string) *Table {
	return &Table{api: api, table: table}
}

// The dead-letter metric: namespace Namespace, name Metric (Count, one per
// dead letter stored), dimensions Table (the dead-letter table, so one per
// deployment) and Consumer.
const (
	Namespace = "Streamfold"
	Metric    = "DeadLettered"
)

// EmitMetrics makes Put write one CloudWatch embedded-metric-format line
// per dead letter stored to w (a Lambda function's standard output, which
// CloudWatch Logs turns into the metric). It returns s.
func (s *Table) EmitMetrics(w io.Writer) *Table {
	s.metrics = w
	return s
}

// emitMetric writes the EMF line of one dead letter of consumer.
func (s *Table) emitMetric(consumer, reason string, at time.Time) {
	if s.metrics == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = emf.Write(s.metrics, emf.Datum{
		Namespace: Namespace, Metric: Metric, Value: 1, Time: at,
		Dims:   []emf.Dim{{Name: "Table", Value: s.table}, {Name: "Consumer", Value: consumer}},
		Fields: map[string]string{"Reason": reason},
	})
}

// Put stores a dead letter.
func (s *Table) Put(ctx context.Context, d Letter) error {
	if d.QuarantinedAt.IsZero() {
		d.QuarantinedAt = time.Now().UTC()
	}
	item := map[string]types.AttributeValue{
		"consumer":        &types.AttributeValueMemberS{Value: d.Consumer},
		"position":        &types.AttributeValueMemberS{Value: d.Position},
		"stream_arn":      &types.AttributeValueMemberS{Value: d.StreamARN},
		"sequence_number": &types.AttributeValueMemberS{Value: d.SequenceNumber},
		"event_id":        &types.AttributeValueMemberS{Value: d.EventID},
		"event_name":      &types.AttributeValueMemberS{Value: d.EventName},
		"reason":          &types.AttributeValueMemberS{Value: d.Reason},
		"error":           &types.AttributeValueMemberS{Value: d.Error},
		"record":          &types.AttributeValueMemberS{Value: d.Record},
		"quarantined_at":  &types.AttributeValueMemberS{Value: d.QuarantinedAt.Format(time.RFC3339Nano)},
		"status":          &types.AttributeValueMemberS{Value: d.Status},
		schema.AttrTTL: &types.AttributeValueMemberN{Value: strconv.FormatInt(
			d.QuarantinedAt.AddDate(0, 0, schema.DeadLetterRetentionDays).Unix(), 10)},
	}
	if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("deadletter: put %s/%s: %w", d.Consumer, d.Position, err)
	}
	s.emitMetric(d.Consumer, d.Reason, d.QuarantinedAt)
	return nil
}

// Sink returns the Sink that stores records as dead letters of consumer
// with the given reason, stamped with the current time.
func (s *Table) Sink(consumer, reason string) TableSink {
	return TableSink{Table: s, Consumer: consumer, Reason: reason}
}

// OnPoison returns the function a stream runner calls for a record that
// exhausted its retries (streamrun.Config.OnPoison): it quarantines the
// record as a dead letter of consumer with reason "retries-exhausted".
func (s *Table) OnPoison(consumer string) func(context.Context, events.DynamoDBEventRecord, error) error {
	return s.Sink(consumer, ReasonRetriesExhausted).Quarantine
}

// List returns a consumer's dead letters in position order.
func (s *Table) List(ctx context.Context, consumer string) ([]Letter, error) {
	var out []Letter
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#c = :c"),
		ExpressionAttributeNames:  map[string]string{"#c": "consumer"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": &types.AttributeValueMemberS{Value: consumer}},
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("deadletter: list %s: %w", consumer, err)
		}
		for _, it := range page.Items {
			str := func(k string) string {
				if v, ok := it[k].(*types.AttributeValueMemberS); ok {
					return v.Value
				}
				return ""
			}
			qa, _ := time.Parse(time.RFC3339Nano, str("quarantined_at"))
			out = append(out, Letter{
				Consumer: str("consumer"), Position: str("position"), StreamARN: str("stream_arn"),
				SequenceNumber: str("sequence_number"), EventID: str("event_id"), EventName: str("event_name"),
				Reason: str("reason"), Error: str("error"), Record: str("record"), QuarantinedAt: qa, Status: str("status"),
			})
		}
	}
	return out, nil
}

// MarkReplayed records that a dead letter was re-driven successfully.
func (s *Table) MarkReplayed(ctx context.Context, d Letter) error {
	_, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table),
		Key: map[string]types.AttributeValue{
			"consumer": &types.AttributeValueMemberS{Value: d.Consumer},
			"position": &types.AttributeValueMemberS{Value: d.Position},
		},
		UpdateExpression:          aws.String("SET #s = :s"),
		ConditionExpression:       aws.String("attribute_exists(#c)"),
		ExpressionAttributeNames:  map[string]string{"#s": "status", "#c": "consumer"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: StatusReplayed}},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("deadletter: %s/%s no longer exists", d.Consumer, d.Position)
	}
	return err
}

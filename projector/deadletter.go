package projector

import (
	"context"
	"encoding/json"
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
	"github.com/streamfold/streamfold/internal/emf"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// DeadLetter is a stream record a consumer could not process, kept with
// everything needed to understand and replay it.
type DeadLetter struct {
	Consumer       string    `json:"consumer"`
	Position       string    `json:"position"` // sortable: zero-padded sequence number + "#" + event id
	StreamARN      string    `json:"stream_arn"`
	SequenceNumber string    `json:"sequence_number"`
	EventID        string    `json:"event_id"`
	EventName      string    `json:"event_name"`
	Reason         string    `json:"reason"` // poison | retries-exhausted
	Error          string    `json:"error"`
	Record         string    `json:"record"` // the aws-lambda-go record as JSON
	QuarantinedAt  time.Time `json:"quarantined_at"`
	Status         string    `json:"status"` // quarantined | replayed
}

// NewDeadLetter builds a DeadLetter for a record.
func NewDeadLetter(consumer, reason string, rec events.DynamoDBEventRecord, cause error, now time.Time) (DeadLetter, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return DeadLetter{}, fmt.Errorf("projector: encode dead letter record: %w", err)
	}
	seq := rec.Change.SequenceNumber
	return DeadLetter{
		Consumer: consumer, Position: Position(seq, rec.EventID),
		StreamARN: rec.EventSourceArn, SequenceNumber: seq, EventID: rec.EventID, EventName: rec.EventName,
		Reason: reason, Error: cause.Error(), Record: string(raw), QuarantinedAt: now.UTC(), Status: "quarantined",
	}, nil
}

// Position renders a sortable dead-letter position from a sequence number.
func Position(seq, eventID string) string {
	return streamimage.PadSeq(seq) + "#" + eventID
}

// LambdaRecord decodes the stored record.
func (d DeadLetter) LambdaRecord() (events.DynamoDBEventRecord, error) {
	var rec events.DynamoDBEventRecord
	err := json.Unmarshal([]byte(d.Record), &rec)
	return rec, err
}

// DeadLetterAPI is what DeadLetters needs of the DynamoDB client.
type DeadLetterAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// DeadLetters stores dead letters in the dead-letters table. Putting the
// same record twice keeps one item (the key is consumer + position). Each
// item expires schema.DeadLetterRetentionDays after it was quarantined.
// With EmitMetrics, every dead letter stored is also one CloudWatch metric
// datum (DeadLetterMetric), which the deployment alarms on.
type DeadLetters struct {
	api     DeadLetterAPI
	table   string
	metrics io.Writer
	mu      sync.Mutex // serialises metric lines
}

// NewDeadLetters returns the dead-letter store on table (a physical name).
func NewDeadLetters(api DeadLetterAPI, table string) *DeadLetters {
	return &DeadLetters{api: api, table: table}
}

// The dead-letter metric: namespace DeadLetterNamespace, name
// DeadLetterMetric (Count, one per dead letter stored), dimensions Table
// (the dead-letter table, so one per deployment) and Consumer.
const (
	DeadLetterNamespace = "Streamfold"
	DeadLetterMetric    = "DeadLettered"
)

// EmitMetrics makes Put write one CloudWatch embedded-metric-format line
// per dead letter stored to w (a Lambda function's standard output, which
// CloudWatch Logs turns into the metric). It returns s.
func (s *DeadLetters) EmitMetrics(w io.Writer) *DeadLetters {
	s.metrics = w
	return s
}

// emitMetric writes the EMF line of one dead letter of consumer.
func (s *DeadLetters) emitMetric(consumer, reason string, at time.Time) {
	if s.metrics == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = emf.Write(s.metrics, emf.Datum{
		Namespace: DeadLetterNamespace, Metric: DeadLetterMetric, Value: 1, Time: at,
		Dims:   []emf.Dim{{Name: "Table", Value: s.table}, {Name: "Consumer", Value: consumer}},
		Fields: map[string]string{"Reason": reason},
	})
}

// Put stores a dead letter.
func (s *DeadLetters) Put(ctx context.Context, d DeadLetter) error {
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
		return fmt.Errorf("projector: put dead letter %s/%s: %w", d.Consumer, d.Position, err)
	}
	s.emitMetric(d.Consumer, d.Reason, d.QuarantinedAt)
	return nil
}

// Quarantine stores rec as a dead letter of consumer with the given reason
// and cause. Its signature fits streamrun.Config.OnPoison once consumer and
// reason are bound (see OnPoison).
func (s *DeadLetters) Quarantine(ctx context.Context, consumer, reason string, rec events.DynamoDBEventRecord, cause error) error {
	d, err := NewDeadLetter(consumer, reason, rec, cause, time.Now())
	if err != nil {
		return err
	}
	return s.Put(ctx, d)
}

// OnPoison returns the function a stream runner calls for a record that
// exhausted its retries: it quarantines the record with reason
// "retries-exhausted".
func (s *DeadLetters) OnPoison(consumer string) func(context.Context, events.DynamoDBEventRecord, error) error {
	return func(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
		return s.Quarantine(ctx, consumer, "retries-exhausted", rec, cause)
	}
}

// List returns a consumer's dead letters in stream order.
func (s *DeadLetters) List(ctx context.Context, consumer string) ([]DeadLetter, error) {
	var out []DeadLetter
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
			return nil, fmt.Errorf("projector: list dead letters: %w", err)
		}
		for _, it := range page.Items {
			str := func(k string) string {
				if v, ok := it[k].(*types.AttributeValueMemberS); ok {
					return v.Value
				}
				return ""
			}
			qa, _ := time.Parse(time.RFC3339Nano, str("quarantined_at"))
			out = append(out, DeadLetter{
				Consumer: str("consumer"), Position: str("position"), StreamARN: str("stream_arn"),
				SequenceNumber: str("sequence_number"), EventID: str("event_id"), EventName: str("event_name"),
				Reason: str("reason"), Error: str("error"), Record: str("record"), QuarantinedAt: qa, Status: str("status"),
			})
		}
	}
	return out, nil
}

// MarkReplayed records that a dead letter was re-driven successfully.
func (s *DeadLetters) MarkReplayed(ctx context.Context, d DeadLetter) error {
	_, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table),
		Key: map[string]types.AttributeValue{
			"consumer": &types.AttributeValueMemberS{Value: d.Consumer},
			"position": &types.AttributeValueMemberS{Value: d.Position},
		},
		UpdateExpression:          aws.String("SET #s = :s"),
		ConditionExpression:       aws.String("attribute_exists(#c)"),
		ExpressionAttributeNames:  map[string]string{"#s": "status", "#c": "consumer"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "replayed"}},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("projector: dead letter %s/%s no longer exists", d.Consumer, d.Position)
	}
	return err
}

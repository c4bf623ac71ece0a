package streamrun

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
)

// Checkpoint is the progress of one consumer on one shard.
type Checkpoint struct {
	ShardID string
	// SequenceNumber is the last record fully dealt with: handled
	// successfully or given to OnPoison. "" when none yet.
	SequenceNumber string
	// Done reports that the shard is closed and every record of it was
	// dealt with.
	Done bool
	// RunnerSeq is SequenceNumber as a Runner saved it, kept in a second
	// attribute: a checkpoint whose SequenceNumber is past its RunnerSeq
	// was moved by something else, past records never handed over (a
	// gap). "" when the checkpoint was not saved by a Runner of this
	// version.
	RunnerSeq string
	// RecordTime is the ApproximateCreationDateTime of the record at
	// RunnerSeq (zero when unknown): where such a gap begins.
	RecordTime time.Time
}

// CheckpointStore persists per-shard progress. Save is called from one
// goroutine per shard, concurrently for different shards.
type CheckpointStore interface {
	Load(ctx context.Context, consumer string) (map[string]Checkpoint, error)
	Save(ctx context.Context, consumer string, cp Checkpoint) error
}

// DynamoDBAPI is the part of the DynamoDB client DynamoCheckpoints uses;
// *dynamodb.Client satisfies it.
type DynamoDBAPI interface {
	ddbapi.GetItem
	ddbapi.PutItem
	ddbapi.Query
}

// Attributes of a checkpoint item (table schema.TableCheckpoints).
const (
	AttrConsumer       = "consumer"
	AttrShardID        = "shard_id"
	AttrSequenceNumber = "sequence_number"
	AttrDone           = "done"
	AttrUpdatedAt      = "updated_at"
	AttrRunnerSeq      = "runner_sequence_number"
	AttrRecordTime     = "record_time"
)

// DynamoCheckpoints keeps checkpoints in the checkpoints table: one item
// per (consumer, shard_id) with sequence_number, done and updated_at, and
// runner_sequence_number and record_time (Checkpoint.RunnerSeq,
// RecordTime) when set.
type DynamoCheckpoints struct {
	api   DynamoDBAPI
	table string
	now   func() time.Time
}

// NewDynamoCheckpoints stores checkpoints in the table with the given
// physical name (naming.Table(schema.TableCheckpoints)).
func NewDynamoCheckpoints(api DynamoDBAPI, table string) *DynamoCheckpoints {
	return &DynamoCheckpoints{api: api, table: table, now: time.Now}
}

// Load returns every checkpoint of the consumer by shard id, read
// consistently.
func (d *DynamoCheckpoints) Load(ctx context.Context, consumer string) (map[string]Checkpoint, error) {
	out := map[string]Checkpoint{}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("#c = :c"),
		ExpressionAttributeNames:  map[string]string{"#c": AttrConsumer},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": &types.AttributeValueMemberS{Value: consumer}},
		ConsistentRead:            aws.Bool(true),
	}
	for {
		res, err := d.api.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("streamrun: load checkpoints of %q: %w", consumer, err)
		}
		for _, item := range res.Items {
			cp := fromItem(item)
			out[cp.ShardID] = cp
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// Get returns the checkpoint of one shard, ok false when there is none.
func (d *DynamoCheckpoints) Get(ctx context.Context, consumer, shardID string) (cp Checkpoint, ok bool, err error) {
	res, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(d.table),
		Key:            key(consumer, shardID),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("streamrun: get checkpoint %q/%q: %w", consumer, shardID, err)
	}
	if len(res.Item) == 0 {
		return Checkpoint{}, false, nil
	}
	return fromItem(res.Item), true, nil
}

// Save writes the checkpoint, replacing the shard's previous one.
func (d *DynamoCheckpoints) Save(ctx context.Context, consumer string, cp Checkpoint) error {
	item := key(consumer, cp.ShardID)
	if cp.SequenceNumber != "" {
		item[AttrSequenceNumber] = &types.AttributeValueMemberS{Value: cp.SequenceNumber}
	}
	if cp.RunnerSeq != "" {
		item[AttrRunnerSeq] = &types.AttributeValueMemberS{Value: cp.RunnerSeq}
	}
	if !cp.RecordTime.IsZero() {
		item[AttrRecordTime] = &types.AttributeValueMemberS{Value: cp.RecordTime.UTC().Format(time.RFC3339Nano)}
	}
	item[AttrDone] = &types.AttributeValueMemberBOOL{Value: cp.Done}
	item[AttrUpdatedAt] = &types.AttributeValueMemberS{Value: d.now().UTC().Format(time.RFC3339Nano)}
	if _, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item}); err != nil {
		return fmt.Errorf("streamrun: save checkpoint %q/%q: %w", consumer, cp.ShardID, err)
	}
	return nil
}

func key(consumer, shardID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrConsumer: &types.AttributeValueMemberS{Value: consumer},
		AttrShardID:  &types.AttributeValueMemberS{Value: shardID},
	}
}

func fromItem(item map[string]types.AttributeValue) Checkpoint {
	var cp Checkpoint
	if v, ok := item[AttrShardID].(*types.AttributeValueMemberS); ok {
		cp.ShardID = v.Value
	}
	if v, ok := item[AttrSequenceNumber].(*types.AttributeValueMemberS); ok {
		cp.SequenceNumber = v.Value
	}
	if v, ok := item[AttrDone].(*types.AttributeValueMemberBOOL); ok {
		cp.Done = v.Value
	}
	if v, ok := item[AttrRunnerSeq].(*types.AttributeValueMemberS); ok {
		cp.RunnerSeq = v.Value
	}
	if v, ok := item[AttrRecordTime].(*types.AttributeValueMemberS); ok {
		if t, err := time.Parse(time.RFC3339Nano, v.Value); err == nil {
			cp.RecordTime = t
		}
	}
	return cp
}

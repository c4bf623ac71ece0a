package streamrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// ErrTrimmed is wrapped by ReadRange when the records asked for are past
// the stream's 24-hour retention (or their shard is gone): they can no
// longer be read from the stream.
var ErrTrimmed = errors.New("streamrun: records are past the stream's retention")

// ErrRangeIncomplete is wrapped by ReadRange when the shard's records ran
// out before the end of the range (an open shard that returned nothing
// more after repeated reads).
var ErrRangeIncomplete = errors.New("streamrun: the stream ended before the range did")

// Range names the records of one shard from Start to End, both included:
// what a Lambda on-failure destination reports of a batch the event source
// mapping gave up on (its DDBStreamBatchInfo).
type Range struct {
	StreamARN string
	ShardID   string
	Start     string // first sequence number
	End       string // last sequence number
}

// Validate names the missing field.
func (r Range) Validate() error {
	for _, f := range []struct{ name, v string }{
		{"streamArn", r.StreamARN}, {"shardId", r.ShardID},
		{"startSequenceNumber", r.Start}, {"endSequenceNumber", r.End},
	} {
		if f.v == "" {
			return fmt.Errorf("streamrun: range: %s is required", f.name)
		}
	}
	if streamimage.CompareSeq(r.Start, r.End) > 0 {
		return fmt.Errorf("streamrun: range: startSequenceNumber %s is after endSequenceNumber %s", r.Start, r.End)
	}
	return nil
}

// rangeEmptyPolls is how many empty GetRecords answers in a row ReadRange
// accepts from an open shard before it gives up on reaching the range's end.
const rangeEmptyPolls = 5

// ReadRange reads the records of r from the stream, converted as the event
// source mapping delivers them (Lambda's record shape, region taken from
// the stream ARN), in stream order. Transient errors are retried with
// backoff until ctx ends. Records past the stream's retention give an error
// wrapping ErrTrimmed; a shard that ends before r.End gives the records read
// and an error wrapping ErrRangeIncomplete.
func ReadRange(ctx context.Context, api StreamsAPI, r Range) ([]events.DynamoDBEventRecord, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	region := regionOf(r.StreamARN)
	var iter *string
	err := retryTransient(ctx, func() error {
		out, err := api.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(r.StreamARN), ShardId: aws.String(r.ShardID),
			ShardIteratorType: stypes.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(r.Start),
		})
		if err == nil {
			iter = out.ShardIterator
		}
		return err
	})
	switch {
	case isTrimmed(err) || isNotFound(err):
		return nil, fmt.Errorf("%w: shard %s from %s: %w", ErrTrimmed, r.ShardID, r.Start, err)
	case err != nil:
		return nil, fmt.Errorf("streamrun: shard %s: GetShardIterator at %s: %w", r.ShardID, r.Start, err)
	}
	var out []events.DynamoDBEventRecord
	empty := 0
	for iter != nil {
		var page *dynamodbstreams.GetRecordsOutput
		err := retryTransient(ctx, func() error {
			var err error
			page, err = api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(maxGetRecords)})
			return err
		})
		switch {
		case isTrimmed(err) || isNotFound(err):
			return out, fmt.Errorf("%w: shard %s after %d records of the range: %w", ErrTrimmed, r.ShardID, len(out), err)
		case err != nil:
			return out, fmt.Errorf("streamrun: shard %s: GetRecords: %w", r.ShardID, err)
		}
		for _, rec := range page.Records {
			seq := ""
			if rec.Dynamodb != nil {
				seq = aws.ToString(rec.Dynamodb.SequenceNumber)
			}
			if streamimage.CompareSeq(seq, r.End) > 0 {
				return out, nil
			}
			lr, err := streamimage.LambdaRecord(rec, r.StreamARN, region)
			if err != nil {
				return out, fmt.Errorf("streamrun: convert record %s: %w", seq, err)
			}
			out = append(out, lr)
			if seq == r.End {
				return out, nil
			}
		}
		iter = page.NextShardIterator
		if len(page.Records) > 0 {
			empty = 0
			continue
		}
		if empty++; empty >= rangeEmptyPolls {
			break
		}
		if err := retry.Sleep(ctx, 50*time.Millisecond); err != nil {
			return out, err
		}
	}
	return out, fmt.Errorf("%w: shard %s: read %d records, the last before %s", ErrRangeIncomplete, r.ShardID, len(out), r.End)
}

// retryTransient calls fn until it succeeds, fails for good, or ctx ends,
// pausing 100 ms, 200 ms, ... up to 5 s between transient failures.
func retryTransient(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !transient(err) {
			return err
		}
		if serr := retry.Sleep(ctx, retry.Exp(100*time.Millisecond, 5*time.Second, attempt)); serr != nil {
			return err
		}
	}
}

// regionOf returns the region of an ARN, "" when it is not one.
func regionOf(s string) string {
	a, err := arn.Parse(s)
	if err != nil {
		return ""
	}
	return a.Region
}

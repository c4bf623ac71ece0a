package redrive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/internal/laptop/streamrun"
)

// onFailureRecord is what a stream event source mapping sends to its
// on-failure destination for a batch it gave up on: metadata naming the
// records (SQS, SNS) and, in an S3 destination's object only, "payload":
// the whole invocation event ({"Records": [...]}) as a JSON string
// (AWS Lambda developer guide, "Retain discarded records for a DynamoDB
// event source in Lambda"; testdata/README.md).
type onFailureRecord struct {
	RequestContext struct {
		Condition   string `json:"condition"`
		FunctionArn string `json:"functionArn"`
	} `json:"requestContext"`
	Timestamp string `json:"timestamp"`
	BatchInfo *struct {
		ShardID             string `json:"shardId"`
		StartSequenceNumber string `json:"startSequenceNumber"`
		EndSequenceNumber   string `json:"endSequenceNumber"`
		StreamArn           string `json:"streamArn"`
		BatchSize           int    `json:"batchSize"`
	} `json:"DDBStreamBatchInfo"`
	Payload json.RawMessage `json:"payload"`
}

// Batch is one batch to redrive, with where it was read from.
type Batch struct {
	Where     string // "message 2", "message 1 of value 3", ...
	Condition string
	// Function is the name of the function the mapping invoked (from
	// requestContext.functionArn; empty when the record has none).
	Function  string
	Range     streamrun.Range
	BatchSize int
	// Records are the batch's records when the on-failure record carried
	// them (an S3 destination's payload): redrive hands them over as they
	// are and never reads the stream. Nil for SQS/SNS records.
	Records []events.DynamoDBEventRecord
}

// payloadRecords decodes an S3 on-failure record's payload: the invocation
// event as a JSON string (as documented) or, tolerated, as a JSON object.
func payloadRecords(raw json.RawMessage) ([]events.DynamoDBEventRecord, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		raw = json.RawMessage(text)
	}
	var ev struct {
		Records *[]events.DynamoDBEventRecord `json:"Records"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("not a DynamoDB stream event: %w", err)
	}
	if ev.Records == nil {
		return nil, errors.New("no Records: not a DynamoDB stream event")
	}
	for i, r := range *ev.Records {
		if r.Change.SequenceNumber == "" {
			return nil, fmt.Errorf("Records[%d]: dynamodb.SequenceNumber is required", i)
		}
	}
	return *ev.Records, nil
}

// ParseOnFailure reads on-failure records in any of the shapes a person
// gets them in: the record itself, one per line or concatenated; a JSON
// array of them; an SQS message ({"Body": "<record>"}); or the output of
// `aws sqs receive-message` ({"Messages": [...]}). It names the value and
// field of the first malformed one.
func ParseOnFailure(r io.Reader) ([]Batch, error) {
	dec := json.NewDecoder(r)
	var out []Batch
	for n := 1; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("value %d: not JSON: %w", n, err)
		}
		got, err := batchesOf(raw, fmt.Sprintf("value %d", n))
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	if len(out) == 0 {
		return nil, errors.New("no on-failure record in the input")
	}
	return out, nil
}

func batchesOf(raw json.RawMessage, where string) ([]Batch, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var out []Batch
		for i, it := range items {
			got, err := batchesOf(it, fmt.Sprintf("%s, item %d", where, i+1))
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	}
	var probe struct {
		Messages []json.RawMessage `json:"Messages"`
		Body     *string           `json:"Body"`
		Message  *string           `json:"Message"` // SNS
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object or array: %w", where, err)
	}
	switch {
	case probe.Messages != nil:
		var out []Batch
		for i, m := range probe.Messages {
			got, err := batchesOf(m, fmt.Sprintf("%s, message %d", where, i+1))
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	case probe.Body != nil:
		return batchesOf(json.RawMessage(*probe.Body), where+" (its Body)")
	case probe.Message != nil:
		return batchesOf(json.RawMessage(*probe.Message), where+" (its Message)")
	}
	var rec onFailureRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if rec.BatchInfo == nil {
		return nil, fmt.Errorf("%s: no DDBStreamBatchInfo: not the on-failure record of a DynamoDB stream event source mapping", where)
	}
	fn := rec.RequestContext.FunctionArn
	if i := strings.Index(fn, ":function:"); i >= 0 {
		fn, _, _ = strings.Cut(fn[i+len(":function:"):], ":") // without a qualifier
	}
	b := Batch{Where: where, Condition: rec.RequestContext.Condition, Function: fn, BatchSize: rec.BatchInfo.BatchSize, Range: streamrun.Range{
		StreamARN: rec.BatchInfo.StreamArn, ShardID: rec.BatchInfo.ShardID,
		Start: rec.BatchInfo.StartSequenceNumber, End: rec.BatchInfo.EndSequenceNumber,
	}}
	if err := b.Range.Validate(); err != nil {
		return nil, fmt.Errorf("%s: DDBStreamBatchInfo: %s", where, strings.TrimPrefix(err.Error(), "streamrun: range: "))
	}
	if p := bytes.TrimSpace(rec.Payload); len(p) > 0 && string(p) != "null" {
		recs, err := payloadRecords(p)
		if err != nil {
			return nil, fmt.Errorf("%s: payload: %w", where, err)
		}
		b.Records = recs
	}
	return []Batch{b}, nil
}

// ObjectsAPI is the part of the S3 client ReadS3 uses to read on-failure
// objects.
type ObjectsAPI interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

// parseS3URI splits s3://BUCKET/KEY-OR-PREFIX.
func parseS3URI(uri string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q is not s3://BUCKET/KEY", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q names no bucket", uri)
	}
	return bucket, key, nil
}

// ReadS3 reads the on-failure records of s3://BUCKET/KEY, or of
// every object under the prefix when KEY is empty, ends with '/' or names
// no object, in key order (Lambda's keys sort by shard, then time).
func ReadS3(ctx context.Context, api ObjectsAPI, uri string) ([]Batch, error) {
	bucket, key, err := parseS3URI(uri)
	if err != nil {
		return nil, err
	}
	var keys []string
	if key != "" && !strings.HasSuffix(key, "/") {
		keys = []string{key}
	}
	var out []Batch
	for attempt := 0; ; attempt++ {
		if keys == nil {
			p := s3.NewListObjectsV2Paginator(api, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					return nil, fmt.Errorf("list s3://%s/%s: %w", bucket, key, err)
				}
				for _, o := range page.Contents {
					keys = append(keys, aws.ToString(o.Key))
				}
			}
			sort.Strings(keys)
			if len(keys) == 0 {
				return nil, fmt.Errorf("no object under s3://%s/%s", bucket, key)
			}
		}
		for _, k := range keys {
			got, err := s3Batches(ctx, api, bucket, k)
			var nsk interface{ ErrorCode() string }
			if attempt == 0 && len(keys) == 1 && k == key && errors.As(err, &nsk) && nsk.ErrorCode() == "NoSuchKey" {
				keys = nil // not an object: a prefix without its '/'
				break
			}
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		if keys != nil {
			return out, nil
		}
	}
}

func s3Batches(ctx context.Context, api ObjectsAPI, bucket, key string) ([]Batch, error) {
	uri := "s3://" + bucket + "/" + key
	obj, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", uri, err)
	}
	defer obj.Body.Close()
	got, err := ParseOnFailure(obj.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	for i := range got {
		got[i].Where = uri + " " + got[i].Where
	}
	return got, nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/opswatch"
)

// onFailureRecord is what a stream event source mapping sends to its
// on-failure destination for a batch it gave up on: metadata naming the
// records (SQS, SNS) and, in an S3 destination's object only, "payload":
// the whole invocation event ({"Records": [...]}) as a JSON string
// (AWS Lambda developer guide, "Retain discarded records for a DynamoDB
// event source in Lambda"; testdata/redrive/README.md).
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

// failedBatch is one batch to redrive, with where it was read from.
type failedBatch struct {
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

// parseOnFailure reads on-failure records in any of the shapes a person
// gets them in: the record itself, one per line or concatenated; a JSON
// array of them; an SQS message ({"Body": "<record>"}); or the output of
// `aws sqs receive-message` ({"Messages": [...]}). It names the value and
// field of the first malformed one.
func parseOnFailure(r io.Reader) ([]failedBatch, error) {
	dec := json.NewDecoder(r)
	var out []failedBatch
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

func batchesOf(raw json.RawMessage, where string) ([]failedBatch, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var out []failedBatch
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
		var out []failedBatch
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
	b := failedBatch{Where: where, Condition: rec.RequestContext.Condition, Function: fn, BatchSize: rec.BatchInfo.BatchSize, Range: streamrun.Range{
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
	return []failedBatch{b}, nil
}

// objectsAPI is the part of the S3 client redrive uses to read on-failure
// objects.
type objectsAPI interface {
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

// readS3Batches reads the on-failure records of s3://BUCKET/KEY, or of
// every object under the prefix when KEY is empty, ends with '/' or names
// no object, in key order (Lambda's keys sort by shard, then time).
func readS3Batches(ctx context.Context, api objectsAPI, uri string) ([]failedBatch, error) {
	bucket, key, err := parseS3URI(uri)
	if err != nil {
		return nil, err
	}
	var keys []string
	if key != "" && !strings.HasSuffix(key, "/") {
		keys = []string{key}
	}
	var out []failedBatch
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

func s3Batches(ctx context.Context, api objectsAPI, bucket, key string) ([]failedBatch, error) {
	uri := "s3://" + bucket + "/" + key
	obj, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", uri, err)
	}
	defer obj.Body.Close()
	got, err := parseOnFailure(obj.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	for i := range got {
		got[i].Where = uri + " " + got[i].Where
	}
	return got, nil
}

// runRedrive is `deadletter redrive`: args holds FILE, "-" or an s3:// URI
// of an object or a prefix.
func runRedrive(ctx context.Context, env *cliEnv, args []string, streams streamrun.StreamsAPI, objects objectsAPI, handle streamrun.Handler, consumer string, dryRun bool, log *slog.Logger) int {
	if len(args) != 1 {
		return errorf(env, exitUsage, "deadletter redrive: want one argument, the on-failure records: a file (- for standard input) or s3://BUCKET/KEY or s3://BUCKET/PREFIX/, got %d", len(args))
	}
	var batches []failedBatch
	if strings.HasPrefix(args[0], "s3://") {
		var err error
		if batches, err = readS3Batches(ctx, objects, args[0]); err != nil {
			return errorf(env, exitRuntime, "deadletter redrive: %v", err)
		}
	} else {
		in := env.stdin
		if args[0] != "-" {
			f, err := os.Open(args[0])
			if err != nil {
				return errorf(env, exitUsage, "deadletter redrive: %v", err)
			}
			defer f.Close()
			in = f
		}
		var err error
		if batches, err = parseOnFailure(in); err != nil {
			return errorf(env, exitUsage, "deadletter redrive: %s: %v", args[0], err)
		}
	}
	// Both consumers' mappings write to one on-failure bucket: a batch of
	// one consumer must never be handed to the other.
	for _, b := range batches {
		if b.Function != "" && !strings.HasSuffix(b.Function, "-"+consumer) {
			return errorf(env, exitUsage, "deadletter redrive: %s: the batch failed in function %s, not in the %s (--consumer %s); redrive it with the --consumer of that function", b.Where, b.Function, consumer, consumer)
		}
	}
	res := redrive(ctx, streams, handle, consumer, batches, dryRun, log)
	if err := writeJSON(env.stdout, res); err != nil {
		return errorf(env, exitRuntime, "deadletter redrive: %v", err)
	}
	for _, b := range res.Batches {
		if b.Error != "" {
			fmt.Fprintf(env.stderr, "deadletter redrive: %s (shard %s, %s..%s): %s: %s\n", b.Where, b.Shard, b.Start, b.End, b.Outcome, b.Error)
		}
	}
	switch {
	case res.Totals.Failed > 0:
		return exitRuntime
	case res.Totals.Trimmed > 0 || res.Totals.Incomplete > 0:
		return exitFailed
	}
	return exitOK
}

// redriveResult is the JSON summary of `deadletter redrive`.
type redriveResult struct {
	Consumer string         `json:"consumer"`
	DryRun   bool           `json:"dryRun,omitempty"`
	Batches  []redriveBatch `json:"batches"`
	Totals   redriveTotals  `json:"totals"`
}

type redriveBatch struct {
	Where     string `json:"where"`
	Shard     string `json:"shardId"`
	Start     string `json:"startSequenceNumber"`
	End       string `json:"endSequenceNumber"`
	BatchSize int    `json:"batchSize"`
	// Source: "payload" (the records the S3 on-failure object carried) or
	// "stream" (read from the stream by the range).
	Source   string `json:"source"`
	Read     int    `json:"read"`
	Redriven int    `json:"redriven"`
	// Outcome: "redriven", "read" (dry run), "trimmed", "incomplete" or "failed".
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

type redriveTotals struct {
	Batches    int `json:"batches"`
	Read       int `json:"read"`
	Redriven   int `json:"redriven"`
	Trimmed    int `json:"trimmed"`
	Incomplete int `json:"incomplete"`
	Failed     int `json:"failed"`
}

// redriveAttempts bounds the handler calls per batch of records (its first
// attempt and its retries; a retry that makes progress starts a new
// count): a batch that still fails after them fails its on-failure batch.
const redriveAttempts = 5

// redriveDelivery hands records to the consumer's handler as the event
// source mapping would (streamrun.Delivery, the runner's delivery): in
// batches of the mapping's default size, resuming at the lowest record the
// handler reports failed, retrying with the runner's backoff. There is no
// on-failure destination: a batch that exhausts its attempts stops the
// redrive of its on-failure batch, which is reported "failed".
func redriveDelivery(handle streamrun.Handler, log *slog.Logger) *streamrun.Delivery {
	return &streamrun.Delivery{Handler: handle, BatchSize: streamrun.DefaultBatchSize, MaxRetryAttempts: redriveAttempts - 1, Logger: log}
}

// markRedrive hands every batch of one failed batch to handle marked as
// redriven (opswatch.WithRedrive, one mark per failed batch): the
// consumer's handler records one GapOnFailure for it, with its shard and
// range and the records' creation times.
func markRedrive(handle streamrun.Handler, b failedBatch, recs []events.DynamoDBEventRecord) streamrun.Handler {
	mark := &opswatch.Redrive{Source: b.Where, Shard: b.Range.ShardID, FirstSeq: b.Range.Start, LastSeq: b.Range.End, Records: len(recs)}
	mark.From, mark.To = opswatch.CreatedSpan(recs)
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return handle(opswatch.WithRedrive(ctx, mark), ev)
	}
}

// redrive takes each batch's records from its on-failure record (S3) or
// reads them from the stream (SQS/SNS) and hands them to the consumer's
// handler with redriveDelivery, as the event source mapping would.
func redrive(ctx context.Context, streams streamrun.StreamsAPI, handle streamrun.Handler, consumer string, batches []failedBatch, dryRun bool, log *slog.Logger) redriveResult {
	res := redriveResult{Consumer: consumer, DryRun: dryRun, Batches: []redriveBatch{}}
	for _, b := range batches {
		rb := redriveBatch{Where: b.Where, Shard: b.Range.ShardID, Start: b.Range.Start, End: b.Range.End, BatchSize: b.BatchSize, Source: "stream"}
		var recs []events.DynamoDBEventRecord
		var err error
		if b.Records != nil {
			// The records came with the on-failure record (S3): the
			// stream, and its 24 h, are not needed.
			recs, rb.Source = b.Records, "payload"
		} else {
			recs, err = streamrun.ReadRange(ctx, streams, b.Range)
		}
		rb.Read = len(recs)
		switch {
		case errors.Is(err, streamrun.ErrTrimmed):
			rb.Outcome, rb.Error = "trimmed", err.Error()+"; the events are still in the event table for 14 days and in the archive: rebuild the projections from the archive (streamfold rebuild --from-archive ... --into in-place)"
		case errors.Is(err, streamrun.ErrRangeIncomplete) && len(recs) == 0:
			rb.Outcome, rb.Error = "incomplete", err.Error()
		case err != nil && !errors.Is(err, streamrun.ErrRangeIncomplete):
			rb.Outcome, rb.Error = "failed", err.Error()
		case dryRun:
			rb.Outcome = "read"
			if err != nil {
				rb.Outcome, rb.Error = "incomplete", err.Error()
			}
		default:
			n, herr := redriveDelivery(markRedrive(handle, b, recs), log).Deliver(ctx, recs)
			rb.Redriven = n
			switch {
			case herr != nil:
				rb.Outcome, rb.Error = "failed", herr.Error()
			case err != nil:
				rb.Outcome, rb.Error = "incomplete", err.Error()
			default:
				rb.Outcome = "redriven"
			}
		}
		res.Totals.Batches++
		res.Totals.Read += rb.Read
		res.Totals.Redriven += rb.Redriven
		switch rb.Outcome {
		case "trimmed":
			res.Totals.Trimmed++
		case "incomplete":
			res.Totals.Incomplete++
		case "failed":
			res.Totals.Failed++
		}
		res.Batches = append(res.Batches, rb)
	}
	return res
}

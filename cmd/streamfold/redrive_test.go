package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestParseOnFailure reads on-failure records in every shape the help
// names, and names the value and field of a malformed one.
func TestParseOnFailure(t *testing.T) {
	first := "800000000003126276362..800000000003126276399 of shardId-00000001573689847184-864758bb"
	second := "900000000000000000001..900000000000000000001 of shardId-2"
	tests := []struct {
		file    string
		want    []string // ranges, "START..END of SHARD"
		wantErr string
	}{
		{"record.json", []string{first}, ""},
		{"records.ndjson", []string{first, second}, ""},
		{"array.json", []string{first, second}, ""},
		{"sqs_receive.json", []string{first, second}, ""},
		{"sns.json", []string{first}, ""},
		{"bad_no_shard.json", nil, "value 1, message 2 (its Body): DDBStreamBatchInfo: shardId is required"},
		{"bad_kinesis.json", nil, "value 1: no DDBStreamBatchInfo: not the on-failure record of a DynamoDB stream event source mapping"},
		{"bad_reversed.json", nil, "value 1: DDBStreamBatchInfo: startSequenceNumber 900000000003126276362 is after endSequenceNumber 800000000003126276399"},
		{"bad_not_json.txt", nil, "value 1: not JSON: invalid character 'R' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "redrive", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := parseOnFailure(f)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ranges []string
			for _, b := range got {
				ranges = append(ranges, b.Range.Start+".."+b.Range.End+" of "+b.Range.ShardID)
				if b.Condition != "RetryAttemptsExhausted" || !strings.HasPrefix(b.Range.StreamARN, "arn:aws:dynamodb:us-east-2:") {
					t.Errorf("%s: condition %q, stream %q", b.Where, b.Condition, b.Range.StreamARN)
				}
			}
			if strings.Join(ranges, "; ") != strings.Join(tt.want, "; ") {
				t.Fatalf("ranges %q, want %q", ranges, tt.want)
			}
		})
	}
	if _, err := parseOnFailure(strings.NewReader("  \n")); err == nil || err.Error() != "no on-failure record in the input" {
		t.Fatalf("empty input: %v", err)
	}
}

// TestRedriveFromOnFailureMessages appends a workload and, instead of
// running the consumers, gives `deadletter redrive` an SQS message naming
// a range of the stream, as an event source mapping that gave up on that
// batch would leave it: the projector's redrive projects exactly the
// range's events (again: nothing changes), the archiver's archives exactly
// them, a dry run only counts, and a range whose shard is gone is
// reported trimmed with the remedy (exit 1).
func TestRedriveFromOnFailureMessages(t *testing.T) {
	rs := newRedriveStack(t)
	c, n, stream, env := rs.c, rs.n, rs.stream, rs.env
	ctx := context.Background()
	appendSimulated(t, c, n, 5, 400, 1)
	shard, recs := readShard(t, c, stream)
	if len(recs) < 300 {
		t.Fatalf("stream holds %d records, want >= 300", len(recs))
	}
	lo, hi := 50, 249 // the batch the mapping "gave up on": 200 records
	inRange, all := map[string]bool{}, map[string]bool{}
	for i, r := range recs {
		all[r.subject] = true
		if i >= lo && i <= hi {
			inRange[r.subject] = true
		}
	}
	msg := onFailureMessage(t, stream, shard, recs[lo].seq, recs[hi].seq, hi-lo+1)
	file := filepath.Join(t.TempDir(), "msgs.json")
	if err := os.WriteFile(file, msg, 0o644); err != nil {
		t.Fatal(err)
	}

	var sum redriveResult
	redriveCLI := func(wantCode int, args ...string) string {
		t.Helper()
		var errOut string
		sum, errOut = rs.redrive(t, wantCode, args...)
		return errOut
	}

	// A dry run reads the range and hands nothing over.
	redriveCLI(exitOK, "--dry-run", file)
	if sum.Totals.Read != 200 || sum.Totals.Redriven != 0 || sum.Batches[0].Outcome != "read" {
		t.Fatalf("dry run: %+v", sum)
	}
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := store.Load(ctx, keys(inRange), true); err != nil || len(st) != 0 {
		t.Fatalf("after the dry run %d aggregates exist (%v), want none", len(st), err)
	}

	// The projector's redrive projects the range's subjects and only them
	// (Step Functions executions of non-agent state machines are never
	// projected); a second redrive changes nothing.
	var versions map[string]int64
	for round := 1; round <= 2; round++ {
		redriveCLI(exitOK, "--consumer", "projector", file)
		if sum.Totals.Read != 200 || sum.Totals.Redriven != 200 || sum.Batches[0].Outcome != "redriven" {
			t.Fatalf("round %d: %+v", round, sum)
		}
		st, err := store.Load(ctx, keys(all), true)
		if err != nil {
			t.Fatal(err)
		}
		for s := range st {
			if !inRange[s] {
				t.Errorf("round %d: %s projected, but none of its records is in the range", round, s)
			}
		}
		for s := range inRange {
			if _, ok := st[s]; !ok && !strings.HasPrefix(s, "states/") {
				t.Errorf("round %d: %s not projected", round, s)
			}
		}
		if round == 1 {
			versions = map[string]int64{}
			for s, state := range st {
				versions[s] = state.Version
			}
			continue
		}
		for s, state := range st {
			if state.Version != versions[s] {
				t.Errorf("%s went from version %d to %d: the second redrive changed it", s, versions[s], state.Version)
			}
		}
	}

	// The archiver's redrive archives exactly the range's events.
	redriveCLI(exitOK, "--consumer", "archiver", file)
	if archived := rs.archived(t); archived != 200 || sum.Totals.Redriven != 200 {
		t.Fatalf("archived %d events (summary %+v), want 200", archived, sum.Totals)
	}

	// Each redrive of the failed batch recorded one GapOnFailure per
	// consumer (the dry run none), with the batch's shard and range.
	gaps, err := opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}.Gaps(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	perConsumer := map[string]int{}
	for _, g := range gaps {
		perConsumer[g.Consumer]++
		if g.Kind != opsrec.GapOnFailure || g.Shard != shard || g.FirstSeq != recs[lo].seq || g.LastSeq != recs[hi].seq || g.Records != 200 || g.From.IsZero() || g.To.Before(g.From) {
			t.Errorf("gap %+v, want onfailure of shard %s, %s..%s, 200 records", g, shard, recs[lo].seq, recs[hi].seq)
		}
	}
	if perConsumer["projector"] != 2 || perConsumer["archiver"] != 1 || len(gaps) != 3 {
		t.Fatalf("gaps by consumer %v, want 2 of the projector and 1 of the archiver", perConsumer)
	}

	// A range whose shard is gone: trimmed, with the remedy.
	gone := onFailureMessage(t, stream, "shardId-00000000000000000000-00000000", recs[lo].seq, recs[hi].seq, 200)
	errOut := func() string {
		code, out, errOut := runCLI(t, env, string(gone), "deadletter", "redrive", "-")
		if code != exitFailed {
			t.Fatalf("gone shard: exit %d, want %d\n%s\n%s", code, exitFailed, out, errOut)
		}
		return errOut
	}()
	if !strings.Contains(errOut, "trimmed") || !strings.Contains(errOut, "rebuild") {
		t.Fatalf("gone shard: stderr lacks the outcome and the remedy:\n%s", errOut)
	}

	// No argument is a usage error.
	if code, _, errOut := runCLI(t, env, "", "deadletter", "redrive"); code != exitUsage || !strings.Contains(errOut, "want one argument") {
		t.Fatalf("no argument: exit %d: %s", code, errOut)
	}
}

type streamRec struct{ seq, subject string }

// readShard returns the only shard of the stream and its records.
func readShard(t *testing.T, c *awsclient.Clients, stream string) (string, []streamRec) {
	t.Helper()
	ctx := context.Background()
	d, err := c.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(stream)})
	if err != nil || len(d.StreamDescription.Shards) != 1 {
		t.Fatalf("DescribeStream: %v (want one shard)", err)
	}
	shard := aws.ToString(d.StreamDescription.Shards[0].ShardId)
	it, err := c.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(stream), ShardId: aws.String(shard), ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	var out []streamRec
	iter := it.ShardIterator
	for empty := 0; iter != nil && empty < 3; {
		page, err := c.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			out = append(out, streamRec{seq: aws.ToString(r.Dynamodb.SequenceNumber), subject: r.Dynamodb.Keys["subject"].(*stypes.AttributeValueMemberS).Value})
		}
		if len(page.Records) == 0 {
			empty++
		}
		iter = page.NextShardIterator
	}
	return shard, out
}

// onFailureMessage is `aws sqs receive-message` output holding the
// on-failure record of one range.
func onFailureMessage(t *testing.T, stream, shard, start, end string, size int) []byte {
	t.Helper()
	rec := fmt.Sprintf(`{"requestContext":{"condition":"RetryAttemptsExhausted","approximateInvokeCount":4},"version":"1.0","DDBStreamBatchInfo":{"shardId":%q,"startSequenceNumber":%q,"endSequenceNumber":%q,"batchSize":%d,"streamArn":%q}}`,
		shard, start, end, size, stream)
	b, err := json.Marshal(map[string]any{"Messages": []map[string]string{{"MessageId": "m1", "ReceiptHandle": "rh", "Body": rec}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRedriveDelivery: redrive hands the records to the handler with the
// runner's event-source-mapping delivery (streamrun.Delivery): in batches
// of 100, resuming at the lowest record the handler reports failed; an
// ItemIdentifier that is not in the batch fails the whole batch, retried
// from its first record; a batch still failing after redriveAttempts
// attempts fails its on-failure batch, counting what was redriven before.
func TestRedriveDelivery(t *testing.T) {
	recs := make([]events.DynamoDBEventRecord, 150)
	for i := range recs {
		recs[i].Change.SequenceNumber = strconv.Itoa(1000 + i)
	}
	batch := []failedBatch{{Where: "value 1", Records: recs, Range: streamrun.Range{ShardID: "s", Start: "1000", End: "1149"}}}
	tests := []struct {
		name         string
		respond      func(call int, first string) events.DynamoDBEventResponse
		wantOutcome  string
		wantRedriven int
		wantFirsts   []string // the first record of each call
	}{
		{"resumes at the reported record", func(call int, _ string) events.DynamoDBEventResponse {
			if call == 0 {
				return itemFailures("1040", "1060")
			}
			return events.DynamoDBEventResponse{}
		}, "redriven", 150, []string{"1000", "1040", "1100"}},
		{"an unknown item fails the whole batch", func(call int, _ string) events.DynamoDBEventResponse {
			if call == 0 {
				return itemFailures("1040", "999")
			}
			return events.DynamoDBEventResponse{}
		}, "redriven", 150, []string{"1000", "1000", "1100"}},
		{"attempts exhausted", func(_ int, first string) events.DynamoDBEventResponse {
			if first >= "1100" {
				return itemFailures("1120")
			}
			return events.DynamoDBEventResponse{}
		}, "failed", 120, []string{"1000", "1100", "1120", "1120", "1120", "1120"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var firsts []string
			handle := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
				first := ev.Records[0].Change.SequenceNumber
				firsts = append(firsts, first)
				return tt.respond(len(firsts)-1, first), nil
			}
			res := redrive(context.Background(), nil, handle, "projector", batch, false, slog.New(slog.DiscardHandler))
			b := res.Batches[0]
			if b.Outcome != tt.wantOutcome || b.Redriven != tt.wantRedriven || b.Source != "payload" || !slices.Equal(firsts, tt.wantFirsts) {
				t.Fatalf("batch %+v after calls starting at %v; want %s, %d redriven, calls starting at %v", b, firsts, tt.wantOutcome, tt.wantRedriven, tt.wantFirsts)
			}
			if tt.wantOutcome == "failed" && !strings.Contains(b.Error, "after 5 attempts") {
				t.Fatalf("error %q does not say how often it was tried", b.Error)
			}
		})
	}
}

func itemFailures(ids ...string) events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	for _, id := range ids {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
	}
	return resp
}

// redriveStack is what a redrive test runs against: fresh tables with their
// event stream, a bucket on MinIO, and the CLI's environment for them.
type redriveStack struct {
	c              *awsclient.Clients
	n              schema.Naming
	stream, bucket string
	env            map[string]string
}

func newRedriveStack(t *testing.T) redriveStack {
	t.Helper()
	c := testenv.S3Clients(t)
	n, res := testenv.Tables(t, c)
	return redriveStack{c: c, n: n, stream: testenv.EventStream(t, res), bucket: testenv.Bucket(t, c, n.BucketName()), env: localEnv(n)}
}

// redrive runs `streamfold deadletter redrive ARGS`, fails the test unless
// it exits wantCode, and returns its JSON summary and its stderr.
func (rs redriveStack) redrive(t *testing.T, wantCode int, args ...string) (redriveResult, string) {
	t.Helper()
	code, out, errOut := runCLI(t, rs.env, "", append([]string{"deadletter", "redrive"}, args...)...)
	if code != wantCode {
		t.Fatalf("redrive %v: exit %d, want %d\n%s\n%s", args, code, wantCode, out, errOut)
	}
	var sum redriveResult
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("redrive %v: summary %q: %v", args, out, err)
	}
	return sum, errOut
}

// archived counts the events in the stack's archive.
func (rs redriveStack) archived(t *testing.T) int {
	t.Helper()
	a, err := openTestArchive(t, rs.c, rs.n, rs.bucket)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := a.Events(context.Background(), func(schema.Event) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

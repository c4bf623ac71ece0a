package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/redrive"
)

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

	var sum redrive.Result
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
func (rs redriveStack) redrive(t *testing.T, wantCode int, args ...string) (redrive.Result, string) {
	t.Helper()
	code, out, errOut := runCLI(t, rs.env, "", append([]string{"deadletter", "redrive"}, args...)...)
	if code != wantCode {
		t.Fatalf("redrive %v: exit %d, want %d\n%s\n%s", args, code, wantCode, out, errOut)
	}
	var sum redrive.Result
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

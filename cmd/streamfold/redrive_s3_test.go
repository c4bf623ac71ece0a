package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/toolkit/redrive"
)

// TestRedriveFromS3OnFailureObjects puts in MinIO, under the key layout of
// an S3 on-failure destination, an object of the documented shape
// (toolkit/redrive/testdata/s3_object.json) whose payload holds 120 records read
// from the stream, and whose DDBStreamBatchInfo names a shard that no
// longer exists: redrive replays the records from the object without
// reading the stream (source "payload"), from the object's URI and from
// the prefix, for the projector (again: nothing changes) and the archiver.
func TestRedriveFromS3OnFailureObjects(t *testing.T) {
	rs := newRedriveStack(t)
	c, n, stream, bucket, env := rs.c, rs.n, rs.stream, rs.bucket, rs.env
	ctx := context.Background()
	appendSimulated(t, c, n, 5, 300, 2)
	shard, recs := readShard(t, c, stream)
	lo, hi := 30, 149
	batch, err := streamrun.ReadRange(ctx, c.Streams, streamrun.Range{StreamARN: stream, ShardID: shard, Start: recs[lo].seq, End: recs[hi].seq})
	if err != nil || len(batch) != 120 {
		t.Fatalf("ReadRange: %d records, %v", len(batch), err)
	}
	inRange := map[string]bool{}
	for _, r := range batch {
		inRange[r.Change.NewImage["subject"].String()] = true
	}

	var obj map[string]any
	b, err := os.ReadFile(filepath.Join("..", "..", "toolkit", "redrive", "testdata", "s3_object.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(map[string]any{"Records": batch})
	if err != nil {
		t.Fatal(err)
	}
	obj["payload"] = string(payload)
	info := obj["DDBStreamBatchInfo"].(map[string]any)
	info["streamArn"], info["shardId"] = stream, "shardId-00000000000000000000-00000000" // gone
	info["startSequenceNumber"], info["endSequenceNumber"], info["batchSize"] = recs[lo].seq, recs[hi].seq, 120
	// One mapping (UUID) per consumer, as deployed; the requestContext names
	// the function the batch failed in.
	put := func(uuid, function string) (prefix, key string) {
		t.Helper()
		obj["requestContext"].(map[string]any)["functionArn"] = "arn:aws:lambda:us-east-1:123456789012:function:" + function
		body, _ := json.Marshal(obj)
		prefix = "aws/lambda/" + uuid + "/"
		key = prefix + "shardId-00000000000000000000-00000000/2026/11/20/2026-11-20T03.14.15-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
		if _, err := c.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		return prefix, key
	}
	prefix, key := put("4b1d2c3e-5f60-4a7b-8c9d-0e1f2a3b4c5d", n.Prefix+"-"+n.Stage+"-projector")
	_, archiverKey := put("0c9b8a7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d", n.Prefix+"-"+n.Stage+"-archiver")

	var sum redrive.Result
	redriveCLI := func(wantCode int, args ...string) {
		t.Helper()
		sum, _ = rs.redrive(t, wantCode, args...)
	}
	redriveCLI(exitOK, "--dry-run", "s3://"+bucket+"/"+key)
	if sum.Totals.Read != 120 || sum.Totals.Redriven != 0 || sum.Batches[0].Source != "payload" || sum.Batches[0].Outcome != "read" || !strings.HasPrefix(sum.Batches[0].Where, "s3://"+bucket+"/"+key) {
		t.Fatalf("dry run: %+v", sum)
	}
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	var versions map[string]int64
	for round, arg := range []string{"s3://" + bucket + "/" + key, "s3://" + bucket + "/" + prefix, "s3://" + bucket + "/" + strings.TrimSuffix(prefix, "/")} {
		redriveCLI(exitOK, "--consumer", "projector", arg)
		if sum.Totals.Batches != 1 || sum.Totals.Redriven != 120 || sum.Batches[0].Outcome != "redriven" || sum.Batches[0].Source != "payload" {
			t.Fatalf("%s: %+v", arg, sum)
		}
		st, err := store.Load(ctx, keys(inRange), true)
		if err != nil {
			t.Fatal(err)
		}
		projected := 0
		for s, state := range st {
			projected++
			if round == 0 {
				continue
			}
			if state.Version != versions[s] {
				t.Errorf("%s: %s went from version %d to %d: a second redrive changed it", arg, s, versions[s], state.Version)
			}
		}
		if projected == 0 {
			t.Fatalf("%s: nothing of the batch projected", arg)
		}
		if round == 0 {
			versions = map[string]int64{}
			for s, state := range st {
				versions[s] = state.Version
			}
		}
	}
	// The projector's batch is never handed to the archiver (and the other
	// way round): the whole bucket mixes both consumers' objects.
	if code, _, errOut := runCLI(t, env, "", "deadletter", "redrive", "--consumer", "archiver", "s3://"+bucket+"/aws/lambda/"); code != exitUsage || !strings.Contains(errOut, "the batch failed in function "+n.Prefix+"-"+n.Stage+"-projector, not in the archiver") {
		t.Fatalf("mixed consumers: exit %d: %s", code, errOut)
	}
	redriveCLI(exitOK, "--consumer", "archiver", "s3://"+bucket+"/"+archiverKey)
	if archived := rs.archived(t); archived != 120 {
		t.Fatalf("archived %d events, want the batch's 120", archived)
	}
	// The payload's records keep their eventIDs, which name the archive's
	// batch files (keys unique across shards) and fill stream_event_id.
	eventIDs := map[string]bool{}
	for _, r := range batch {
		eventIDs[r.EventID] = r.EventID != ""
	}
	a, err := openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Scan(ctx, func(r archiver.Record) error {
		if !eventIDs[r.StreamEventID] {
			t.Errorf("archived event %s has stream eventID %q, not its payload record's", r.Event.ID, r.StreamEventID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Nothing there: a service error naming the prefix.
	if code, _, errOut := runCLI(t, env, "", "deadletter", "redrive", "s3://"+bucket+"/aws/lambda/none/"); code != exitRuntime || !strings.Contains(errOut, "no object under s3://"+bucket+"/aws/lambda/none/") {
		t.Fatalf("empty prefix: exit %d: %s", code, errOut)
	}
}

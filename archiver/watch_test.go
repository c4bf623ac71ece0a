package archiver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/internal/laptop/opsrectest"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
)

// TestHandlerWatch: the archiver's handler hands each batch to its Watch
// (Lambda): a jump after a stall is a gap, a redriven batch a
// GapOnFailure, the first batch writes a heartbeat; the batches succeed.
func TestHandlerWatch(t *testing.T) {
	now := time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC)
	ops := &opsrectest.Recorder{}
	w, err := opswatch.New(ops, opswatch.Config{Consumer: "archiver", Now: func() time.Time { return now }, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, s3mem.New("bkt"), archiver.Config{Bucket: "bkt", Prefix: "arch"})
	h := archiver.NewHandler(a, quietLog()).Watch(w)
	// MODIFY records: the archiver skips them.
	recs := func(seq int, created time.Time) []events.DynamoDBEventRecord {
		return []events.DynamoDBEventRecord{{
			EventName: "MODIFY", EventSource: "aws:dynamodb", EventID: fmt.Sprintf("e%d", seq),
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-05T10:00:00.000",
			Change:         events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprint(seq), ApproximateCreationDateTime: events.SecondsEpochTime{Time: created}},
		}}
	}
	ctx := context.Background()
	for _, b := range [][]events.DynamoDBEventRecord{recs(1, now.Add(-10*time.Hour)), recs(2, now.Add(-7*time.Hour))} {
		if resp, err := h.Handle(ctx, events.DynamoDBEvent{Records: b}); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("Handle = %+v, %v", resp, err)
		}
	}
	rd := &opswatch.Redrive{Source: "msgs.json value 1", Shard: "shardId-9"}
	if _, err := h.Handle(opswatch.WithRedrive(ctx, rd), events.DynamoDBEvent{Records: recs(0, now.Add(-12*time.Hour))}); err != nil {
		t.Fatal(err)
	}
	if len(ops.Gaps()) != 2 || ops.Gaps()[0].Kind != opsrec.GapSequenceJump || !ops.Gaps()[0].From.Equal(now.Add(-10*time.Hour)) ||
		!ops.Gaps()[0].To.Equal(now.Add(-7*time.Hour)) || ops.Gaps()[1].Kind != opsrec.GapOnFailure || ops.Gaps()[1].Shard != "shardId-9" || ops.Gaps()[1].Consumer != "archiver" {
		t.Fatalf("gaps %+v", ops.Gaps())
	}
	if len(ops.Beats()) != 1 || ops.Beats()[0].Consumer != "archiver" || ops.Beats()[0].Lag != 10*time.Hour {
		t.Fatalf("heartbeats %+v", ops.Beats())
	}
}

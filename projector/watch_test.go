package projector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/laptop/opsrectest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/projector"
)

// modifies returns n MODIFY records (the projector skips them) of the
// stream, created at created.
func modifies(seq, n int, created time.Time) []events.DynamoDBEventRecord {
	out := make([]events.DynamoDBEventRecord, n)
	for i := range out {
		out[i] = events.DynamoDBEventRecord{
			EventName: "MODIFY", EventSource: "aws:dynamodb", EventID: fmt.Sprintf("e%d", seq+i),
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-05T10:00:00.000",
			Change: events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprint(seq + i),
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: created}},
		}
	}
	return out
}

// TestHandlerWatch: the Lambda handler hands each batch to its Watch: a
// batch about to be trimmed is a gap, a batch redriven from the on-failure
// destination is a GapOnFailure, and the first batch writes a heartbeat;
// the batches themselves succeed.
func TestHandlerWatch(t *testing.T) {
	now := time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC)
	ops := &opsrectest.Recorder{}
	w, err := opswatch.New(ops, opswatch.Config{Consumer: "projector", Now: func() time.Time { return now }, Logger: testenv.QuietLog()})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := projector.New(projector.NewMemStore(), projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{Watch: w}, testenv.QuietLog())
	ctx := context.Background()
	resp, err := h.Handle(ctx, events.DynamoDBEvent{Records: modifies(10, 3, now.Add(-23*time.Hour-30*time.Minute))})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v", resp, err)
	}
	rd := &opswatch.Redrive{Source: "s3://failures/aws/lambda/x", Shard: "shardId-1", FirstSeq: "1", LastSeq: "2"}
	if _, err := h.Handle(opswatch.WithRedrive(ctx, rd), events.DynamoDBEvent{Records: modifies(1, 2, now.Add(-30*time.Hour))}); err != nil {
		t.Fatal(err)
	}
	if len(ops.Gaps()) != 2 || ops.Gaps()[0].Kind != opsrec.GapSequenceJump || ops.Gaps()[0].Consumer != "projector" ||
		ops.Gaps()[1].Kind != opsrec.GapOnFailure || ops.Gaps()[1].Shard != "shardId-1" || ops.Gaps()[1].Records != 2 {
		t.Fatalf("gaps %+v", ops.Gaps())
	}
	if len(ops.Beats()) != 1 || ops.Beats()[0].Records != 3 || ops.Beats()[0].LastSeq != "12" || ops.Beats()[0].Shard != "stream/2026-01-05T10:00:00.000" {
		t.Fatalf("heartbeats %+v", ops.Beats())
	}
	// Without a Watch (the local runner's handler) nothing is recorded.
	h2 := projector.NewHandler(proj, discardDL{}, projector.HandlerConfig{}, testenv.QuietLog())
	if _, err := h2.Handle(ctx, events.DynamoDBEvent{Records: modifies(20, 1, now.Add(-23*time.Hour-30*time.Minute))}); err != nil {
		t.Fatal(err)
	}
	if len(ops.Gaps()) != 2 {
		t.Fatalf("gaps %+v", ops.Gaps())
	}
}

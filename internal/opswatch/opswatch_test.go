package opswatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/laptop/opsrectest"
	"github.com/streamfold/streamfold/internal/opsrec"
)

const arn = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-05T10:00:00.000"

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var t0 = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

// batch returns n records created at created, created+1s, … with
// sequence numbers from seq on.
func batch(seq, n int, created time.Time) []events.DynamoDBEventRecord {
	out := make([]events.DynamoDBEventRecord, n)
	for i := range out {
		out[i] = events.DynamoDBEventRecord{EventSourceArn: arn, EventID: fmt.Sprintf("e%d", seq+i), Change: events.DynamoDBStreamRecord{
			SequenceNumber:              fmt.Sprint(seq + i),
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: created.Add(time.Duration(i) * time.Second)},
		}}
	}
	return out
}

func newWatch(t *testing.T, rec Recorder, c *clock, log *bytes.Buffer) *Watch {
	t.Helper()
	w, err := New(rec, Config{Consumer: "projector", Now: c.now, Logger: slog.New(slog.NewJSONHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestStreamKey(t *testing.T) {
	for _, tt := range []struct{ arn, want string }{
		{arn, "stream/2026-01-05T10:00:00.000"},
		{"", "stream/unknown"},
		{"arn:aws:dynamodb:us-east-1:1:table/t", "stream/unknown"},
	} {
		if got := StreamKey(events.DynamoDBEventRecord{EventSourceArn: tt.arn}); got != tt.want {
			t.Errorf("StreamKey(%q) = %q, want %q", tt.arn, got, tt.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(nil, Config{}); err == nil {
		t.Error("no consumer: no error")
	}
	if _, err := New(nil, Config{Consumer: opsrec.ConsumerGap}); err == nil {
		t.Error("reserved consumer: no error")
	}
}

// TestHeartbeats: one at the first batch, none within the interval, one
// after it counting the records since the previous one; lag is now minus
// the last record's creation time.
func TestHeartbeats(t *testing.T) {
	rec, c, log := &opsrectest.Recorder{}, &clock{t: t0}, &bytes.Buffer{}
	w := newWatch(t, rec, c, log)
	ctx := context.Background()
	w.Batch(ctx, batch(100, 10, t0.Add(-30*time.Second)))
	c.t = t0.Add(20 * time.Second)
	w.Batch(ctx, batch(110, 5, t0.Add(10*time.Second)))
	c.t = t0.Add(61 * time.Second)
	w.Batch(ctx, batch(115, 3, t0.Add(55*time.Second)))
	if len(rec.Beats()) != 2 {
		t.Fatalf("heartbeats %+v, want 2", rec.Beats())
	}
	b0, b1 := rec.Beats()[0], rec.Beats()[1]
	if b0.Consumer != "projector" || b0.Shard != "stream/2026-01-05T10:00:00.000" || b0.Records != 10 || b0.LastSeq != "109" ||
		b0.Lag != 21*time.Second || !b0.Updated.Equal(t0) {
		t.Errorf("first heartbeat %+v", b0)
	}
	if b1.Records != 8 || b1.LastSeq != "117" || !b1.Since.Equal(t0) || !b1.Updated.Equal(c.t) || b1.Lag != 4*time.Second {
		t.Errorf("second heartbeat %+v", b1)
	}
	if got := b1.Rate(); got != 8.0/61 {
		t.Errorf("rate %v", got)
	}
	if len(rec.Gaps()) != 0 {
		t.Errorf("gaps %+v on a healthy stream", rec.Gaps())
	}
}

func TestStallJump(t *testing.T) {
	rec, c, log := &opsrectest.Recorder{}, &clock{t: t0}, &bytes.Buffer{}
	w := newWatch(t, rec, c, log)
	ctx := context.Background()
	w.Batch(ctx, batch(1, 2, t0.Add(-time.Minute)))
	// A quiet table: the next record is hours newer but fresh: no gap.
	c.t = t0.Add(3 * time.Hour)
	w.Batch(ctx, batch(3, 2, c.t.Add(-time.Second)))
	if len(rec.Gaps()) != 0 {
		t.Fatalf("gap on a quiet table: %+v", rec.Gaps())
	}
	// Behind by 6 h, and 2 h of records skipped: a jump.
	last := c.t // the previous batch's last record
	c.t = t0.Add(11 * time.Hour)
	next := last.Add(2 * time.Hour)
	w.Batch(ctx, batch(50, 2, next))
	if len(rec.Gaps()) != 1 {
		t.Fatalf("gaps %+v, want one", rec.Gaps())
	}
	g := rec.Gaps()[0]
	if g.Kind != opsrec.GapSequenceJump || !g.From.Equal(last) || !g.To.Equal(next) || g.Shard != "stream/2026-01-05T10:00:00.000" {
		t.Errorf("gap %+v, want %s from %s to %s", g, opsrec.GapSequenceJump, last, next)
	}
	if !strings.Contains(log.String(), `"msg":"gap: records may have been missed (seqjump)"`) || !strings.Contains(log.String(), `"consumer":"projector"`) {
		t.Errorf("log %s", log.String())
	}
}

func TestAboutToBeTrimmed(t *testing.T) {
	rec, c, log := &opsrectest.Recorder{}, &clock{t: t0}, &bytes.Buffer{}
	w := newWatch(t, rec, c, log)
	ctx := context.Background()
	old := t0.Add(-23*time.Hour - 10*time.Minute)
	w.Batch(ctx, batch(1, 3, old))
	if len(rec.Gaps()) != 1 {
		t.Fatalf("gaps %+v, want one", rec.Gaps())
	}
	g := rec.Gaps()[0]
	wantTo := t0.Add(-23 * time.Hour)
	if g.Kind != opsrec.GapSequenceJump || !g.From.Equal(old.Add(2*time.Second)) || !g.To.Equal(wantTo) || !strings.Contains(g.Detail, "about to be trimmed") {
		t.Fatalf("gap %+v, want from %s to %s", g, old.Add(2*time.Second), wantTo)
	}
	// The next batches within that span record nothing more; one past it does.
	c.t = t0.Add(time.Minute)
	w.Batch(ctx, batch(4, 3, old.Add(5*time.Minute)))
	if len(rec.Gaps()) != 1 {
		t.Fatalf("gaps %+v, want still one", rec.Gaps())
	}
	c.t = t0.Add(2 * time.Minute)
	w.Batch(ctx, batch(7, 3, wantTo.Add(time.Second)))
	if len(rec.Gaps()) != 2 || !rec.Gaps()[1].From.Equal(wantTo.Add(3*time.Second)) {
		t.Fatalf("gaps %+v, want a second one from %s", rec.Gaps(), wantTo.Add(3*time.Second))
	}
}

// TestRedrive: a marked batch records one GapOnFailure with the failed
// batch's range, however often it is handed over, and no heartbeat.
func TestRedrive(t *testing.T) {
	rec, c, log := &opsrectest.Recorder{}, &clock{t: t0}, &bytes.Buffer{}
	w := newWatch(t, rec, c, log)
	rd := &Redrive{Source: "s3://f/aws/lambda/x", Shard: "shardId-1", FirstSeq: "10", LastSeq: "19"}
	ctx := WithRedrive(context.Background(), rd)
	recs := batch(10, 10, t0.Add(-30*time.Hour))
	w.Batch(ctx, recs[:5])
	w.Batch(ctx, recs[5:])
	w.Batch(ctx, recs[5:])
	if len(rec.Gaps()) != 1 || len(rec.Beats()) != 0 {
		t.Fatalf("gaps %+v, beats %+v: want one gap, no heartbeat", rec.Gaps(), rec.Beats())
	}
	g := rec.Gaps()[0]
	if g.Kind != opsrec.GapOnFailure || g.Shard != "shardId-1" || g.FirstSeq != "10" || g.LastSeq != "19" || g.Records != 5 ||
		!g.From.Equal(recs[0].Change.ApproximateCreationDateTime.Time) || !strings.Contains(g.Detail, rd.Source) {
		t.Errorf("gap %+v", g)
	}
	// Another failed batch is another gap.
	w.Batch(WithRedrive(context.Background(), &Redrive{Source: "other"}), recs)
	if len(rec.Gaps()) != 2 || rec.Gaps()[1].Shard != "stream/2026-01-05T10:00:00.000" || rec.Gaps()[1].FirstSeq != "10" || rec.Gaps()[1].LastSeq != "19" || rec.Gaps()[1].Records != 10 {
		t.Errorf("gaps %+v", rec.Gaps())
	}
}

// TestRecorderErrorsOnlyLogged: a failing recorder leaves the log line.
func TestRecorderErrorsOnlyLogged(t *testing.T) {
	rec, c, log := &opsrectest.Recorder{Err: errors.New("throttled")}, &clock{t: t0}, &bytes.Buffer{}
	w := newWatch(t, rec, c, log)
	w.Batch(context.Background(), batch(1, 1, t0.Add(-23*time.Hour-30*time.Minute)))
	for _, want := range []string{"gap: records may have been missed", "gap not recorded", "heartbeat not written", "throttled"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q: %s", want, log.String())
		}
	}
}

func TestNilWatch(t *testing.T) {
	var w *Watch
	w.Batch(context.Background(), batch(1, 1, t0)) // no panic
	// Without a recorder: gaps are logged only.
	log := &bytes.Buffer{}
	w2 := newWatch(t, nil, &clock{t: t0}, log)
	w2.Batch(context.Background(), batch(1, 1, t0.Add(-23*time.Hour-30*time.Minute)))
	if !strings.Contains(log.String(), "gap: records may have been missed") {
		t.Errorf("log %s", log.String())
	}
}

func TestCreatedSpan(t *testing.T) {
	at := func(sec int64) events.DynamoDBEventRecord {
		var r events.DynamoDBEventRecord
		if sec > 0 {
			r.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: time.Unix(sec, 0).UTC()}
		}
		return r
	}
	from, to := CreatedSpan([]events.DynamoDBEventRecord{at(20), at(0), at(10), at(30)})
	if from != time.Unix(10, 0).UTC() || to != time.Unix(30, 0).UTC() {
		t.Fatalf("CreatedSpan = %v, %v; want 10 s and 30 s (the record without a time skipped)", from, to)
	}
	if from, to := CreatedSpan([]events.DynamoDBEventRecord{at(0)}); !from.IsZero() || !to.IsZero() {
		t.Fatalf("no times: %v, %v; want zero", from, to)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
)

func TestReconcileUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantText string
	}{
		{"help", []string{"reconcile", "-h"}, exitOK, "streamfold reconcile --since 72h --heal"},
		{"since and from", []string{"reconcile", "--since", "1h", "--from", "2026-01-01"}, exitUsage, "reconcile: --since: goes without From and To"},
		{"to without from", []string{"reconcile", "--to", "2026-01-01"}, exitUsage, "reconcile: --to: needs From"},
		{"bad since", []string{"reconcile", "--since", "yesterday"}, exitUsage, "reconcile: --since: time: invalid duration"},
		{"negative since", []string{"reconcile", "--since=-2h"}, exitUsage, "must be positive"},
		{"bad from", []string{"reconcile", "--from", "March"}, exitUsage, "want RFC 3339"},
		{"empty window", []string{"reconcile", "--from", "2026-01-02", "--to", "2026-01-01"}, exitUsage, "is empty"},
		{"bad segments", []string{"reconcile", "--segments=-1"}, exitUsage, "reconcile: --segments: must be at least 1, got -1"},
		{"extra argument", []string{"reconcile", "now"}, exitUsage, `unexpected argument now`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, map[string]string{}, "", tt.args...)
			if code != tt.wantCode || !strings.Contains(out+errOut, tt.wantText) {
				t.Fatalf("exit %d (want %d), output lacks %q?\n%s%s", code, tt.wantCode, tt.wantText, out, errOut)
			}
		})
	}
}

// skipAhead moves consumer's checkpoint on every open shard past the first
// fraction of the records it has not read yet, as a consumer does that
// lost them (a trimmed range, a checkpoint written past unread records),
// and returns the skipped events' keys (subject NUL id).
func skipAhead(t *testing.T, c *awsclient.Clients, n schema.Naming, stream, consumer string, fraction float64) map[string]bool {
	t.Helper()
	ctx := context.Background()
	cps := streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints))
	desc, err := c.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(stream)})
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]bool{}
	for _, sh := range desc.StreamDescription.Shards {
		id := aws.ToString(sh.ShardId)
		cp, ok, err := cps.Get(ctx, consumer, id)
		if err != nil {
			t.Fatal(err)
		}
		if ok && cp.Done {
			continue
		}
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(stream), ShardId: aws.String(id), ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
		if ok && cp.SequenceNumber != "" {
			in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(cp.SequenceNumber)
		}
		it, err := c.Streams.GetShardIterator(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var recs []streamtypes.Record
		for iter := it.ShardIterator; iter != nil; {
			out, err := c.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, out.Records...)
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
		k := int(float64(len(recs))*fraction + 0.5)
		if k == 0 {
			continue
		}
		for _, r := range recs[:k] {
			s, _ := r.Dynamodb.NewImage[schema.AttrSubject].(*streamtypes.AttributeValueMemberS)
			i, _ := r.Dynamodb.NewImage[schema.AttrID].(*streamtypes.AttributeValueMemberS)
			if s != nil && i != nil {
				skipped[s.Value+"\x00"+i.Value] = true
			}
		}
		if err := cps.Save(ctx, consumer, streamrun.Checkpoint{ShardID: id, SequenceNumber: aws.ToString(recs[k-1].Dynamodb.SequenceNumber)}); err != nil {
			t.Fatal(err)
		}
	}
	return skipped
}

// reconcileJSON runs reconcile --json and decodes its report.
func reconcileJSON(t *testing.T, env map[string]string, wantCode int, args ...string) reconcile.Report {
	t.Helper()
	code, out, errOut := runCLI(t, env, "", append([]string{"reconcile", "--json", "--quiet"}, args...)...)
	if code != wantCode {
		t.Fatalf("reconcile %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, out, errOut)
	}
	var rep reconcile.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("reconcile --json: %v\n%s", err, out)
	}
	return rep
}

// gapKeys are the report's gap ids of kind, as subject NUL id.
func gapKeys(rep reconcile.Report, kind string) map[string]bool {
	out := map[string]bool{}
	for _, g := range rep.IDs {
		if g.Kind == kind {
			out[g.Subject+"\x00"+g.ID] = true
		}
	}
	return out
}

func keysDiff(got, want map[string]bool) string {
	var extra, missing []string
	for k := range got {
		if !want[k] {
			extra = append(extra, strings.ReplaceAll(k, "\x00", "/"))
		}
	}
	for k := range want {
		if !got[k] {
			missing = append(missing, strings.ReplaceAll(k, "\x00", "/"))
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	return fmt.Sprintf("unexpected %d %v; not found %d %v", len(extra), extra, len(missing), missing)
}

// TestReconcileFindsAndHealsGaps: a workload is consumed; then the
// projector's checkpoints are moved past every record of a second
// workload and the archiver's past half of them (records the consumers
// lose), and a third workload is consumed normally. reconcile reports
// exactly the records the archiver lost as missing from the archive, and
// as missing from the projections records the projector lost and only
// those (exit 1); --heal heals every one (exit 0); a second reconcile
// finds nothing, verify finds no difference, the projections are the fold
// of the event table and the archive holds exactly its events.
func TestReconcileFindsAndHealsGaps(t *testing.T) {
	c := testenv.S3Clients(t)
	n, res := testenv.Tables(t, c)
	testenv.Bucket(t, c, n.BucketName())
	stream := testenv.EventStream(t, res)
	env := localEnv(n)
	runUntilCaughtUp := func() {
		t.Helper()
		if code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive-batch-window", "0s"); code != exitOK {
			t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
		}
	}
	from := time.Now().UTC().Add(-time.Second)
	appendSimulated(t, c, n, 41, 400, 2)
	runUntilCaughtUp()
	appendSimulated(t, c, n, 42, 300, 2)
	projLost := skipAhead(t, c, n, stream, "projector", 1)
	archLost := skipAhead(t, c, n, stream, "archiver", 0.5)
	if len(projLost) == 0 || len(archLost) == 0 || len(archLost) >= len(projLost) {
		t.Fatalf("lost %d records for the projector, %d for the archiver; want some, fewer for the archiver", len(projLost), len(archLost))
	}
	appendSimulated(t, c, n, 43, 200, 2)
	runUntilCaughtUp()
	to := time.Now().UTC().Add(time.Second)
	window := []string{"--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano)}

	// Small buckets: the archive comparison goes through its spill files.
	rep := reconcileJSON(t, env, exitFailed, append(window, "--bucket-events", "40")...)
	if got := gapKeys(rep, reconcile.KindArchive); len(got) != len(archLost) || keysDiff(got, archLost) != keysDiff(archLost, archLost) {
		t.Errorf("missing archive: %s", keysDiff(got, archLost))
	}
	gotProj := gapKeys(rep, reconcile.KindProjection)
	for k := range gotProj {
		if !projLost[k] {
			t.Errorf("missing projection %q: the projector did not lose it", k)
		}
	}
	if len(gotProj) < len(projLost)/2 {
		t.Errorf("%d missing from the projections of %d records lost: want most (an event whose effect another already brought is applied in effect)", len(gotProj), len(projLost))
	}
	t.Logf("%d events in the window; lost %d records for the projector (%d reported missing), %d for the archiver", rep.Events, len(projLost), len(gotProj), len(archLost))
	if c := gapKeys(rep, reconcile.KindConflict); len(c) != 0 {
		t.Errorf("conflicts %v, want none", c)
	}
	// The same window compared in one bucket gives the same gaps.
	whole := reconcileJSON(t, env, exitFailed, window...)
	if fmt.Sprint(whole.IDs) != fmt.Sprint(rep.IDs) || fmt.Sprint(whole.Rows) != fmt.Sprint(rep.Rows) {
		t.Errorf("one bucket found\n%v\nforty-event buckets\n%v", whole.Rows, rep.Rows)
	}
	// The text output lists ids and the exact heal command.
	code, out, _ := runCLI(t, env, "", append([]string{"reconcile", "--quiet"}, window...)...)
	if code != exitFailed || !strings.Contains(out, "streamfold reconcile --prefix "+n.Prefix+" --from "+rep.From.Format(time.RFC3339Nano)) || !strings.Contains(out, "MISSING-PROJECTION") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}

	healed := reconcileJSON(t, env, exitOK, append(window, "--heal")...)
	total, healedN := 0, 0
	for _, d := range healed.Rows {
		total += d.Healed
	}
	for _, g := range healed.IDs {
		if g.Healed {
			healedN++
		}
	}
	if want := len(rep.IDs); total != want || healedN != want || healed.Gaps() != 0 {
		t.Errorf("heal: rows say %d healed, ids %d, %d remaining; want all %d healed", total, healedN, healed.Gaps(), want)
	}
	again := reconcileJSON(t, env, exitOK, window...)
	if len(again.IDs) != 0 || again.Gaps() != 0 || again.Events != rep.Events {
		t.Errorf("after heal: %d gap ids, %d events (first run %d)", len(again.IDs), again.Events, rep.Events)
	}
	// Healing again writes nothing.
	reconcileJSON(t, env, exitOK, append(window, "--heal")...)
	if code, out, errOut := runCLI(t, env, "", "verify", "--quiet"); code != exitOK {
		t.Fatalf("verify after heal: exit %d\n%s\n%s", code, out, errOut)
	}
	assertProjectionsAreTheFold(t, c, n)
	assertArchiveIsTheTable(t, c, n, n.BucketName())
	// The runs are recorded for the operations page, newest first.
	last, ok, err := (&opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}).LastResult(context.Background())
	if err != nil || !ok || last.Gaps() != 0 || !last.Heal {
		t.Errorf("last recorded result %+v, %v, %v: want the last heal, without gaps", last, ok, err)
	}
}

// TestReconcileNoFalsePositives: a pipeline that missed nothing has no
// gap, in one bucket or many.
func TestReconcileNoFalsePositives(t *testing.T) {
	c := testenv.S3Clients(t)
	n, _ := testenv.Tables(t, c)
	testenv.Bucket(t, c, n.BucketName())
	env := localEnv(n)
	from := time.Now().UTC().Add(-time.Second)
	_, appended := appendSimulated(t, c, n, 51, 3000, 3)
	if code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive-batch-window", "0s", "--batch-size", "500"); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	window := []string{"--from", from.Format(time.RFC3339Nano), "--to", time.Now().UTC().Add(time.Second).Format(time.RFC3339Nano)}
	for _, bucket := range []string{"200000", "100"} {
		rep := reconcileJSON(t, env, exitOK, append(window, "--bucket-events", bucket, "--segments", "3")...)
		if rep.Events != appended.Count(ingest.Accepted) || len(rep.IDs) != 0 || rep.ReadUnits <= 0 {
			t.Errorf("buckets of %s: %d events (appended %d), %d gap ids, %.1f read units; want every event, no gap, units counted: %+v",
				bucket, rep.Events, appended.Count(ingest.Accepted), len(rep.IDs), rep.ReadUnits, rep.Rows)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/repair"
)

// TestRebuildVerifyUsage: the help and the usage errors of rebuild,
// verify and deadletter, found before any service is called.
func TestRebuildVerifyUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantText string
	}{
		{"rebuild -h", []string{"rebuild", "-h"}, exitOK, "--into in-place folds the archive into the live tables"},
		{"verify -h", []string{"verify", "-h"}, exitOK, "Exit status: 0 no difference; 1 differences"},
		{"rebuild needs an archive", []string{"rebuild"}, exitUsage, "--from-archive: required, e.g. s3://streamfold-dev-archive/archive"},
		{"rebuild bad archive", []string{"rebuild", "--from-archive", "http://bucket/x"}, exitUsage, "--from-archive"},
		{"rebuild bad mode", []string{"rebuild", "--from-archive", "s3://bkt/archive", "--into", "sideways"}, exitUsage, `--into: must be fresh or in-place, got "sideways"`},
		{"rebuild fresh onto the live tables", []string{"rebuild", "--from-archive", "s3://bkt/archive", "--target-prefix", "streamfold"}, exitUsage, "are the live tables; use in-place"},
		{"rebuild bad target", []string{"rebuild", "--from-archive", "s3://bkt/archive", "--target-stage", "qa"}, exitUsage, "Naming.Stage"},
		{"rebuild in place with a target", []string{"rebuild", "--from-archive", "s3://bkt/archive", "--into", "in-place", "--target-prefix", "x"}, exitUsage, "--target-prefix, --target-stage and --force: go with fresh only"},
		{"rebuild bad chunk", []string{"rebuild", "--from-archive", "s3://bkt/archive", "--chunk", "0"}, exitUsage, "--chunk: must be at least 1, got 0"},
		{"rebuild buffer below chunk", []string{"rebuild", "--from-archive", "s3://bkt/archive", "--buffer", "10"}, exitUsage, "rebuild: --buffer: must be at least ChunkEvents (2000), got 10"},
		{"verify bad workers", []string{"verify", "--workers", "0"}, exitUsage, "--workers: must be at least 1, got 0"},
		{"verify unknown kind", []string{"verify", "--only", "workflow-metrics,albums"}, exitUsage, `unknown row kind "albums"`},
		{"verify bad archive", []string{"verify", "--from-archive", "bucket/x"}, exitUsage, "--from-archive"},
		{"verify extra argument", []string{"verify", "now"}, exitUsage, "unexpected argument now"},
		{"deadletter -h", []string{"deadletter", "-h"}, exitOK, "deadletter redrive    Re-drive the batches"},
		{"deadletter list -h", []string{"deadletter", "list", "-h"}, exitOK, "--consumer=\"projector\""},
		{"deadletter replay -h", []string{"deadletter", "replay", "-h"}, exitOK, "replay re-submits each quarantined one"},
		{"deadletter redrive -h", []string{"deadletter", "redrive", "-h"}, exitOK, "--dry-run reads the batches"},
		{"deadletter without a subcommand", []string{"deadletter"}, exitUsage, `expected one of "list", "replay", "redrive"`},
		{"deadletter list takes no position", []string{"deadletter", "list", "--position", "1#e"}, exitUsage, "unknown flag --position"},
		{"deadletter replay unknown consumer", []string{"deadletter", "replay", "--consumer", "reader"}, exitUsage, `deadletter replay: --consumer: must be projector, archiver or ingest, got "reader"`},
		{"deadletter redrive of the ingest consumer", []string{"deadletter", "redrive", "--consumer", "ingest", "-"}, exitUsage, "use list and replay"},
		{"deadletter redrive without records", []string{"deadletter", "redrive"}, exitUsage, "want one argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, map[string]string{}, "", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.wantText) {
				t.Fatalf("output lacks %q:\n%s%s", tt.wantText, out, errOut)
			}
		})
	}
}

// TestRebuildVerifyCLI writes a simulate workload to a real archive in
// MinIO (archiver.WriteBatch, in stream-sized batches) and projects the
// same events into tables A as the stream would. Then, through run():
// rebuild --into fresh builds tables B, which verify finds equal to the
// archive; the same fresh target is refused (1) unless --force, and then
// nothing changes; in place into A changes nothing; verify of A (default
// archive URI) exits 0, and after one message-count counter is changed
// exits 1 naming that row and attribute; an archive that does not exist
// exits 3.
func TestRebuildVerifyCLI(t *testing.T) {
	c := testenv.S3Clients(t)
	ctx := context.Background()
	nA, _ := testenv.Tables(t, c)
	bucket := testenv.Bucket(t, c, nA.BucketName())
	uri := "s3://" + bucket + "/archive"

	// The events as the event table holds them: one per (subject, id),
	// with recordedat set by the appender.
	start := testclock.RecentMonday(2)
	gen, _, err := simulate.Generate(simulate.Config{Seed: 17, Events: 1500, Days: 2, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var evs []schema.Event
	for _, e := range gen {
		if seen[e.Subject+"\x00"+e.ID] {
			continue
		}
		seen[e.Subject+"\x00"+e.ID] = true
		rec := e.Time.Add(1500 * time.Millisecond)
		e.RecordedAt = &rec
		evs = append(evs, e)
	}
	arch, err := openTestArchive(t, c, nA, bucket)
	if err != nil {
		t.Fatal(err)
	}
	store, err := projector.NewDynamoStore(c.DynamoDB, nA)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := projector.New(store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b*300 < len(evs); b++ {
		batch := evs[b*300 : min((b+1)*300, len(evs))]
		var recs []archiver.Record
		var inputs []projector.Input
		for i, e := range batch {
			seq := fmt.Sprintf("%021d", 100000000000000000+b*1000+i)
			recs = append(recs, archiver.Record{Event: e, Seq: seq, StreamEventID: fmt.Sprintf("ev-%d-%d", b, i)})
			p, err := schema.Validate(&e)
			if err != nil {
				t.Fatal(err)
			}
			if sc, ok := p.(*schema.ExecutionStatusChange); ok && !sc.IsAgent() {
				continue
			}
			k, _ := projector.KindFor(e.Type)
			inputs = append(inputs, projector.Input{Seq: seq, Event: e, Payload: p, Kind: k})
		}
		if _, err := arch.WriteBatch(ctx, recs); err != nil {
			t.Fatalf("archive batch %d: %v", b, err)
		}
		if out := proj.Project(ctx, inputs); len(out.Failed) > 0 {
			t.Fatalf("project batch %d: %v", b, out.Failed)
		}
	}

	env := localEnv(nA)
	cli := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, env, "", args...)
		if code != want {
			t.Fatalf("streamfold %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	var sum repair.RebuildResult
	decode := func(out string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), v); err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
	}

	target := nA.Prefix + "-rb"
	decode(cli(exitOK, "rebuild", "--from-archive", uri, "--target-prefix", target, "--json", "--quiet"), &sum)
	if sum.Events != len(evs) || sum.Projected+sum.NonAgent != len(evs) || sum.Invalid != 0 || sum.Changed == 0 ||
		len(sum.TablesCreated) != len(schema.Tables()) || sum.Into != "fresh" || sum.Prefix != target {
		t.Fatalf("rebuild summary %+v: want all %d archived events projected into new tables %s-dev-*", sum, len(evs), target)
	}
	out := cli(exitOK, "verify", "--prefix", target, "--from-archive", uri, "--quiet")
	if !strings.Contains(out, "no difference") {
		t.Fatalf("verify of the rebuilt tables: %s", out)
	}

	out = cli(exitFailed, "rebuild", "--from-archive", uri, "--target-prefix", target, "--quiet")
	if !strings.Contains(out, target+"-dev-aggregates") || !strings.Contains(out, "already hold items") {
		t.Fatalf("rebuild into a full target: %s", out)
	}
	decode(cli(exitOK, "rebuild", "--from-archive", uri, "--target-prefix", target, "--force", "--json", "--quiet"), &sum)
	if sum.Changed != 0 || sum.Commits != 0 || sum.Unchanged == 0 {
		t.Fatalf("second rebuild %+v: want nothing changed", sum)
	}
	decode(cli(exitOK, "rebuild", "--from-archive", uri, "--into", "in-place", "--json", "--quiet"), &sum)
	if sum.Changed != 0 || sum.Commits != 0 || sum.Prefix != nA.Prefix {
		t.Fatalf("in-place rebuild of tables built from the same events %+v: want nothing changed", sum)
	}

	var rep repair.VerifyResult
	decode(cli(exitOK, "verify", "--json"), &rep)
	if !rep.OK || rep.Archive != uri || len(rep.Rows) != 3 || rep.Rows[0].Archive == 0 {
		t.Fatalf("verify of A: %+v", rep)
	}

	// Change one per-stage message count behind the projector's back.
	mc := rebuild.RowKinds()[1]
	live, err := rebuild.NewDynamoLive(c.DynamoDB, nA)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := live.Rows(ctx, mc)
	if err != nil || len(rows) == 0 {
		t.Fatalf("message count rows: %v, %v", rows, err)
	}
	row := rows[0]
	scope, date := row["scope"].(*types.AttributeValueMemberS).Value, row["date"].(*types.AttributeValueMemberS).Value
	_, err = c.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(nA.Table(schema.TableMetrics)),
		Key:                       map[string]types.AttributeValue{"scope": row["scope"], "date": row["date"]},
		UpdateExpression:          aws.String("ADD #t :two"),
		ExpressionAttributeNames:  map[string]string{"#t": "total"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":two": &types.AttributeValueMemberN{Value: "2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	total := row["total"].(*types.AttributeValueMemberN).Value
	out = cli(exitFailed, "verify", "--quiet")
	want := fmt.Sprintf("1 differences:\n  metrics date=%s scope=%s: total: archive %s, projection %s\n", date, scope, total, addInt(t, total, 2))
	t.Logf("verify after the change:\n%s", out)
	if !strings.HasSuffix(out, want) {
		t.Fatalf("verify after the change:\n%s\nwant it to end with:\n%s", out, want)
	}
	decode(cli(exitFailed, "verify", "--json", "--quiet"), &rep)
	if rep.OK || len(rep.Differences) != 1 || rep.Differences[0].Attribute != "total" || rep.Differences[0].Key["scope"] != scope {
		t.Fatalf("verify --json after the change: %+v", rep.Differences)
	}

	out = cli(exitRuntime, "verify", "--quiet", "--from-archive", "s3://"+nA.Prefix+"-no-such-bucket/archive")
	if !strings.Contains(out, "verify:") {
		t.Fatalf("verify of a missing archive: %s", out)
	}
}

func addInt(t *testing.T, s string, d int) string {
	t.Helper()
	var v int
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(v + d)
}

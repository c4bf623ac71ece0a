package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
	"github.com/streamfold/streamfold/toolkit/archivetools"
)

// TestRunArchivesCompactsAndVerifies drives the local pipeline through the
// CLI as a user would: a simulated workload and one poison item are
// appended; `run --until-caught-up` projects and archives the stream; the
// archive holds every appended event exactly once and the poison record
// under errors/ (`archive errors` exits 1); `archive compact` leaves one
// object per partition and the same events; `verify` finds no difference;
// and `deadletter replay --consumer archiver` re-drives an archiver dead
// letter into the archive.
func TestRunArchivesCompactsAndVerifies(t *testing.T) {
	c := testenv.S3Clients(t)
	ctx := context.Background()
	n, _ := testenv.Tables(t, c)
	bucket := testenv.Bucket(t, c, n.BucketName())
	env := localEnv(n)
	evs, res := appendSimulated(t, c, n, 11, 600, 2)
	// A poison item: a type no consumer knows.
	if _, err := c.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(n.Table(schema.TableEvents)), Item: map[string]types.AttributeValue{
		"subject": &types.AttributeValueMemberS{Value: "x/1"}, "id": &types.AttributeValueMemberS{Value: "poison-1"},
		"type": &types.AttributeValueMemberS{Value: "no.such.type"}, "time": &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--json", "--batch-size", "200", "--archive-batch-size", "150", "--archive-batch-window", "0s")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Archiver == nil {
		t.Fatalf("run summary %s (%v)", out, err)
	}
	if want := int64(res.Count(ingest.Accepted) + 1); sum.Archiver.Records != want || sum.Projector.Records != want {
		t.Fatalf("records handed over: projector %d, archiver %d, want %d each", sum.Projector.Records, sum.Archiver.Records, want)
	}

	a, err := openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, e := range evs {
		stored[e.Subject+"\x00"+e.ID] = true
	}
	archived := func() map[string]int {
		t.Helper()
		seen := map[string]int{}
		if err := a.Events(ctx, func(e schema.Event) error { seen[e.Subject+"\x00"+e.ID]++; return nil }); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	check := func(when string) {
		t.Helper()
		seen := archived()
		if len(seen) != len(stored) {
			t.Fatalf("%s: archive holds %d distinct events, the event table %d", when, len(seen), len(stored))
		}
		for k, n := range seen {
			if !stored[k] || n != 1 {
				t.Fatalf("%s: event %q archived %d times (stored: %v)", when, k, n, stored[k])
			}
		}
	}
	check("after run")

	code, out, errOut = runCLI(t, env, "", "archive", "errors", "--json")
	var errs []archiver.ErrorRecord
	if code != exitFailed || json.Unmarshal([]byte(out), &errs) != nil || len(errs) != 1 || !strings.Contains(errs[0].Reason, "poison record") {
		t.Fatalf("archive errors exit %d, want 1 with the poison record:\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, env, "", "archive", "ls", "--json")
	var parts []archivetools.Partition
	if code != exitOK || json.Unmarshal([]byte(out), &parts) != nil || len(parts) == 0 {
		t.Fatalf("archive ls exit %d:\n%s\n%s", code, out, errOut)
	}
	dates := map[string]bool{}
	before := 0
	for _, p := range parts {
		dates[p.Date] = true
		before += p.Objects
	}
	for d := range dates {
		code, out, errOut = runCLI(t, env, "", "archive", "compact", "--date", d, "--min-age", "0s", "--json")
		if code != exitOK {
			t.Fatalf("archive compact %s exit %d\n%s\n%s", d, code, out, errOut)
		}
	}
	_, out, _ = runCLI(t, env, "", "archive", "ls", "--json")
	parts = nil
	if err := json.Unmarshal([]byte(out), &parts); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if p.Objects != 1 {
			t.Fatalf("after compaction %s/%s has %d objects, want 1", p.Table, p.Date, p.Objects)
		}
	}
	if len(parts) >= before {
		t.Fatalf("compaction did not reduce the objects: %d before, %d after", before, len(parts))
	}
	check("after compaction")

	// Iceberg upkeep: expiring every snapshot but the newest deletes the
	// compacted inputs; the events stay, once.
	code, out, errOut = runCLI(t, env, "", "archive", "maintain", "--snapshot-age", "1ns", "--retain-snapshots", "1", "--json")
	var maint []archiver.MaintainStats
	if code != exitOK || json.Unmarshal([]byte(out), &maint) != nil || len(maint) != len(archiver.Tables()) {
		t.Fatalf("archive maintain exit %d:\n%s\n%s", code, out, errOut)
	}
	expired := 0
	for _, m := range maint {
		expired += m.SnapshotsExpired
	}
	if expired == 0 {
		t.Fatalf("archive maintain expired no snapshot: %s", out)
	}
	check("after maintenance")
	code, out, _ = runCLI(t, env, "", "archive", "tables")
	var doc archiver.TablesDoc
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || doc.Partition != "day(event_time)" || len(doc.Tables) != len(archiver.Tables()) {
		t.Fatalf("archive tables exit %d: %.300s", code, out)
	}

	if code, out, errOut = runCLI(t, env, "", "verify", "--quiet"); code != exitOK {
		t.Fatalf("verify exit %d\n%s\n%s", code, out, errOut)
	}

	// An archiver dead letter (as after exhausted retries) replays into the
	// archive; the event is still there once.
	got, err := c.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(n.Table(schema.TableEvents)), Key: map[string]types.AttributeValue{
		"subject": &types.AttributeValueMemberS{Value: evs[0].Subject}, "id": &types.AttributeValueMemberS{Value: evs[0].ID}}})
	if err != nil || got.Item == nil {
		t.Fatalf("get stored event: %v", err)
	}
	img, err := streamimage.ToLambda(got.Item)
	if err != nil {
		t.Fatal(err)
	}
	rec := events.DynamoDBEventRecord{EventName: "INSERT", EventID: "replay-1", Change: events.DynamoDBStreamRecord{SequenceNumber: "900000000000000000001", NewImage: img}}
	d, err := projector.NewDeadLetter("archiver", "retries-exhausted", rec, errors.New("injected S3 outage"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters)).Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, env, "", "deadletter", "replay", "--consumer", "archiver")
	if code != exitOK || !strings.Contains(out, `"replayed": 1`) {
		t.Fatalf("deadletter replay --consumer archiver exit %d\n%s\n%s", code, out, errOut)
	}
	if seen := archived(); seen[evs[0].Subject+"\x00"+evs[0].ID] != 2 {
		// The replayed record has a new stream position, so it is a second
		// copy until compaction merges it away (compaction keeps one row per
		// subject and id).
		t.Fatalf("replayed event archived %d times, want 2 before compaction", seen[evs[0].Subject+"\x00"+evs[0].ID])
	}
	date := archiver.EventDate(evs[0].Time)
	table, _ := archiver.TableFor(evs[0].Type)
	if code, out, errOut = runCLI(t, env, "", "archive", "compact", "--date", date, "--table", table, "--min-age", "0s"); code != exitOK {
		t.Fatalf("archive compact exit %d\n%s\n%s", code, out, errOut)
	}
	check("after replay and compaction")
}

// TestArchiveMigrateCLI migrates an archive written by the archiver before
// Iceberg (archiver/testdata/legacy_archive, made by commit 309899c) with
// the command a user runs, on MinIO: every event its manifests list is then
// in the Iceberg tables once, a second run migrates nothing, and ls shows
// the tables.
func TestArchiveMigrateCLI(t *testing.T) {
	c := testenv.S3Clients(t)
	ctx := context.Background()
	n, _ := testenv.Tables(t, c)
	bucket := testenv.Bucket(t, c, n.BucketName())
	env := localEnv(n)
	root := "../../archiver/testdata/legacy_archive/archive"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		body = bytes.ReplaceAll(body, []byte("s3://legacy-bkt/archive/"), []byte("s3://"+bucket+"/archive/"))
		_, err = c.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("archive/" + filepath.ToSlash(rel)), Body: bytes.NewReader(body)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "", "archive", "migrate", "--json")
	if code != exitOK {
		t.Fatalf("archive migrate exit %d\n%s\n%s", code, out, errOut)
	}
	var first archivetools.Migrated
	if err := json.Unmarshal([]byte(out), &first); err != nil || first.Migrated == 0 || first.Migrated != first.Partitions {
		t.Fatalf("migrate --json: %v\n%s", err, out)
	}
	a, err := openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	if err := a.Events(ctx, func(e schema.Event) error { seen[e.Subject+"\x00"+e.ID]++; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 200 {
		t.Fatalf("the Iceberg tables hold %d events after the migration; the fixture lists 240", len(seen))
	}
	for k, n := range seen {
		if n != 1 || strings.Contains(k, "orphan-") {
			t.Fatalf("event %q: %d times (orphans must not be migrated)", k, n)
		}
	}
	code, out, errOut = runCLI(t, env, "", "archive", "migrate", "--json")
	var second archivetools.Migrated
	if code != exitOK || json.Unmarshal([]byte(out), &second) != nil || second.Migrated != 0 || second.Skipped != first.Partitions || second.Files != 0 {
		t.Fatalf("second migrate exit %d: want every partition skipped\n%s\n%s", code, out, errOut)
	}
	if code, out, _ = runCLI(t, env, "", "archive", "ls"); code != exitOK || !strings.Contains(out, "github_jobs") {
		t.Fatalf("archive ls after migrate: exit %d\n%s", code, out)
	}
	t.Logf("migrated %d events; first run: %s", len(seen), out)
}

// TestArchiveRegisterCLI: the archive's catalog is lost (its SQLite file
// deleted, as a Glue database could be); readers then fail (exit 3) naming
// the remedy, `archive register --all` registers every table from its
// metadata in S3 (exit 0), a second run finds them present, and every
// event is read again.
func TestArchiveRegisterCLI(t *testing.T) {
	c := testenv.S3Clients(t)
	ctx := context.Background()
	n, _ := testenv.Tables(t, c)
	bucket := testenv.Bucket(t, c, n.BucketName())
	env := localEnv(n)
	evs, _, err := simulate.Generate(simulate.Config{Seed: 5, Events: 200, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]archiver.Record, len(evs))
	for i, e := range evs {
		recs[i] = archiver.Record{Event: e, Seq: strconv.Itoa(100000 + i), StreamEventID: "ev" + strconv.Itoa(i)}
	}
	a, err := openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	a.Close()
	path := strings.TrimPrefix(testCatalogURI(n), "sqlite:")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, env, "", "archive", "ls")
	if code != exitRuntime || !strings.Contains(errOut, "streamfold archive register") {
		t.Fatalf("archive ls with the catalog lost: exit %d, want 3 naming the remedy\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, env, "", "archive", "register", "--all", "--json")
	var regs []archiver.Registration
	if code != exitOK || json.Unmarshal([]byte(out), &regs) != nil || len(regs) != len(archiver.Tables()) {
		t.Fatalf("archive register --all --json: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, r := range regs {
		if r.Action != "registered" || r.Snapshots != 1 || !strings.HasPrefix(r.Metadata, "s3://"+bucket+"/archive/"+r.Table+"/metadata/") {
			t.Errorf("register %s: %+v", r.Table, r)
		}
	}
	code, out, errOut = runCLI(t, env, "", "archive", "register", "--table", archiver.TableMessages)
	if code != exitOK || !strings.Contains(out, "present") {
		t.Fatalf("second register: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut = runCLI(t, env, "", "archive", "register", "--all", "--table", archiver.TableMessages); code != exitUsage {
		t.Fatalf("--all with --table: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	a, err = openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	seen := 0
	if err := a.Events(ctx, func(schema.Event) error { seen++; return nil }); err != nil || seen != len(recs) {
		t.Fatalf("after register: %d events (%v), want %d", seen, err, len(recs))
	}
}

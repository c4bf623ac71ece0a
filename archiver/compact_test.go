package archiver_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// all merges everything, at once.
var all = archiver.CompactOptions{MinAge: -1}

// dayOf returns the records of one table and date, and that date.
func dayOf(recs []archiver.Record, table string) ([]archiver.Record, string) {
	by := map[string][]archiver.Record{}
	best := ""
	for _, r := range recs {
		if tb, _ := archiver.TableFor(r.Event.Type); tb != table {
			continue
		}
		d := archiver.EventDate(r.Event.Time)
		by[d] = append(by[d], r)
		if len(by[d]) > len(by[best]) {
			best = d
		}
	}
	return by[best], best
}

// writeSmall archives recs in batches of n: one small object each.
func writeSmall(t testing.TB, a *archiver.Archive, recs []archiver.Record, n int) {
	t.Helper()
	for _, b := range batches(recs, n) {
		if _, err := a.WriteBatch(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
}

// listKeys lists every key under prefix.
func listKeys(t testing.TB, api archiver.S3API, bucket, prefix string) []string {
	t.Helper()
	var out []string
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
	for {
		page, err := api.ListObjectsV2(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
		if !aws.ToBool(page.IsTruncated) {
			return out
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}

// testCompactCrashes crashes a compaction after each of its S3 mutations in
// turn (the k-th run lets k mutations through, then every call fails). After
// each crash a reader sees every event once; a second Compact finishes the
// job, after which the partition is one file. What is left outside the
// table is only the replaced inputs (until snapshot expiry deletes them)
// and the crashed run's uncommitted outputs (orphans, deleted by Maintain
// once older than its OrphanAge).
func testCompactCrashes(t *testing.T, api archiver.S3API, bucket string, recs []archiver.Record, table, date string, batch int) {
	ctx := context.Background()
	for k := 0; ; k++ {
		prefix := "crash-" + strconv.Itoa(k)
		reader := newArchive(t, api, archiver.Config{Bucket: bucket, Prefix: prefix})
		writeSmall(t, reader, recs, batch)
		before, err := reader.Objects(ctx, table, date)
		if err != nil {
			t.Fatal(err)
		}
		f := newFaultS3(api)
		crashing := newArchive(t, f, archiver.Config{Bucket: bucket, Prefix: prefix})
		f.crashAfter(k)
		st, err := crashing.Compact(ctx, table, date, all)
		if err == nil {
			if k < 4 {
				t.Fatalf("compaction needed only %d mutations", k)
			}
			if st.ObjectsBefore != len(before) || st.ObjectsAfter != 1 || st.Inputs != len(before) || st.Outputs != 1 || st.Rows != len(recs) {
				t.Fatalf("uninterrupted compaction: %+v", st)
			}
			t.Logf("a compaction of %d files makes %d S3 mutations; crashed after each", len(before), k)
			return
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("crash after %d mutations: %v", k, err)
		}
		exactlyOnce(t, reader, recs) // whatever the step, a reader sees each event once

		st, err = reader.Compact(ctx, table, date, all)
		if err != nil {
			t.Fatalf("resume after crash %d: %v", k, err)
		}
		exactlyOnce(t, reader, recs)
		after, err := reader.Objects(ctx, table, date)
		if err != nil || len(after) != 1 {
			t.Fatalf("after crash %d and resume: %d files (%v), stats %+v", k, len(after), err, st)
		}
		orphans, err := reader.Orphans(ctx, table, date)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range orphans {
			if !slices.Contains(before, o) && !strings.Contains(o, "/compact-") {
				t.Fatalf("after crash %d and resume: unexpected file outside the table %s", k, o)
			}
		}
		// Expiring every older snapshot deletes nothing yet (the older
		// metadata files still reference the replaced inputs) and loses
		// nothing.
		if _, err := reader.Maintain(ctx, table, archiver.MaintainOptions{SnapshotAge: time.Nanosecond, RetainSnapshots: 1}); err != nil {
			t.Fatalf("maintain after crash %d: %v", k, err)
		}
		orphans, _ = reader.Orphans(ctx, table, date)
		for _, o := range orphans {
			if !slices.Contains(before, o) && !strings.Contains(o, "/compact-") {
				t.Fatalf("after maintenance: unexpected file outside the table %s", o)
			}
		}
		exactlyOnce(t, reader, recs)
		if k > 200 {
			t.Fatal("compaction never finished")
		}
	}
}

func TestCompactCrashSafetyMem(t *testing.T) {
	recs, date := dayOf(simRecords(t, 8, 600, 1), archiver.TableGitHubJobs)
	testCompactCrashes(t, s3mem.New("bkt"), "bkt", recs, archiver.TableGitHubJobs, date, len(recs)/10+1)
}

func TestCompactMergesAndShrinks(t *testing.T) {
	ctx := context.Background()
	mem, a := memArchive(t)
	recs := simRecords(t, 9, 2000, 2)
	writeSmall(t, a, recs, 40)
	var before, after int
	for _, tb := range archiver.Tables() {
		dates, _ := a.Partitions(ctx, tb.Name)
		for _, d := range dates {
			keys, _ := a.Objects(ctx, tb.Name, d)
			before += len(keys)
			st, err := a.Compact(ctx, tb.Name, d, all)
			if err != nil {
				t.Fatal(err)
			}
			keys, _ = a.Objects(ctx, tb.Name, d)
			after += len(keys)
			if st.ObjectsAfter != len(keys) {
				t.Fatalf("%s %s: stats %+v, %d objects listed", tb.Name, d, st, len(keys))
			}
			// Idempotent: a second run finds nothing to do.
			st2, err := a.Compact(ctx, tb.Name, d, all)
			if err != nil || st2.Inputs != 0 || st2.ObjectsAfter != len(keys) {
				t.Fatalf("%s %s: second compaction %+v, %v", tb.Name, d, st2, err)
			}
		}
	}
	if after >= before || after > 8 {
		t.Fatalf("objects %d -> %d", before, after)
	}
	exactlyOnce(t, a, recs)
	_ = mem
}

func TestCompactTargetSize(t *testing.T) {
	ctx := context.Background()
	mem, a := memArchive(t)
	recs, date := dayOf(simRecords(t, 10, 2000, 1), archiver.TableGitHubJobs)
	writeSmall(t, a, recs, 20)
	keys, _ := a.Objects(ctx, archiver.TableGitHubJobs, date)
	total := objectBytes(t, mem, "bkt", keys)
	st, err := a.Compact(ctx, archiver.TableGitHubJobs, date, archiver.CompactOptions{MinAge: -1, TargetObjectBytes: total / 4})
	if err != nil {
		t.Fatal(err)
	}
	if st.Outputs < 3 || st.ObjectsAfter >= len(keys) || st.OutputBytes > total {
		t.Fatalf("a small target should give several outputs: %+v (from %d objects)", st, len(keys))
	}
	exactlyOnce(t, a, recs)
}

func TestCompactMinAge(t *testing.T) {
	ctx := context.Background()
	mem, a := memArchive(t)
	recs, date := dayOf(simRecords(t, 11, 400, 1), archiver.TableMessages)
	first, last := recs[:len(recs)-5], recs[len(recs)-5:]
	writeSmall(t, a, first, 10)
	st, err := a.Compact(ctx, archiver.TableMessages, date, archiver.CompactOptions{})
	if err != nil || st.Inputs != 0 || st.Skipped != st.ObjectsBefore {
		t.Fatalf("objects younger than the default MinAge were merged: %+v %v", st, err)
	}
	// A day later one more batch arrives; the first ones are old now.
	later := func() time.Time { return time.Now().Add(25 * time.Hour) }
	mem.SetClock(later)
	writeSmall(t, a, last, 10)
	old := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "archive", Now: later})
	st, err = old.Compact(ctx, archiver.TableMessages, date, archiver.CompactOptions{})
	if err != nil || st.Inputs != st.ObjectsBefore-1 || st.Skipped != 1 || st.ObjectsAfter != 2 {
		t.Fatalf("MinAge: %+v %v", st, err)
	}
	exactlyOnce(t, a, recs)
}

// TestCompactKeepsConcurrentWrites adds a batch to the partition while the
// compaction is writing its outputs: the swap must keep it.
func TestCompactKeepsConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	plain := newArchive(t, mem, archiver.Config{Bucket: "bkt"})
	comp := newArchive(t, f, archiver.Config{Bucket: "bkt"})
	recs, date := dayOf(simRecords(t, 12, 800, 1), archiver.TableMessages)
	early, late := recs[:len(recs)-30], recs[len(recs)-30:]
	writeSmall(t, plain, early, 20)
	var once sync.Once
	f.setFail(func(op, key string) bool {
		if strings.Contains(key, "/compact-") {
			once.Do(func() {
				if _, err := plain.WriteBatch(ctx, late); err != nil {
					t.Error(err)
				}
			})
		}
		return false
	})
	st, err := comp.Compact(ctx, archiver.TableMessages, date, all)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := plain.Objects(ctx, archiver.TableMessages, date)
	if len(keys) != 2 || st.ObjectsAfter != 2 {
		t.Fatalf("want the output and the concurrent batch listed: %v (%+v)", keys, st)
	}
	exactlyOnce(t, plain, recs)
}

func TestCompactRemovesDuplicates(t *testing.T) {
	ctx := context.Background()
	_, a := memArchive(t)
	recs, date := dayOf(simRecords(t, 13, 400, 1), archiver.TableMessages)
	writeSmall(t, a, recs, 25)
	// The same events again under other stream positions (an exhausted
	// retry's leftovers): visible twice until compaction.
	dup := make([]archiver.Record, 10)
	for i := range dup {
		dup[i] = recs[i*3]
		dup[i].Seq = "9" + dup[i].Seq
	}
	if _, err := a.WriteBatch(ctx, dup); err != nil {
		t.Fatal(err)
	}
	if n := len(scanAll(t, a)); n != len(recs)+len(dup) {
		t.Fatalf("set-up: %d records", n)
	}
	st, err := a.Compact(ctx, archiver.TableMessages, date, all)
	if err != nil || st.Duplicates != len(dup) || st.Rows != len(recs) {
		t.Fatalf("compaction %+v %v: want %d duplicates dropped", st, err, len(dup))
	}
	exactlyOnce(t, a, recs)
}

// TestCompactThenMaintain: compaction leaves the replaced inputs in S3 for
// readers of older snapshots; snapshot expiry removes those snapshots, and
// the inputs are deleted once no metadata file at the table's location
// references them any more (the table's older metadata files fall out of
// its metadata log after 100 commits; here they are deleted by hand) and
// they are older than the orphan age.
func TestCompactThenMaintain(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	// Everything (the table too) happened a month ago.
	a := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "archive", Now: func() time.Time { return time.Now().Add(-31 * 24 * time.Hour) }})
	recs, date := dayOf(simRecords(t, 14, 300, 1), archiver.TableMessages)
	mem.SetClock(func() time.Time { return time.Now().Add(-30 * 24 * time.Hour) })
	writeSmall(t, a, recs, 30)
	inputs, _ := a.Objects(ctx, archiver.TableMessages, date)
	st, err := a.Compact(ctx, archiver.TableMessages, date, all)
	mem.SetClock(time.Now)
	if err != nil || st.Inputs != len(inputs) {
		t.Fatalf("compact: %+v %v", st, err)
	}
	exists := func(key string) bool { return slices.Contains(mem.Keys("bkt", key), key) }
	if !exists(inputs[0]) {
		t.Fatal("a replaced input was deleted by compaction; older snapshots still hold it")
	}
	orphans, _ := a.Orphans(ctx, archiver.TableMessages, date)
	if !slices.Equal(orphans, inputs) {
		t.Fatalf("files outside the current snapshot %v, want the inputs %v", orphans, inputs)
	}
	exactlyOnce(t, a, recs)
	// The defaults keep a week of snapshots: nothing goes yet.
	ms, err := a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{})
	if err != nil || ms.SnapshotsExpired != 0 || !exists(inputs[0]) {
		t.Fatalf("maintain with defaults: %+v %v", ms, err)
	}
	ms, err = a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{SnapshotAge: time.Nanosecond, RetainSnapshots: 1})
	if err != nil || ms.SnapshotsExpired == 0 || ms.SnapshotsBefore-ms.SnapshotsExpired != 1 {
		t.Fatalf("maintain expiring all but the newest: %+v %v", ms, err)
	}
	// The older metadata files still reference the inputs: kept.
	ms, err = a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{})
	if err != nil || ms.OrphansKept < len(inputs) {
		t.Fatalf("maintain after expiry: %+v %v; want the %d inputs kept", ms, err, len(inputs))
	}
	for _, k := range inputs {
		if !exists(k) {
			t.Fatalf("%s was deleted while older metadata files still reference it", k)
		}
	}
	exactlyOnce(t, a, recs)
	// What delete-after-commit does after 100 more commits: the older
	// metadata files go. Then the inputs are orphans of no metadata file.
	tbl, err := a.Table(ctx, archiver.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range mem.Keys("bkt", "archive/messages/metadata/") {
		if strings.HasSuffix(k, ".metadata.json") && !strings.HasSuffix(tbl.MetadataLocation(), k) {
			mem.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k)})
		}
	}
	if ms, err = a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{}); err != nil {
		t.Fatalf("maintain: %v", err)
	}
	for _, k := range inputs {
		if exists(k) {
			t.Fatalf("%s survived once no metadata file referenced it: %+v", k, ms)
		}
	}
	exactlyOnce(t, a, recs)
	if _, err := a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{OrphanAge: time.Minute}); err == nil {
		t.Error("an orphan age under an hour was accepted")
	}
}

// TestCompactConflict runs a second compaction of the same partition while
// the first writes its output: the second commits, the first finds its
// inputs gone, gives up with ErrCompactionConflict and deletes its own
// output, never the winner's.
func TestCompactConflict(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt"})
	recs, date := dayOf(simRecords(t, 15, 300, 1), archiver.TableMessages)
	writeSmall(t, a, recs, 30)
	other := newArchive(t, mem, archiver.Config{Bucket: "bkt"})
	var inner error
	var once sync.Once
	f.setFail(func(op, key string) bool {
		if strings.Contains(key, "/compact-") {
			once.Do(func() { _, inner = other.Compact(ctx, archiver.TableMessages, date, all) })
		}
		return false
	})
	_, err := a.Compact(ctx, archiver.TableMessages, date, all)
	if inner != nil || !errors.Is(err, archiver.ErrCompactionConflict) {
		t.Fatalf("compactions: inner %v, outer %v; want the outer to get ErrCompactionConflict", inner, err)
	}
	after, _ := a.Objects(ctx, archiver.TableMessages, date)
	if len(after) != 1 {
		t.Fatalf("after the conflict: %v", after)
	}
	for _, k := range mem.Keys("bkt", "") {
		if strings.Contains(k, "compact-") && k != after[0] {
			t.Fatalf("left behind: %s", k)
		}
	}
	exactlyOnce(t, a, recs)
	if _, err := a.Compact(ctx, "nope", date, all); !errors.Is(err, archiver.ErrUnknownTable) {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := a.Compact(ctx, archiver.TableMessages, "yesterday", all); err == nil {
		t.Error("bad date accepted")
	}
}

// objectBytes sums the sizes of keys.
func objectBytes(t testing.TB, mem *s3mem.S3, bucket string, keys []string) int64 {
	t.Helper()
	var n int64
	for _, k := range keys {
		out, err := mem.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if err != nil {
			t.Fatal(err)
		}
		n += aws.ToInt64(out.ContentLength)
	}
	return n
}

// TestMaintainKeepsLegacyObjects: orphan cleanup deletes old orphan files
// under a table's data/ but never the pre-Iceberg objects that share the
// table's location (PREFIX/<table>/event_date=D/), which wait for their
// migration.
func TestMaintainKeepsLegacyObjects(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	// The table was created before the orphan was written (a month ago).
	a := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "archive", Now: func() time.Time { return time.Now().Add(-31 * 24 * time.Hour) }})
	recs, date := dayOf(simRecords(t, 21, 200, 1), archiver.TableMessages)
	writeSmall(t, a, recs, 50)
	legacy := "archive/messages/event_date=" + date + "/0000000000000000000000000000000000000001.parquet"
	orphan := "archive/messages/data/event_date=" + date + "/0000000000000000000000000000000000000001-0000000000000000000000000000000000000002.parquet"
	mem.SetClock(func() time.Time { return time.Now().Add(-30 * 24 * time.Hour) })
	for _, k := range []string{legacy, orphan} {
		if _, err := mem.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	mem.SetClock(time.Now)
	st, err := a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{})
	if err != nil || st.OrphansDeleted != 1 {
		t.Fatalf("maintain: %+v %v; want the one old orphan under data/ deleted", st, err)
	}
	if keys := mem.Keys("bkt", legacy); len(keys) != 1 {
		t.Fatalf("the pre-Iceberg object %s was deleted", legacy)
	}
	if keys := mem.Keys("bkt", orphan); len(keys) != 0 {
		t.Fatalf("the old orphan %s survived", orphan)
	}
	exactlyOnce(t, a, recs)
}

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
// job, after which the partition is one object, nothing is orphaned and no
// journal or lock is left.
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
		st, err := crashing.Compact(ctx, table, date, archiver.CompactOptions{MinAge: -1, LockTTL: time.Millisecond})
		if err == nil {
			if k < 4 {
				t.Fatalf("compaction needed only %d mutations", k)
			}
			if st.ObjectsBefore != len(before) || st.ObjectsAfter != 1 || st.Inputs != len(before) || st.Outputs != 1 || st.Rows != len(recs) {
				t.Fatalf("uninterrupted compaction: %+v", st)
			}
			t.Logf("a compaction of %d objects makes %d S3 mutations; crashed after each", len(before), k)
			return
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("crash after %d mutations: %v", k, err)
		}
		exactlyOnce(t, reader, recs) // whatever the step, a reader sees each event once

		// The crashed run's lock has expired (it took it for a millisecond):
		// the next compaction takes it over and finishes the job.
		time.Sleep(2 * time.Millisecond)
		st, err = reader.Compact(ctx, table, date, all)
		if err != nil {
			t.Fatalf("resume after crash %d: %v", k, err)
		}
		exactlyOnce(t, reader, recs)
		after, err := reader.Objects(ctx, table, date)
		if err != nil || len(after) != 1 {
			t.Fatalf("after crash %d and resume: %d objects (%v), stats %+v", k, len(after), err, st)
		}
		orphans, err := reader.Orphans(ctx, table, date)
		if err != nil || len(orphans) != 0 {
			t.Fatalf("after crash %d and resume: orphans %v %v", k, orphans, err)
		}
		if left := listKeys(t, api, bucket, prefix+"/_compaction/"); len(left) != 0 {
			t.Fatalf("after crash %d and resume: left %v", k, left)
		}
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
			if st.ObjectsAfter != len(keys) || (st.Inputs > 0 && st.Deleted != st.Inputs) {
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
	for _, k := range mem.Keys("bkt", "archive/") {
		if strings.Contains(k, "_compaction/") {
			t.Fatalf("left behind: %s", k)
		}
	}
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

func TestCompactGrace(t *testing.T) {
	ctx := context.Background()
	mem, a := memArchive(t)
	recs, date := dayOf(simRecords(t, 14, 300, 1), archiver.TableMessages)
	writeSmall(t, a, recs, 30)
	inputs, _ := a.Objects(ctx, archiver.TableMessages, date)
	opts := archiver.CompactOptions{MinAge: -1, Grace: time.Hour}
	st, err := a.Compact(ctx, archiver.TableMessages, date, opts)
	if err != nil || st.Deleted != 0 || st.Pending != 1 {
		t.Fatalf("with grace: %+v %v", st, err)
	}
	exists := func(key string) bool {
		for _, k := range mem.Keys("bkt", key) {
			if k == key {
				return true
			}
		}
		return false
	}
	if !exists(inputs[0]) {
		t.Fatal("a replaced input was deleted within its grace period")
	}
	exactlyOnce(t, a, recs)
	st, _ = a.Compact(ctx, archiver.TableMessages, date, opts)
	if st.Pending != 1 || !exists(inputs[0]) {
		t.Fatalf("a second run within the grace period: %+v", st)
	}
	later := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "archive", Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	st, err = later.Compact(ctx, archiver.TableMessages, date, opts)
	if err != nil || st.Deleted != len(inputs) || st.Recovered != 1 || exists(inputs[0]) {
		t.Fatalf("after the grace period: %+v %v", st, err)
	}
	exactlyOnce(t, a, recs)
}

func TestCompactLock(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt"})
	recs, date := dayOf(simRecords(t, 15, 300, 1), archiver.TableMessages)
	writeSmall(t, a, recs, 30)
	// A second compaction while the first holds the lock is refused. The
	// second runs when the first, lock taken, writes its first output; it
	// goes to the store directly (not through f, whose lock the hook holds),
	// so it runs to its end right there, with no timing involved.
	other := newArchive(t, mem, archiver.Config{Bucket: "bkt"})
	var inner error
	var once sync.Once
	f.setFail(func(op, key string) bool {
		if strings.Contains(key, "/compact-") {
			once.Do(func() { _, inner = other.Compact(ctx, archiver.TableMessages, date, all) })
		}
		return false
	})
	if _, err := a.Compact(ctx, archiver.TableMessages, date, all); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, archiver.ErrCompactionLocked) {
		t.Fatalf("concurrent compaction: %v, want ErrCompactionLocked", inner)
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

// TestCompactConflict removes one of the inputs from the manifest while the
// compaction writes its outputs (as a concurrent compaction would): the
// swap is refused, the outputs and journal are removed, and the manifest
// keeps what the other writer put there.
func TestCompactConflict(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt"})
	recs, date := dayOf(simRecords(t, 16, 300, 1), archiver.TableMessages)
	writeSmall(t, a, recs, 30)
	keys, _ := a.Objects(ctx, archiver.TableMessages, date)
	manifest := "_symlink/messages/event_date=" + date + "/manifest"
	var once sync.Once
	f.setFail(func(op, key string) bool {
		if strings.Contains(key, "/compact-") {
			once.Do(func() {
				var b strings.Builder
				for _, k := range keys[1:] {
					b.WriteString("s3://bkt/" + k + "\n")
				}
				if _, err := mem.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(manifest), Body: strings.NewReader(b.String())}); err != nil {
					t.Error(err)
				}
			})
		}
		return false
	})
	_, err := a.Compact(ctx, archiver.TableMessages, date, all)
	if !errors.Is(err, archiver.ErrCompactionConflict) {
		t.Fatalf("compaction after an input vanished: %v, want ErrCompactionConflict", err)
	}
	after, _ := a.Objects(ctx, archiver.TableMessages, date)
	if !slices.Equal(after, keys[1:]) {
		t.Fatalf("manifest after the refused swap: %v", after)
	}
	for _, k := range mem.Keys("bkt", "") {
		if strings.Contains(k, "compact-") || strings.Contains(k, "journal-") {
			t.Fatalf("left behind: %s", k)
		}
	}
}

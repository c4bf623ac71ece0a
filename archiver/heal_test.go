package archiver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/schema"
)

// wantRefs returns the (subject, id) -> content hash of the records of one
// table on the given dates.
func wantRefs(t testing.TB, recs []archiver.Record, table string, dates []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range recs {
		tb, _ := archiver.TableFor(r.Event.Type)
		if tb != table || !slices.Contains(dates, archiver.EventDate(r.Event.Time)) {
			continue
		}
		h, err := schema.ContentHash(r.Event)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Event.Subject+"/"+r.Event.ID] = h
	}
	return out
}

// checkRefs checks that EventRefs of table on dates passes exactly want,
// each event once, with its type and recorded time.
func checkRefs(t testing.TB, a *archiver.Archive, recs []archiver.Record, table string, dates []string) {
	t.Helper()
	want := wantRefs(t, recs, table, dates)
	byKey := map[string]archiver.Record{}
	for _, r := range recs {
		byKey[r.Event.Subject+"/"+r.Event.ID] = r
	}
	got := map[string]string{}
	err := a.EventRefs(context.Background(), table, dates, func(r archiver.EventRef) error {
		k := r.Subject + "/" + r.ID
		if _, dup := got[k]; dup {
			return fmt.Errorf("event %s passed twice", k)
		}
		got[k] = r.Hash
		rec := byKey[k]
		if r.Type != rec.Event.Type || rec.Event.RecordedAt == nil || !r.RecordedAt.Equal(*rec.Event.RecordedAt) {
			return fmt.Errorf("event %s: type %s recorded %v, want %s %v", k, r.Type, r.RecordedAt, rec.Event.Type, rec.Event.RecordedAt)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("EventRefs(%s, %v): %v", table, dates, err)
	}
	if len(want) == 0 {
		t.Fatalf("set-up: no events of %s on %v", table, dates)
	}
	for k, h := range want {
		if got[k] != h {
			t.Fatalf("EventRefs(%s, %v): event %s hash %q, want %q", table, dates, k, got[k], h)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("EventRefs(%s, %v): %d events, want %d", table, dates, len(got), len(want))
	}
}

// testEventRefs archives three days with a crashed-and-retried batch and a
// redelivered one, then reads refs of two of the days before and after
// compaction.
func testEventRefs(t *testing.T, api archiver.S3API, bucket string) {
	ctx := context.Background()
	f := newFaultS3(api)
	a := newArchive(t, f, archiver.Config{Bucket: bucket, Prefix: "refs", Concurrency: 3})
	recs := simRecords(t, 21, 900, 3)
	bs := batches(recs, 60)
	for i, b := range bs {
		switch i % 5 {
		case 1: // crashes after some files, retried
			f.crashAfter(2)
			if _, err := a.WriteBatch(ctx, b); !errors.Is(err, errInjected) {
				t.Fatalf("batch %d: %v, want the injected failure", i, err)
			}
			f.heal()
		case 3: // redelivered after its checkpoint was lost
			if _, err := a.WriteBatch(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.WriteBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	table := archiver.TableGitHubJobs
	dates, err := a.Partitions(ctx, table)
	if err != nil || len(dates) < 3 {
		t.Fatalf("partitions %v, %v", dates, err)
	}
	two := []string{dates[len(dates)-1], dates[0]} // any order
	checkRefs(t, a, recs, table, two)
	for _, d := range dates {
		if _, err := a.Compact(ctx, table, d, all); err != nil {
			t.Fatal(err)
		}
	}
	checkRefs(t, a, recs, table, two)
	checkRefs(t, a, recs, archiver.TableMessages, dates)

	// No dates, no rows; bad input; fn's error comes back as it is.
	if err := a.EventRefs(ctx, table, nil, func(archiver.EventRef) error { return errors.New("called") }); err != nil {
		t.Fatalf("no dates: %v", err)
	}
	if err := a.EventRefs(ctx, "nope", two, func(archiver.EventRef) error { return nil }); !errors.Is(err, archiver.ErrUnknownTable) {
		t.Fatalf("unknown table: %v", err)
	}
	if err := a.EventRefs(ctx, table, []string{"2026-13-01"}, func(archiver.EventRef) error { return nil }); err == nil {
		t.Fatal("a bad date was accepted")
	}
	stop := errors.New("stop")
	n := 0
	if err := a.EventRefs(ctx, table, dates, func(archiver.EventRef) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	}); err != stop || n != 5 {
		t.Fatalf("fn's error: %v after %d rows", err, n)
	}
	empty := newArchive(t, api, archiver.Config{Bucket: bucket, Prefix: "refs-empty"})
	if err := empty.EventRefs(ctx, table, two, func(archiver.EventRef) error { return errors.New("called") }); err != nil {
		t.Fatalf("an archive without the table: %v", err)
	}
	if r := empty.Requests(); r.Put != 0 || r.Delete != 0 {
		t.Fatalf("a reader wrote: %+v", r)
	}
}

func TestEventRefsMem(t *testing.T) { testEventRefs(t, s3mem.New("bkt"), "bkt") }

func TestIntegrationEventRefs(t *testing.T) {
	c, bucket := newBucket(t)
	testEventRefs(t, c.S3, bucket)
}

// eventsOf returns the events of recs.
func eventsOf(recs []archiver.Record) []schema.Event {
	out := make([]schema.Event, len(recs))
	for i, r := range recs {
		out[i] = r.Event
	}
	return out
}

// eachEventOnce checks that the archive's readers (Events) see exactly the
// events of recs, each once and with its content.
func eachEventOnce(t testing.TB, a *archiver.Archive, recs []archiver.Record) {
	t.Helper()
	want := map[string]string{}
	for _, r := range recs {
		h, _ := schema.ContentHash(r.Event)
		want[r.Event.Subject+"/"+r.Event.ID] = h
	}
	got := map[string]int{}
	err := a.Events(context.Background(), func(e schema.Event) error {
		k := e.Subject + "/" + e.ID
		if h, _ := schema.ContentHash(e); h != want[k] {
			return fmt.Errorf("event %s: hash %s, want %s", k, h, want[k])
		}
		got[k]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range got {
		if n != 1 {
			t.Fatalf("event %s is archived %d times", k, n)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events archived, want %d", len(got), len(want))
	}
}

// split returns every k-th record (the missed ones) and the others.
func split(recs []archiver.Record, k int) (missed, archived []archiver.Record) {
	for i, r := range recs {
		if i%k == 0 {
			missed = append(missed, r)
		} else {
			archived = append(archived, r)
		}
	}
	return missed, archived
}

// testHeal: the stream consumer missed every 7th event; Heal of all
// events writes exactly those, a second Heal writes nothing, and readers
// and EventRefs see every event once, also after compaction.
func testHeal(t *testing.T, api archiver.S3API, bucket string) {
	ctx := context.Background()
	a := newArchive(t, api, archiver.Config{Bucket: bucket, Prefix: "heal"})
	recs := simRecords(t, 22, 700, 2)
	missed, archived := split(recs, 7)
	writeSmall(t, a, archived, 50)
	st, err := a.Heal(ctx, eventsOf(recs))
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != len(missed) || st.AlreadyArchived != len(archived) {
		t.Fatalf("heal %+v: want %d written, %d already archived", st, len(missed), len(archived))
	}
	eachEventOnce(t, a, recs)
	st, err = a.Heal(ctx, eventsOf(recs))
	if err != nil || st.Written != 0 || st.AlreadyArchived != len(recs) {
		t.Fatalf("second heal %+v, %v: want nothing written, %d already archived", st, err, len(recs))
	}
	eachEventOnce(t, a, recs)
	// Healed rows say so.
	healed := 0
	if err := a.Scan(ctx, func(r archiver.Record) error {
		if r.Seq == archiver.HealSeq {
			healed++
			if !strings.HasPrefix(r.StreamEventID, archiver.HealEventIDPrefix) {
				return fmt.Errorf("healed row %s/%s has stream_event_id %q", r.Event.Subject, r.Event.ID, r.StreamEventID)
			}
		}
		return nil
	}); err != nil || healed != len(missed) {
		t.Fatalf("%d healed rows, %v; want %d", healed, err, len(missed))
	}
	for _, tb := range archiver.Tables() {
		dates, err := a.Partitions(ctx, tb.Name)
		if err != nil {
			t.Fatal(err)
		}
		checkRefs(t, a, recs, tb.Name, dates)
		for _, d := range dates {
			if _, err := a.Compact(ctx, tb.Name, d, all); err != nil {
				t.Fatal(err)
			}
		}
		checkRefs(t, a, recs, tb.Name, dates)
	}
	eachEventOnce(t, a, recs)
	if st, err := a.Heal(ctx, eventsOf(recs)); err != nil || st.Written != 0 {
		t.Fatalf("heal after compaction %+v, %v", st, err)
	}
}

func TestHealMem(t *testing.T) { testHeal(t, s3mem.New("bkt"), "bkt") }

func TestIntegrationHeal(t *testing.T) {
	c, bucket := newBucket(t)
	testHeal(t, c.S3, bucket)
}

// testHealCrashes crashes a heal after each of its S3 mutations in turn
// (the k-th run lets k mutations through; every k when step is 1), then
// heals again: the second heal writes only what the crashed one did not
// commit, and every event is archived once.
func testHealCrashes(t *testing.T, api archiver.S3API, bucket string, step int) {
	ctx := context.Background()
	recs := simRecords(t, 23, 300, 2)
	missed, archived := split(recs, 5)
	for k := 0; ; k += step {
		f := newFaultS3(api)
		a := newArchive(t, f, archiver.Config{Bucket: bucket, Prefix: fmt.Sprintf("crash-%d", k), Concurrency: 2})
		writeSmall(t, a, archived, 100)
		before := f.mutations.Load()
		f.crashAfter(k)
		crashed, err := a.Heal(ctx, eventsOf(recs))
		f.heal()
		if err == nil {
			if crashed.Written != len(missed) {
				t.Fatalf("k=%d: heal %+v", k, crashed)
			}
			eachEventOnce(t, a, recs)
			t.Logf("a heal makes %d S3 mutations", f.mutations.Load()-before)
			return
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("k=%d: %v", k, err)
		}
		st, err := a.Heal(ctx, eventsOf(recs))
		if err != nil {
			t.Fatalf("k=%d: heal after the crash: %v", k, err)
		}
		if st.Written+st.AlreadyArchived != len(recs) || st.Written > len(missed) {
			t.Fatalf("k=%d: heal after the crash %+v", k, st)
		}
		eachEventOnce(t, a, recs)
		if st, err := a.Heal(ctx, eventsOf(recs)); err != nil || st.Written != 0 {
			t.Fatalf("k=%d: third heal %+v, %v", k, st, err)
		}
	}
}

func TestHealCrashesMem(t *testing.T) { testHealCrashes(t, s3mem.New("bkt"), "bkt", 1) }

func TestIntegrationHealCrashes(t *testing.T) {
	c, bucket := newBucket(t)
	testHealCrashes(t, c.S3, bucket, 5)
}

// TestConcurrentHeals runs heals of overlapping sets at once, with stream
// batches of the other events: the optimistic commits let no heal archive
// an event that another committed first.
func TestConcurrentHeals(t *testing.T) {
	ctx := context.Background()
	_, a := memArchive(t)
	recs := simRecords(t, 24, 600, 1)
	missed, archived := split(recs, 3)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	written := make([]int, 4)
	for i := range written {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Heal i takes the missed events from i*len/8 on: the sets overlap.
			st, err := a.Heal(ctx, eventsOf(missed[i*len(missed)/8:]))
			written[i] = st.Written
			if err != nil {
				errs <- err
			}
		}()
	}
	for _, b := range batches(archived, 40) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.WriteBatch(ctx, b); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for _, n := range written {
		total += n
	}
	if total != len(missed) {
		t.Fatalf("heals wrote %v events, %d in all; want %d", written, total, len(missed))
	}
	eachEventOnce(t, a, recs)
	// A heal that lost a commit removed the files it did not commit.
	t.Logf("heals wrote %v events; uncommitted files deleted: %d", written, a.Requests().Delete)
	for _, tb := range archiver.Tables() {
		dates, err := a.Partitions(ctx, tb.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dates {
			orphans, err := a.Orphans(ctx, tb.Name, d)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range orphans {
				if strings.Contains(o, "/heal-") {
					t.Errorf("orphan %s", o)
				}
			}
		}
	}
}

func TestHealRejects(t *testing.T) {
	ctx := context.Background()
	mem, a := memArchive(t)
	recs := simRecords(t, 25, 20, 1)
	bad := eventsOf(recs)
	bad[3].Data = []byte(`[1]`)
	if _, err := a.Heal(ctx, bad); !errors.Is(err, archiver.ErrPoison) {
		t.Fatalf("invalid event: %v, want ErrPoison", err)
	}
	bad = eventsOf(recs)
	bad[5].Type = "no.such.type"
	if _, err := a.Heal(ctx, bad); err == nil {
		t.Fatal("an event of an unknown type was healed")
	}
	if keys := mem.Keys("bkt", "archive/"); len(keys) != 0 {
		t.Fatalf("a rejected heal wrote %v", keys)
	}
	// An event given twice is healed once.
	twice := append(eventsOf(recs), eventsOf(recs)...)
	st, err := a.Heal(ctx, twice)
	if err != nil || st.Written != len(recs) || st.AlreadyArchived != 0 {
		t.Fatalf("heal %+v, %v", st, err)
	}
	eachEventOnce(t, a, recs)
	if st, err := a.Heal(ctx, nil); err != nil || st != (archiver.HealStats{}) {
		t.Fatalf("empty heal %+v, %v", st, err)
	}
}

// TestEventRefsRequests: EventRefs plans from the snapshot (no listing) and
// GETs each data file of the dates once; Requests counts what the S3
// client saw.
func TestEventRefsRequests(t *testing.T) {
	ctx := context.Background()
	mem, a := memArchive(t)
	recs := simRecords(t, 26, 400, 2)
	writeSmall(t, a, recs, 40)
	table := archiver.TableMessages
	dates, err := a.Partitions(ctx, table)
	if err != nil || len(dates) != 2 {
		t.Fatalf("partitions %v, %v", dates, err)
	}
	files, err := a.Objects(ctx, table, dates[1])
	if err != nil {
		t.Fatal(err)
	}
	calls, req := mem.Calls(), a.Requests()
	if err := a.EventRefs(ctx, table, dates[1:], func(archiver.EventRef) error { return nil }); err != nil {
		t.Fatal(err)
	}
	after, used := mem.Calls(), a.Requests().Sub(req)
	got := archiver.S3Requests{Get: int64(after["GetObject"] - calls["GetObject"]), Put: int64(after["PutObject"] - calls["PutObject"]),
		List: int64(after["ListObjectsV2"] - calls["ListObjectsV2"]), Delete: int64(after["DeleteObject"] - calls["DeleteObject"])}
	if used != got {
		t.Fatalf("Requests counted %+v, the S3 client saw %+v", used, got)
	}
	// The data files, and the table's metadata file, manifest list and manifests.
	if used.List != 0 || used.Put != 0 || used.Delete != 0 || used.Get < int64(len(files)) || used.Get > int64(len(files))+12 {
		t.Fatalf("EventRefs of %d files made %+v", len(files), used)
	}
	t.Logf("EventRefs of %d files: %+v", len(files), used)
}

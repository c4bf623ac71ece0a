package archiver

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// refsAgreeWithDecode checks readRefs against Decode, which reads every
// column: the same rows in the same order, each ref the identity, recorded
// time and content hash of the decoded event.
func refsAgreeWithDecode(t *testing.T, body []byte) int {
	t.Helper()
	recs, err := Decode(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var refs []EventRef
	if err := readRefs("f", body, func(r EventRef) error { refs = append(refs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(refs) != len(recs) || len(recs) == 0 {
		t.Fatalf("%d refs of %d records", len(refs), len(recs))
	}
	for i, r := range recs {
		hash, _ := schema.ContentHash(r.Event) // "" for data that is not JSON (the v1 fixture has a row of it)
		var recorded time.Time
		if r.Event.RecordedAt != nil {
			recorded = *r.Event.RecordedAt
		}
		want := EventRef{ID: r.Event.ID, Subject: r.Event.Subject, Type: r.Event.Type, RecordedAt: recorded, Hash: hash}
		if got := refs[i]; !got.RecordedAt.Equal(want.RecordedAt) || got.ID != want.ID || got.Subject != want.Subject || got.Type != want.Type || got.Hash != want.Hash {
			t.Fatalf("row %d: ref %+v, want %+v", i, got, want)
		}
	}
	return len(refs)
}

// TestReadRefsOfEveryVersion reads refs of an archive version 1 file
// (TIMESTAMP(MILLIS)) and of a current file with many row groups.
func TestReadRefsOfEveryVersion(t *testing.T) {
	t.Run("v1 millis", func(t *testing.T) {
		body, err := os.ReadFile("testdata/github_jobs_millis_v1.parquet")
		if err != nil {
			t.Fatal(err)
		}
		refsAgreeWithDecode(t, body)
	})
	t.Run("v2 row groups", func(t *testing.T) {
		base := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
		var recs []Record
		for i := range 1000 {
			at := base.Add(time.Duration(i)*time.Second + time.Duration(i)) // nanoseconds: the raw column
			recorded := at.Add(time.Millisecond)
			recs = append(recs, Record{
				Event: schema.Event{ID: "m" + strconv.Itoa(i), Type: "rez.message.sent", Subject: "rez/t/m" + strconv.Itoa(i%37),
					Source: "test", Time: at, RecordedAt: &recorded, Data: []byte(`{"b": 1.0, "a": "x<y"}`)},
				Seq: strconv.Itoa(1000 + i), StreamEventID: "e" + strconv.Itoa(i),
			})
		}
		var buf bytes.Buffer
		if err := Encode(&buf, TableMessages, recs, EncodeOptions{RowGroupRows: 64}); err != nil {
			t.Fatal(err)
		}
		if n := refsAgreeWithDecode(t, buf.Bytes()); n != len(recs) {
			t.Fatalf("%d refs", n)
		}
		ids, err := readIDs(buf.Bytes(), map[string]bool{eventKey("rez/t/m3", "m3"): true, eventKey("rez/t/m3", "m4"): true})
		if err != nil || len(ids) != 1 || ids[0] != eventKey("rez/t/m3", "m3") {
			t.Fatalf("readIDs = %q, %v", ids, err)
		}
	})
	t.Run("corrupt", func(t *testing.T) {
		err := readRefs("f", []byte("not parquet"), func(EventRef) error { return nil })
		if !errors.Is(err, ErrCorruptObject) {
			t.Fatalf("err = %v, want ErrCorruptObject", err)
		}
	})
}

func TestHealKey(t *testing.T) {
	l := layout{bucket: "b", prefix: "p"}
	a := l.healKey(TableMessages, "2026-03-02", []string{eventKey("s", "1"), eventKey("s", "2")}, "0a1b2c3d")
	b := l.healKey(TableMessages, "2026-03-02", []string{eventKey("s", "2"), eventKey("s", "1")}, "0a1b2c3d")
	c := l.healKey(TableMessages, "2026-03-02", []string{eventKey("s", "1")}, "0a1b2c3d")
	d := l.healKey(TableMessages, "2026-03-02", []string{eventKey("s", "1")}, "ffffffff")
	if a != b || a == c || c == d {
		t.Fatalf("keys %s %s %s %s: want one name per set and run", a, b, c, d)
	}
	want := "p/messages/data/event_date=2026-03-02/heal-" + hash128("s\x001\ns\x002\n") + "-0a1b2c3d.parquet"
	if a != want {
		t.Fatalf("key %s, want %s", a, want)
	}
	if _, ok := parseBatchKey(a); ok {
		t.Fatalf("%s reads as a batch file's key", a)
	}
	if d, ok := dateOfKey(a); !ok || d != "2026-03-02" {
		t.Fatalf("date of %s: %s", a, d)
	}
}

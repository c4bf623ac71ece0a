package archiver

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestKeys(t *testing.T) {
	l := layout{bucket: "bkt", prefix: "arch/v1"}
	root := layout{bucket: "bkt"}
	cases := []struct{ name, got, want string }{
		{"batch key pads both sequence numbers to 40 digits and names the first record", l.batchKey("messages", "2026-01-05", newBatchName("4900000000000012345", "4900000000000012399", eventIDHash("ev-1"))),
			"arch/v1/messages/data/event_date=2026-01-05/0000000000000000000004900000000000012345-0000000000000000000004900000000000012399-" + eventIDHash("ev-1") + ".parquet"},
		{"batch key at the bucket root", root.batchKey("github_jobs", "2026-01-05", newBatchName("1", "1", "0123456789abcdef0123456789abcdef")),
			"github_jobs/data/event_date=2026-01-05/0000000000000000000000000000000000000001-0000000000000000000000000000000000000001-0123456789abcdef0123456789abcdef.parquet"},
		{"40-digit sequence numbers stay as they are", root.batchKey("messages", "2026-01-05", newBatchName("1234567890123456789012345678901234567890", "1234567890123456789012345678901234567891", "0123456789abcdef0123456789abcdef")),
			"messages/data/event_date=2026-01-05/1234567890123456789012345678901234567890-1234567890123456789012345678901234567891-0123456789abcdef0123456789abcdef.parquet"},
		{"legacy batch key (before keys named the first record)", l.legacyBatchKey("messages", "2026-01-05", "4900000000000012345", "4900000000000012399"),
			"arch/v1/messages/data/event_date=2026-01-05/0000000000000000000004900000000000012345-0000000000000000000004900000000000012399.parquet"},
		{"event id hash", eventIDHash("c4ca4238a0b923820dcc509a6f75849b"), "304f30981145022f4c2368072d35a661"},
		{"compaction output", l.compactKey("album_workflow", "2026-01-06", "0123456789abcdef", 2),
			"arch/v1/album_workflow/data/event_date=2026-01-06/compact-0123456789abcdef-002.parquet"},
		{"table location", l.tableDir("agent_executions"), "arch/v1/agent_executions"},
		{"legacy manifest", l.legacyManifestKey("agent_executions", "2026-01-05"), "arch/v1/_symlink/agent_executions/event_date=2026-01-05/manifest"},
		{"error record", l.errorKey("2026-01-07", "77", "ev-1"), "arch/v1/errors/event_date=2026-01-07/0000000000000000000000000000000000000077-" + eventIDHash("ev-1") + ".json"},
		{"legacy error record (before keys named the eventID)", l.legacyErrorKey("2026-01-07", "77"), "arch/v1/errors/event_date=2026-01-07/0000000000000000000000000000000000000077.json"},
		{"error record without a sequence number", root.errorKey("2026-01-07", "", "ev-1"), "errors/event_date=2026-01-07/x8b8d8e7121c76c3b0cfa6045.json"},
		{"uri", l.uri("arch/v1/x.parquet"), "s3://bkt/arch/v1/x.parquet"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

func TestPaddedKeysSortInStreamOrder(t *testing.T) {
	l := layout{bucket: "b"}
	seqs := []string{"9", "10", "99999999999999999999", "100000000000000000000", "4900000000000000000000000"}
	for i := 1; i < len(seqs); i++ {
		a, b := l.batchKey("messages", "2026-01-05", newBatchName(seqs[i-1], seqs[i-1], eventIDHash("z"))), l.batchKey("messages", "2026-01-05", newBatchName(seqs[i], seqs[i], eventIDHash("a")))
		if !(a < b) {
			t.Errorf("key of %s does not sort before key of %s", seqs[i-1], seqs[i])
		}
	}
}

func TestBatchKeyParts(t *testing.T) {
	l := layout{bucket: "b", prefix: "p"}
	id := eventIDHash("ev-77")
	cases := []struct {
		key  string
		want batchName
	}{
		{l.batchKey("messages", "2026-01-05", newBatchName("77", "99", id)), batchName{first: pad40("77"), last: pad40("99"), id: id}},
		{l.legacyBatchKey("messages", "2026-01-05", "77", "99"), batchName{first: pad40("77"), last: pad40("99")}},
	}
	for _, c := range cases {
		got, ok := parseBatchKey(c.key)
		if !ok || got != c.want {
			t.Errorf("parseBatchKey(%s) = %+v, %v, want %+v", c.key, got, ok, c.want)
		}
		if got.legacy() != (c.want.id == "") {
			t.Errorf("%s: legacy() = %v", c.key, got.legacy())
		}
		if d, ok := dateOfKey(c.key); !ok || d != "2026-01-05" {
			t.Errorf("dateOfKey(%s) = %q, %v", c.key, d, ok)
		}
	}
	for _, other := range []string{
		l.compactKey("messages", "2026-01-05", "abc", 0),
		"p/messages/data/event_date=2026-01-05/migrated-abc-000.parquet",
		"p/messages/data/event_date=2026-01-05/77.parquet",
		"p/messages/data/event_date=2026-01-05/" + pad40("77") + "-" + pad40("99") + "-XYZ.parquet",
		"p/messages/data/event_date=2026-01-05/" + pad40("77") + "-" + pad40("99") + "-" + id + "-1.parquet",
	} {
		if b, ok := parseBatchKey(other); ok {
			t.Errorf("parseBatchKey(%s) = %+v: a batch file, want not", other, b)
		}
	}
}

// TestRecordIDIdentifiesTheStreamRecord: the id in a batch file's name is
// the first record's eventID's, and, for a record without one, its
// event's; records of two shards at the same sequence number differ.
func TestRecordIDIdentifiesTheStreamRecord(t *testing.T) {
	a := Record{Seq: "100", StreamEventID: "shard-a-ev"}
	a.Event.Subject, a.Event.ID = "s", "e1"
	b := a
	b.StreamEventID = "shard-b-ev"
	if recordID(&a) == recordID(&b) {
		t.Error("records of two shards with the same sequence number have the same id")
	}
	if recordID(&a) != eventIDHash("shard-a-ev") {
		t.Error("recordID is not the eventID's hash")
	}
	c, d := a, a
	c.StreamEventID, d.StreamEventID = "", ""
	d.Event.ID = "e2"
	if recordID(&c) == recordID(&d) || recordID(&c) == recordID(&a) || !recordIDRE.MatchString(recordID(&c)) {
		t.Error("records without an eventID are not told apart by their event")
	}
}

func pad40(s string) string { return strings.Repeat("0", 40-len(s)) + s }

func TestKeyOf(t *testing.T) {
	l := layout{bucket: "bkt", prefix: "p"}
	if k, err := l.keyOf("s3://bkt/p/x.parquet"); err != nil || k != "p/x.parquet" {
		t.Fatalf("keyOf = %q, %v", k, err)
	}
	for _, bad := range []string{"s3://other/p/x.parquet", "https://bkt/p/x", "s3://bkt/", "s3://bkt"} {
		if _, err := l.keyOf(bad); !errors.Is(err, ErrCorruptObject) {
			t.Errorf("keyOf(%q) = %v, want ErrCorruptObject", bad, err)
		}
	}
}

func TestEventDate(t *testing.T) {
	loc := time.FixedZone("x", -5*3600)
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 5, 23, 59, 59, 999999999, time.UTC), "2026-01-05"},
		{time.Date(2026, 1, 5, 20, 0, 0, 0, loc), "2026-01-06"}, // the UTC date, not the local one
		{time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC), "2026-01-06"},
	}
	for _, c := range cases {
		if got := EventDate(c.t); got != c.want {
			t.Errorf("EventDate(%s) = %s, want %s", c.t, got, c.want)
		}
	}
}

func TestParseURI(t *testing.T) {
	cases := []struct {
		uri, bucket, prefix string
		err                 bool
	}{
		{"s3://my-archive", "my-archive", "", false},
		{"s3://my-archive/", "my-archive", "", false},
		{"s3://my-archive/events/v1/", "my-archive", "events/v1", false},
		{"s3://my.archive/a", "my.archive", "a", false},
		{"my-archive/events", "", "", true},
		{"s3://My_Archive/x", "", "", true},
		{"s3://ab", "", "", true},
		{"s3://bucket/a//b", "", "", true},
		{"s3:///prefix", "", "", true},
	}
	for _, c := range cases {
		b, p, err := ParseURI(c.uri)
		if (err != nil) != c.err || b != c.bucket || p != c.prefix {
			t.Errorf("ParseURI(%q) = %q, %q, %v; want %q, %q, error %v", c.uri, b, p, err, c.bucket, c.prefix, c.err)
		}
		if err != nil && !errors.Is(err, ErrBadURI) {
			t.Errorf("ParseURI(%q) error %v does not wrap ErrBadURI", c.uri, err)
		}
	}
}

func TestCheckSeqAndDate(t *testing.T) {
	for _, s := range []string{"1", "4900000000000012345", "1234567890123456789012345678901234567890"} {
		if err := checkSeq(s); err != nil {
			t.Errorf("checkSeq(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "12a", "-1", "12345678901234567890123456789012345678901"} {
		if err := checkSeq(s); err == nil {
			t.Errorf("checkSeq(%q) accepted", s)
		}
	}
	for _, d := range []string{"2026-02-30", "2026-1-5", "20260105", ""} {
		if err := checkDate(d); err == nil {
			t.Errorf("checkDate(%q) accepted", d)
		}
	}
	if err := checkDate("2024-02-29"); err != nil {
		t.Error(err)
	}
}

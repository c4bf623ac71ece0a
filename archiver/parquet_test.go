package archiver_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
)

// simRecords returns a simulated workload as records with increasing fake
// sequence numbers and nanosecond recordedat times, as the appender sets.
func simRecords(t testing.TB, seed int64, events, days int) []archiver.Record {
	t.Helper()
	return simRecordsCfg(t, simulate.Config{Seed: seed, Events: events, Days: days})
}

// simRecordsCfg is simRecords of any simulate configuration.
func simRecordsCfg(t testing.TB, cfg simulate.Config) []archiver.Record {
	t.Helper()
	evs, _, err := simulate.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]archiver.Record, 0, len(evs))
	seen := map[string]bool{}
	for i, e := range evs {
		if seen[e.Subject+"\x00"+e.ID] {
			continue // a redelivery: the appender reports it as a duplicate, the stream never has it
		}
		seen[e.Subject+"\x00"+e.ID] = true
		rec := e.Time.Add(time.Duration(1_000_000 + i*7919)) // a few ms after, with nanoseconds
		e.RecordedAt = &rec
		recs = append(recs, archiver.Record{Event: e, Seq: strconv.Itoa(4_900_000_000_000_000_000 + i*100), StreamEventID: streamEventID(i)})
	}
	return recs
}

// streamEventID is a DynamoDB Streams eventID as they look: 32 hex
// digits with no pattern (deterministic in i), not a counter that
// compresses to nothing and flatters the archive's size.
func streamEventID(i int) string {
	x := uint64(i)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	mix := func(z uint64) uint64 {
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	return fmt.Sprintf("%016x%016x", mix(x), mix(x+0x9e3779b97f4a7c15))
}

// recordKey renders everything a record holds, so that equal keys mean
// equal records (times with their offset, data byte for byte).
func recordKey(r archiver.Record) string {
	tm := func(t time.Time) string {
		_, off := t.Zone()
		return strconv.FormatInt(t.Unix(), 10) + "." + strconv.Itoa(t.Nanosecond()) + "@" + strconv.Itoa(off)
	}
	rec := "nil"
	if r.Event.RecordedAt != nil {
		rec = tm(*r.Event.RecordedAt)
	}
	return strings.Join([]string{r.Event.SpecVersion, r.Event.ID, r.Event.Source, r.Event.Type, r.Event.Subject,
		tm(r.Event.Time), string(r.Event.Data), rec, r.Seq, r.StreamEventID}, "\x00|")
}

// sameRecords reports whether two lists hold the same records, in any order.
func sameRecords(a, b []archiver.Record) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d records, want %d", len(b), len(a))
	}
	count := map[string]int{}
	for _, r := range a {
		count[recordKey(r)]++
	}
	for _, r := range b {
		k := recordKey(r)
		if count[k] == 0 {
			return fmt.Errorf("record %s/%s (seq %s) was not written, or not as it was", r.Event.Subject, r.Event.ID, r.Seq)
		}
		count[k]--
	}
	return nil
}

func roundTrip(table string, recs []archiver.Record, opts archiver.EncodeOptions) ([]archiver.Record, int, error) {
	var buf bytes.Buffer
	if err := archiver.Encode(&buf, table, recs, opts); err != nil {
		return nil, 0, err
	}
	out, err := archiver.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	return out, buf.Len(), err
}

func byTable(recs []archiver.Record) map[string][]archiver.Record {
	out := map[string][]archiver.Record{}
	for _, r := range recs {
		tb, _ := archiver.TableFor(r.Event.Type)
		out[tb] = append(out[tb], r)
	}
	return out
}

// TestRoundTripSimulated writes a simulated workload and reads it back:
// every event equal, raw data byte for byte, in event-time order.
func TestRoundTripSimulated(t *testing.T) {
	recs := simRecords(t, 7, 4000, 2)
	for table, rs := range byTable(recs) {
		// Small row groups: several per file.
		out, _, err := roundTrip(table, rs, archiver.EncodeOptions{RowGroupRows: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := sameRecords(rs, out); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for i := 1; i < len(out); i++ {
			if out[i].Event.Time.Before(out[i-1].Event.Time) {
				t.Fatalf("%s: rows not sorted by event time at %d", table, i)
			}
		}
	}
}

func TestEncodeOptions(t *testing.T) {
	recs := byTable(simRecords(t, 3, 600, 1))[archiver.TableGitHubJobs]
	sizes := map[string]int{}
	for _, c := range archiver.Compressions {
		out, n, err := roundTrip(archiver.TableGitHubJobs, recs, archiver.EncodeOptions{Compression: c, RowGroupBytes: 16 << 10})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if err := sameRecords(recs, out); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		sizes[c] = n
	}
	if !(sizes["zstd"] < sizes["none"] && sizes["snappy"] < sizes["none"]) {
		t.Errorf("compression does not compress: %v", sizes)
	}
	for _, bad := range []archiver.EncodeOptions{{Compression: "lzo"}, {RowGroupRows: -1}, {RowGroupBytes: -1}} {
		if err := archiver.Encode(&bytes.Buffer{}, archiver.TableMessages, nil, bad); err == nil {
			t.Errorf("Encode accepted %+v", bad)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	ok := archiver.Record{Event: schema.Event{ID: "a", Type: schema.TypeMessageCreated, Time: time.Now()}, Seq: "1"}
	cases := []struct {
		name  string
		table string
		rec   archiver.Record
		is    error
	}{
		{"unknown table", "nope", ok, archiver.ErrUnknownTable},
		{"record of another table", archiver.TableGitHubJobs, ok, archiver.ErrWrongTable},
		{"time past 9999", archiver.TableMessages, func() archiver.Record {
			r := ok
			r.Event.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			return r
		}(), nil},
	}
	for _, c := range cases {
		err := archiver.Encode(&bytes.Buffer{}, c.table, []archiver.Record{c.rec}, archiver.EncodeOptions{})
		if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.is)
		}
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("PAR1"), []byte("not parquet at all, not at all")} {
		if _, err := archiver.Decode(bytes.NewReader(b), int64(len(b))); !errors.Is(err, archiver.ErrCorruptObject) {
			t.Errorf("Decode(%q) = %v, want ErrCorruptObject", b, err)
		}
	}
}

// randomRecords is a quick.Generator of records of one table: arbitrary
// ids, subjects, sources and data (any bytes, invalid UTF-8 included), any
// type of the table or an unknown one, times anywhere in 0001-9999 with
// nanoseconds and whole-minute zone offsets, recordedat or none.
type randomRecords struct {
	table string
	recs  []archiver.Record
}

var tableTypes = func() map[string][]string {
	m := map[string][]string{}
	for _, typ := range schema.Types() {
		tb, _ := archiver.TableFor(typ)
		m[tb] = append(m[tb], typ)
	}
	return m
}()

func (randomRecords) Generate(r *rand.Rand, size int) reflect.Value {
	tables := archiver.Tables()
	g := randomRecords{table: tables[r.Intn(len(tables))].Name}
	str := func() string {
		b := make([]byte, r.Intn(size+1))
		for i := range b {
			if r.Intn(4) == 0 {
				b[i] = byte(r.Intn(256))
			} else {
				b[i] = byte(' ' + r.Intn(95))
			}
		}
		return string(b)
	}
	tm := func() time.Time {
		sec := -62135596800 + r.Int63n(253402300799+62135596800)
		t := time.Unix(sec, r.Int63n(1e9))
		switch r.Intn(3) {
		case 0:
			return t.UTC()
		case 1:
			return t.UTC().Truncate(time.Millisecond)
		default:
			return t.In(time.FixedZone("", (r.Intn(28*60)-14*60)*60))
		}
	}
	for range r.Intn(size + 1) {
		typ := "x." + str()
		if r.Intn(4) > 0 {
			types := tableTypes[g.table]
			typ = types[r.Intn(len(types))]
		}
		e := schema.Event{SpecVersion: str(), ID: str(), Source: str(), Type: typ, Subject: str(), Time: tm(), Data: []byte(str())}
		if r.Intn(3) > 0 {
			rt := tm()
			e.RecordedAt = &rt
		}
		g.recs = append(g.recs, archiver.Record{Event: e, Seq: str(), StreamEventID: str()})
	}
	return reflect.ValueOf(g)
}

var _ quick.Generator = randomRecords{}

func TestRoundTripProperty(t *testing.T) {
	prop := func(g randomRecords) bool {
		out, _, err := roundTrip(g.table, g.recs, archiver.EncodeOptions{RowGroupRows: 16})
		if err != nil {
			t.Logf("%s: %v", g.table, err)
			return false
		}
		if err := sameRecords(g.recs, out); err != nil {
			t.Logf("%s: %v", g.table, err)
			return false
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 150}); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeMillisFixture decodes a file of archive version 1, whose
// timestamps are TIMESTAMP(MILLIS) and whose columns have no field ids: the
// migration reads archives written that way. The fixture was written by the
// code of commit 309899c (before timestamps became MICROS) with
//
//	archiver.Encode(f, archiver.TableGitHubJobs, millisFixtureRecords(), archiver.EncodeOptions{})
//
// and must not be regenerated: today's Encode writes version 2 files.
func TestDecodeMillisFixture(t *testing.T) {
	data, err := os.ReadFile("testdata/github_jobs_millis_v1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Lookup("streamfold.archive.version"); v != "1" {
		t.Fatalf("fixture is archive version %q, want 1", v)
	}
	for _, name := range []string{"event_time", "recorded_at", "created_at"} {
		c := f.Root().Column(name)
		millis := false
		if ts, ok := c.Type().LogicalType().Value.(*format.TimestampType); ok {
			_, millis = ts.Unit.Value.(*format.MilliSeconds)
		}
		if !millis || c.ID() != 0 {
			t.Fatalf("fixture column %s is %s, id %d: not the old format", name, c.Type(), c.ID())
		}
	}
	want := millisFixtureRecords()
	got, err := archiver.Decode(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameRecords(want, got); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"e4", "e3", "e2", "e1"} { // by event time
		if got[i].Event.ID != id {
			t.Errorf("record %d is %s, want %s", i, got[i].Event.ID, id)
		}
	}
	// Written again, they come back the same from a version 2 file.
	out, _, err := roundTrip(archiver.TableGitHubJobs, got, archiver.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sameRecords(want, out); err != nil {
		t.Fatal(err)
	}
}

// TestTimestampMicros checks the TIMESTAMP(MICROS) boundary: a UTC time
// with whole microseconds is held by the timestamp column alone, one with
// nanoseconds or another zone also by its *_raw twin, and Decode returns
// each exactly.
func TestTimestampMicros(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 1, 5, 10, 0, 0, 123_456_000, time.UTC),
		time.Date(2026, 1, 5, 10, 0, 0, 123_456_789, time.UTC),
		time.Date(2026, 1, 5, 10, 0, 0, 123_456_000, time.FixedZone("", -3*3600)),
		time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.UTC),
	}
	var recs []archiver.Record
	for i, tm := range times {
		rec := tm
		recs = append(recs, archiver.Record{Event: schema.Event{ID: strconv.Itoa(i), Type: schema.TypeMessageCreated, Time: tm, RecordedAt: &rec}, Seq: strconv.Itoa(i)})
	}
	var buf bytes.Buffer
	if err := archiver.Encode(&buf, archiver.TableMessages, recs, archiver.EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Lookup("streamfold.archive.version"); v != "2" {
		t.Errorf("archive version %q, want 2", v)
	}
	rows := make([]parquet.Row, len(times))
	r := f.RowGroups()[0].Rows()
	if n, _ := r.ReadRows(rows); n != len(times) {
		t.Fatalf("%d rows", n)
	}
	_ = r.Close()
	col := func(name string) int {
		for i, p := range f.Schema().Columns() {
			if p[0] == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	et, raw := col("event_time"), col("event_time_raw")
	byID := map[string]parquet.Row{}
	for _, row := range rows {
		byID[string(row[col("event_id")].ByteArray())] = row
	}
	for i, tm := range times {
		row := byID[strconv.Itoa(i)]
		if got := row[et].Int64(); got != tm.UnixMicro() {
			t.Errorf("%v: event_time %d, want %d microseconds", tm, got, tm.UnixMicro())
		}
		exact := tm.Location() == time.UTC && tm.Nanosecond()%1000 == 0
		if row[raw].IsNull() != exact {
			t.Errorf("%v: event_time_raw %q", tm, row[raw])
		}
	}
	out, err := archiver.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameRecords(recs, out); err != nil {
		t.Fatal(err)
	}
}

// millisFixtureRecords are the records of testdata/github_jobs_millis_v1.parquet,
// a file in the archive's first format (timestamps TIMESTAMP(MILLIS), no
// field ids). They cover a millisecond-exact time, sub-millisecond and
// sub-microsecond times, a non-UTC zone, a time before 1970, typed
// timestamp columns, an unknown type and a missing recordedat.
func millisFixtureRecords() []archiver.Record {
	ist := time.FixedZone("", 5*3600+30*60)
	at := func(t time.Time) *time.Time { return &t }
	job := `{"action":"completed","workflow_job":{"id":42,"run_id":7,"run_attempt":1,"workflow_name":"ci","name":"test","head_branch":"main","status":"completed","conclusion":"success","created_at":"2026-01-05T09:59:58.5Z","started_at":"2026-01-05T10:00:01.123Z","completed_at":"2026-01-05T10:03:00Z","labels":["ubuntu-latest"],"runner_name":"r1"},"repository":{"full_name":"o/r"},"installation":{"id":9}}`
	started := `{"action":"in_progress","workflow_job":{"id":42,"run_id":7,"run_attempt":1,"workflow_name":"ci","name":"test","head_branch":"main","status":"in_progress","conclusion":null,"created_at":"2026-01-05T09:59:58.5Z","started_at":"2026-01-05T10:00:01.123Z","labels":["ubuntu-latest"]},"repository":{"full_name":"o/r"},"installation":{"id":9}}`
	runner := `{"installation_id":9,"job_id":42,"run_id":7,"repo_full_name":"o/r","instance_id":"i-1","instance_type":"m7g.large","pool_name":"p","region":"eu-west-1","scheduled_at":"2026-01-05T15:29:59.000001+05:30"}`
	return []archiver.Record{
		{Event: schema.Event{SpecVersion: "1.0", ID: "e1", Source: "github", Type: schema.TypeJobCompleted, Subject: "github/9/job/42",
			Time: time.Date(2026, 1, 5, 10, 3, 0, 250_000_000, time.UTC), Data: []byte(job),
			RecordedAt: at(time.Date(2026, 1, 5, 10, 3, 1, 234_567_891, time.UTC))}, Seq: "300", StreamEventID: "s3"},
		{Event: schema.Event{SpecVersion: "1.0", ID: "e2", Source: "github", Type: schema.TypeJobInProgress, Subject: "github/9/job/42",
			Time: time.Date(2026, 1, 5, 10, 0, 1, 123_456_000, time.UTC), Data: []byte(started),
			RecordedAt: at(time.Date(2026, 1, 5, 10, 0, 2, 5_000_000, time.UTC))}, Seq: "200", StreamEventID: "s2"},
		{Event: schema.Event{SpecVersion: "1.0", ID: "e3", Source: "runson", Type: schema.TypeRunnerScheduled, Subject: "github/9/job/42",
			Time: time.Date(2026, 1, 5, 15, 29, 59, 999_000_000, ist), Data: []byte(runner)}, Seq: "100", StreamEventID: "s1"},
		{Event: schema.Event{ID: "e4", Source: "elsewhere", Type: "x.custom", Subject: "x/1",
			Time: time.Date(1969, 12, 31, 23, 59, 59, 999_000_000, time.UTC), Data: []byte("not json"),
			RecordedAt: at(time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC))}, Seq: "50", StreamEventID: "s0"},
	}
}

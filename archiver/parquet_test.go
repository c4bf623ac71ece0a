package archiver_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
)

// simRecords returns a simulated workload as records with increasing fake
// sequence numbers and nanosecond recordedat times, as the appender sets.
func simRecords(t testing.TB, seed int64, events, days int) []archiver.Record {
	t.Helper()
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: events, Days: days})
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
		recs = append(recs, archiver.Record{Event: e, Seq: strconv.Itoa(4_900_000_000_000_000_000 + i*100), StreamEventID: fmt.Sprintf("ev%06d", i)})
	}
	return recs
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

package archiver_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/schema"
)

// FuzzRecordRoundTrip fuzzes the conversion boundary: any record that
// Encode accepts comes back from Decode equal, field for field and data
// byte for byte; Encode refuses only times RFC 3339 cannot carry.
func FuzzRecordRoundTrip(f *testing.F) {
	for _, r := range simRecords(f, 11, 200, 1)[:40] {
		rec := int64(0)
		if r.Event.RecordedAt != nil {
			rec = r.Event.RecordedAt.UnixNano()
		}
		f.Add(r.Event.ID, r.Event.Subject, r.Event.Source, r.Event.Type, []byte(r.Event.Data), r.Event.Time.UnixNano(), int16(0), rec, r.Seq)
	}
	f.Add("", "", "", "", []byte{}, int64(0), int16(0), int64(0), "")
	f.Add("id", "s\x00ub", "src", "rez.message.created", []byte{0xff, 0xfe, '{'}, int64(1), int16(-14*60), int64(-1), "9")
	f.Add("id", "sub", "src", "x.unknown", []byte(`{"a":1e400}`), int64(1767225600123456789), int16(330), int64(1767225600123000000), "1")
	f.Fuzz(func(t *testing.T, id, subject, source, typ string, data []byte, unixNano int64, offMin int16, recNano int64, seq string) {
		table, ok := archiver.TableFor(typ)
		if !ok {
			table = archiver.TableMessages
		}
		tm := time.Unix(0, unixNano).In(time.FixedZone("", int(offMin)*60))
		e := schema.Event{ID: id, Subject: subject, Source: source, Type: typ, Time: tm, Data: data}
		if recNano != 0 {
			rt := time.Unix(0, recNano).UTC()
			e.RecordedAt = &rt
		}
		recs := []archiver.Record{{Event: e, Seq: seq, StreamEventID: id}}
		var buf bytes.Buffer
		err := archiver.Encode(&buf, table, recs, archiver.EncodeOptions{})
		if y := tm.UTC().Year(); y < 0 || y > 9999 {
			if err == nil {
				t.Fatalf("Encode accepted the year %d", y)
			}
			return
		}
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		out, err := archiver.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if err := sameRecords(recs, out); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecode feeds Decode damaged files: it returns records or an error
// wrapping ErrCorruptObject, and never panics.
func FuzzDecode(f *testing.F) {
	recs := byTable(simRecords(f, 5, 100, 1))[archiver.TableMessages]
	var buf bytes.Buffer
	if err := archiver.Encode(&buf, archiver.TableMessages, recs, archiver.EncodeOptions{}); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(append([]byte("PAR1"), good[len(good)/2:]...))
	flipped := bytes.Clone(good)
	flipped[len(flipped)/3] ^= 0xff
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := archiver.Decode(bytes.NewReader(data), int64(len(data)))
		if err != nil && !errors.Is(err, archiver.ErrCorruptObject) {
			t.Fatalf("Decode error %v does not wrap ErrCorruptObject", err)
		}
	})
}

package archiver

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Decode reads every record of a Parquet file written by Encode, in file
// order. Columns are found by name, so files with extra or reordered typed
// columns decode too; only the envelope columns are needed. Timestamps are
// read in the unit the file declares (MILLIS, MICROS or NANOS), so files of
// every archive version decode.
func Decode(r io.ReaderAt, size int64) ([]Record, error) {
	d, err := newDecoder(r, size)
	if err != nil {
		return nil, err
	}
	defer d.close()
	var out []Record
	for {
		rec, ok, err := d.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, rec)
	}
}

// decoder streams the records of one Parquet file: a columnReader on the
// envelope columns (the typed columns are never decoded).
type decoder struct {
	c *columnReader
}

// timeCols are the envelope timestamp columns the decoder reads.
var timeCols = []string{"event_time", "recorded_at"}

// envelope columns the decoder needs, and whether each must be present.
var decodeCols = map[string]bool{
	"event_id": true, "event_type": true, "subject": true, "source": true, "event_time": true,
	"recorded_at": false, "data": true, "stream_sequence": true, "stream_event_id": false,
	"spec_version": false, "event_time_raw": false, "recorded_at_raw": false,
}

func newDecoder(r io.ReaderAt, size int64) (*decoder, error) {
	c, err := newColumnReader(r, size, decodeCols)
	if err != nil {
		return nil, err
	}
	return &decoder{c: c}, nil
}

// timestampUnit returns the unit of a TIMESTAMP column of a file, as its
// logical type (or legacy converted type) declares it: archive version 1
// files have MILLIS, version 2 files MICROS.
func timestampUnit(c *parquet.Column) (time.Duration, error) {
	if c == nil || !c.Leaf() {
		return 0, errors.New("not a leaf column")
	}
	typ := c.Type()
	var ts *format.TimestampType
	if lt := typ.LogicalType(); lt != nil {
		ts, _ = lt.Value.(*format.TimestampType)
	}
	if ts == nil || typ.Kind() != parquet.Int64 {
		return 0, fmt.Errorf("type %s is not an INT64 TIMESTAMP", typ)
	}
	switch ts.Unit.Value.(type) {
	case *format.MilliSeconds:
		return time.Millisecond, nil
	case *format.MicroSeconds:
		return time.Microsecond, nil
	case *format.NanoSeconds:
		return time.Nanosecond, nil
	}
	return 0, fmt.Errorf("timestamp unit %s is not MILLIS, MICROS or NANOS", &ts.Unit)
}

// fromUnits converts a timestamp column value in the given unit to UTC.
func fromUnits(v int64, unit time.Duration) time.Time {
	switch unit {
	case time.Millisecond:
		return time.UnixMilli(v).UTC()
	case time.Microsecond:
		return time.UnixMicro(v).UTC()
	default:
		return time.Unix(0, v).UTC()
	}
}

func (d *decoder) close() { d.c.close() }

// next returns the next record, false at the end of the file.
func (d *decoder) next() (_ Record, _ bool, err error) {
	defer recoverCorrupt(&err)
	row, ok, err := d.c.next()
	if err != nil || !ok {
		return Record{}, false, err
	}
	rec, err := d.record(row)
	return rec, err == nil, err
}

func (d *decoder) record(row parquet.Row) (Record, error) {
	var rec Record
	e := &rec.Event
	c := d.c
	e.ID, e.Type, e.Subject, e.Source = c.str(row, "event_id"), c.str(row, "event_type"), c.str(row, "subject"), c.str(row, "source")
	e.SpecVersion = c.str(row, "spec_version")
	if data, ok := c.bytes(row, "data"); ok && len(data) > 0 {
		e.Data = append([]byte(nil), data...) // the reader's buffers are reused
	}
	rec.Seq, rec.StreamEventID = c.str(row, "stream_sequence"), c.str(row, "stream_event_id")
	t, err := c.time(row, "event_time", "event_time_raw")
	if err != nil {
		return Record{}, err
	}
	if t == nil {
		return Record{}, fmt.Errorf("%w: event %s/%s: event_time is null", ErrCorruptObject, e.Subject, e.ID)
	}
	e.Time = *t
	if e.RecordedAt, err = c.time(row, "recorded_at", "recorded_at_raw"); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// recoverCorrupt turns a panic of the Parquet reader on a malformed file
// into ErrCorruptObject: a bad object must not crash the process.
func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrCorruptObject, r)
	}
}

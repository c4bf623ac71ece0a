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

// decoder streams the records of one Parquet file.
type decoder struct {
	f      *parquet.File
	groups []parquet.RowGroup
	rows   parquet.Rows
	buf    []parquet.Row
	n, i   int
	stalls int                      // ReadRows calls in a row that returned nothing
	col    map[string]int           // envelope column name -> file column index
	unit   map[string]time.Duration // timestamp column name -> its unit in the file
}

// timeCols are the envelope timestamp columns the decoder reads.
var timeCols = []string{"event_time", "recorded_at"}

// envelope columns the decoder needs, and whether each must be present.
var decodeCols = map[string]bool{
	"event_id": true, "event_type": true, "subject": true, "source": true, "event_time": true,
	"recorded_at": false, "data": true, "stream_sequence": true, "stream_event_id": false,
	"spec_version": false, "event_time_raw": false, "recorded_at_raw": false,
}

func newDecoder(r io.ReaderAt, size int64) (_ *decoder, err error) {
	defer recoverCorrupt(&err)
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptObject, err)
	}
	d := &decoder{f: f, groups: f.RowGroups(), col: map[string]int{}, unit: map[string]time.Duration{}}
	for i, path := range f.Schema().Columns() {
		if len(path) == 1 {
			if _, want := decodeCols[path[0]]; want {
				d.col[path[0]] = i
			}
		}
	}
	for name, required := range decodeCols {
		if _, ok := d.col[name]; !ok && required {
			return nil, fmt.Errorf("%w: column %q is missing", ErrCorruptObject, name)
		}
	}
	for _, name := range timeCols {
		if _, ok := d.col[name]; !ok {
			continue
		}
		unit, err := timestampUnit(f.Root().Column(name))
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %w", ErrCorruptObject, name, err)
		}
		d.unit[name] = unit
	}
	d.buf = make([]parquet.Row, 256)
	return d, nil
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

func (d *decoder) close() {
	if d.rows != nil {
		_ = d.rows.Close()
		d.rows = nil
	}
}

// next returns the next record, false at the end of the file.
func (d *decoder) next() (_ Record, _ bool, err error) {
	defer recoverCorrupt(&err)
	for d.i >= d.n {
		if d.rows == nil {
			if len(d.groups) == 0 {
				return Record{}, false, nil
			}
			d.rows = d.groups[0].Rows()
			d.groups = d.groups[1:]
		}
		n, err := d.rows.ReadRows(d.buf)
		d.n, d.i = n, 0
		switch {
		case errors.Is(err, io.EOF):
			_ = d.rows.Close()
			d.rows = nil
		case err != nil:
			return Record{}, false, fmt.Errorf("%w: read rows: %w", ErrCorruptObject, err)
		case n == 0:
			if d.stalls++; d.stalls > 3 {
				return Record{}, false, fmt.Errorf("%w: read rows: no progress", ErrCorruptObject)
			}
			continue
		}
		d.stalls = 0
	}
	row := d.buf[d.i]
	d.i++
	rec, err := d.record(row)
	return rec, err == nil, err
}

func (d *decoder) value(row parquet.Row, name string) (parquet.Value, bool) {
	i, ok := d.col[name]
	if !ok || i >= len(row) {
		return parquet.Value{}, false
	}
	v := row[i]
	if v.Column() != i {
		// Rows of a flat schema hold one value per column, in column order.
		for _, w := range row {
			if w.Column() == i {
				v = w
				break
			}
		}
	}
	if v.IsNull() {
		return parquet.Value{}, false
	}
	return v, true
}

func (d *decoder) str(row parquet.Row, name string) (string, bool) {
	v, ok := d.value(row, name)
	if !ok {
		return "", false
	}
	return string(v.ByteArray()), true
}

func (d *decoder) record(row parquet.Row) (Record, error) {
	var rec Record
	e := &rec.Event
	e.ID, _ = d.str(row, "event_id")
	e.Type, _ = d.str(row, "event_type")
	e.Subject, _ = d.str(row, "subject")
	e.Source, _ = d.str(row, "source")
	e.SpecVersion, _ = d.str(row, "spec_version")
	if data, ok := d.str(row, "data"); ok && data != "" {
		e.Data = []byte(data)
	}
	rec.Seq, _ = d.str(row, "stream_sequence")
	rec.StreamEventID, _ = d.str(row, "stream_event_id")
	t, err := d.time(row, "event_time", "event_time_raw")
	if err != nil {
		return Record{}, err
	}
	if t == nil {
		return Record{}, fmt.Errorf("%w: event %s/%s: event_time is null", ErrCorruptObject, e.Subject, e.ID)
	}
	e.Time = *t
	if e.RecordedAt, err = d.time(row, "recorded_at", "recorded_at_raw"); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// time reads a timestamp column, preferring its full-precision raw twin.
func (d *decoder) time(row parquet.Row, col, rawCol string) (*time.Time, error) {
	if raw, ok := d.str(row, rawCol); ok {
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return nil, fmt.Errorf("%w: column %s: %q is not RFC 3339", ErrCorruptObject, rawCol, raw)
		}
		return &t, nil
	}
	v, ok := d.value(row, col)
	if !ok {
		return nil, nil
	}
	t := fromUnits(v.Int64(), d.unit[col])
	return &t, nil
}

// recoverCorrupt turns a panic of the Parquet reader on a malformed file
// into ErrCorruptObject: a bad object must not crash the process.
func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrCorruptObject, r)
	}
}

package archiver

import (
	"encoding/json"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// source is what a column's value is computed from: the record, and its
// payload decoded with schema.Decode (nil when the data does not decode).
type source struct {
	rec     *Record
	payload schema.Payload
}

// colDef is a column with what the writer needs to know about it.
type colDef struct {
	Column
	dict      bool // low cardinality: dictionary-encoded
	noStats   bool // long opaque text: no min/max page bounds
	bulk      bool // the payload, most of a file's bytes: PLAIN (see parquet_schema.go)
	ascending bool // a timestamp in (nearly) the rows' order: DELTA_BINARY_PACKED
	get       func(s *source) any
}

// tableDef is a table with its column definitions.
type tableDef struct {
	domain    schema.Domain // the events it holds
	name, doc string
	cols      []colDef
	index     map[string]int // column name -> position
}

// A column value is nil (null) or one of string, int64, int32, float64, bool
// and time.Time, matching the column type; a string column's value may also
// be a []byte (data: the raw JSON without a copy).

// Envelope columns, first and last in every table. data and the stream
// position make every row a complete copy of the stream record's event.
//
// Field ids are permanent (Iceberg finds a column by its id, and files
// already written carry them): headCols have ids 1-6 and tailCols 7-12, in
// list order, in every table. Never reorder, remove or renumber them, nor
// add envelope columns: a new column is a typed column, added at the end of
// its table's typed list. TestFieldIDsGolden (testdata/field_ids.golden.json)
// fails when an existing column's id changes.
var headCols = []colDef{
	{Column: Column{Name: "event_id", Type: TypeString, Comment: "event id (CloudEvents id); unique per subject", ID: 1, Required: true},
		get: func(s *source) any { return s.rec.Event.ID }},
	{Column: Column{Name: "event_type", Type: TypeString, Comment: "event type, e.g. github.workflow_job.completed", ID: 2, Required: true}, dict: true,
		get: func(s *source) any { return s.rec.Event.Type }},
	{Column: Column{Name: "subject", Type: TypeString, Comment: "the aggregate the event belongs to, e.g. github/<installation>/job/<job>", ID: 3, Required: true},
		get: func(s *source) any { return s.rec.Event.Subject }},
	{Column: Column{Name: "source", Type: TypeString, Comment: "producer (CloudEvents source)", ID: 4, Required: true}, dict: true,
		get: func(s *source) any { return s.rec.Event.Source }},
	{Column: Column{Name: "event_time", Type: TypeTimestamp, Comment: "when it happened, per the producer (UTC, microseconds); event_date is its date", ID: 5, Required: true}, ascending: true,
		get: func(s *source) any { return s.rec.Event.Time }},
	{Column: Column{Name: "recorded_at", Type: TypeTimestamp, Comment: "when it was appended to the event table (UTC, microseconds)", ID: 6}, ascending: true,
		get: func(s *source) any { return optTime(s.rec.Event.RecordedAt) }},
}

// tailCols: ids 7-12; see headCols.
var tailCols = []colDef{
	{Column: Column{Name: "data", Type: TypeString, Comment: "the raw event data JSON, byte for byte as stored in the event table", ID: 7, Required: true}, noStats: true, bulk: true,
		get: func(s *source) any { return rawData(s.rec.Event.Data) }},
	{Column: Column{Name: "stream_sequence", Type: TypeString, Comment: "DynamoDB stream SequenceNumber of the record", ID: 8, Required: true},
		get: func(s *source) any { return s.rec.Seq }},
	{Column: Column{Name: "stream_event_id", Type: TypeString, Comment: "DynamoDB stream record eventID", ID: 9, Required: true},
		get: func(s *source) any { return s.rec.StreamEventID }},
	{Column: Column{Name: "spec_version", Type: TypeString, Comment: "CloudEvents specversion", ID: 10}, dict: true,
		get: func(s *source) any { return optStr(s.rec.Event.SpecVersion) }},
	{Column: Column{Name: "event_time_raw", Type: TypeString, Comment: "event time as RFC 3339 with full precision; set only when event_time (microseconds, UTC) does not hold it exactly", ID: 11}, noStats: true,
		get: func(s *source) any { return rawTime(s.rec.Event.Time) }},
	{Column: Column{Name: "recorded_at_raw", Type: TypeString, Comment: "recorded_at as RFC 3339 with full precision; set only when recorded_at (microseconds, UTC) does not hold it exactly", ID: 12}, noStats: true,
		get: func(s *source) any { return rawTimePtr(s.rec.Event.RecordedAt) }},
}

// payloadCol builds a typed column read from a payload of type P; rows of
// other payload types (or undecodable data) get null.
func payloadCol[P schema.Payload](name, typ, comment string, dict bool, f func(P) any) colDef {
	return colDef{Column: Column{Name: name, Type: typ, Comment: comment}, dict: dict, get: func(s *source) any {
		if p, ok := s.payload.(P); ok {
			return f(p)
		}
		return nil
	}}
}

// anyCol builds a typed column computed from the whole source.
func anyCol(name, typ, comment string, dict bool, f func(*source) any) colDef {
	return colDef{Column: Column{Name: name, Type: typ, Comment: comment}, dict: dict, get: f}
}

// The typed columns of each table, in file order. Their field ids are
// FirstTypedID (13) and up, in list order (newTableDef numbers them), and
// are permanent: add a new column only at the END of its list, and never
// remove or reorder one (a column no longer filled stays, always null).
// TestFieldIDsGolden fails when an existing column's id changes.

// newTableDef lays out the table of a domain: headCols, typed, tailCols. The typed
// columns get the field ids FirstTypedID and up, in list order.
func newTableDef(domain schema.Domain, name, doc string, typed []colDef) *tableDef {
	cols := make([]colDef, 0, len(headCols)+len(typed)+len(tailCols))
	cols = append(append(append(cols, headCols...), typed...), tailCols...)
	for i := range typed {
		cols[len(headCols)+i].ID = FirstTypedID + i
	}
	t := &tableDef{domain: domain, name: name, doc: doc, cols: cols, index: map[string]int{}}
	ids := map[int]bool{}
	for i, c := range cols {
		if _, dup := t.index[c.Name]; dup {
			panic("archiver: duplicate column " + name + "." + c.Name)
		}
		if c.ID <= 0 || ids[c.ID] {
			panic("archiver: column " + name + "." + c.Name + ": missing or duplicate field id")
		}
		t.index[c.Name] = i
		ids[c.ID] = true
	}
	return t
}

// row computes the column values of one record, in column order.
func (t *tableDef) row(rec *Record, dst []any) []any {
	s := source{rec: rec, payload: rec.payload}
	if s.payload == nil {
		if p, err := schema.Decode(rec.Event); err == nil {
			s.payload = p
		}
	}
	dst = dst[:0]
	for i := range t.cols {
		dst = append(dst, t.cols[i].get(&s))
	}
	return dst
}

// rawData is the data column's value: the raw JSON as it is (the writer
// copies it), never null.
func rawData(d json.RawMessage) any {
	if d == nil {
		return []byte{}
	}
	return []byte(d)
}

func optStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optStrPtr(s *string) any {
	if s == nil || *s == "" {
		return nil
	}
	return *s
}

func optI64(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

func optI64v(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func optF64(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func optInt(v *int) any {
	if v == nil {
		return nil
	}
	return int32(*v)
}

func optTime(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return *t
}

func epochMillis(ms int64) any {
	if ms <= 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC()
}

func diffMillis(from, to *time.Time) any {
	if from == nil || to == nil || from.IsZero() || to.IsZero() {
		return nil
	}
	return to.Sub(*from).Milliseconds()
}

func jsonText(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

// exactMicros reports whether t is exactly representable as a TIMESTAMP
// (MICROS) in UTC: no sub-microsecond part and the UTC location.
func exactMicros(t time.Time) bool {
	return t.Location() == time.UTC && t.Nanosecond()%int(time.Microsecond) == 0
}

// rawTime is the *_raw column of a time: RFC 3339 with full precision, or
// null when the TIMESTAMP(MICROS) column holds t exactly.
func rawTime(t time.Time) any {
	if exactMicros(t) {
		return nil
	}
	return t.Format(time.RFC3339Nano)
}

func rawTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return rawTime(*t)
}

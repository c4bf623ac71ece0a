package archiver

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// Record is one archived event with its stream position: the DynamoDB stream
// SequenceNumber and the stream record's eventID.
type Record struct {
	Event         schema.Event
	Seq           string
	StreamEventID string
	// payload is Event's data as DecodeRecord validated it, so that the
	// typed columns need not decode it again; nil means decode on write.
	payload schema.Payload
}

// Defaults of EncodeOptions.
const (
	// DefaultRowGroupRows caps the rows of one row group.
	DefaultRowGroupRows = 1_000_000
	// DefaultRowGroupBytes caps the (estimated, uncompressed) bytes of one
	// row group: Athena reads row groups in parallel and prefers them large.
	DefaultRowGroupBytes = 128 << 20
	// DefaultCompression is the codec of every column.
	DefaultCompression = "zstd"
)

// Compressions lists the values EncodeOptions.Compression accepts.
var Compressions = []string{"zstd", "zstd-better", "snappy", "none"}

// EncodeOptions tunes the Parquet files. The zero value means the defaults.
type EncodeOptions struct {
	// RowGroupRows is the most rows in one row group (default 1,000,000).
	RowGroupRows int
	// RowGroupBytes closes a row group once the estimated uncompressed size
	// of its values reaches it (default 128 MiB).
	RowGroupBytes int64
	// Compression is zstd (default), zstd-better (about 12% smaller, about
	// 3 times slower to write; what compaction uses), snappy or none.
	Compression string
}

func (o EncodeOptions) withDefaults() EncodeOptions {
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.RowGroupBytes == 0 {
		o.RowGroupBytes = DefaultRowGroupBytes
	}
	if o.Compression == "" {
		o.Compression = DefaultCompression
	}
	return o
}

// Validate names the first bad field.
func (o EncodeOptions) Validate() error {
	switch {
	case o.RowGroupRows < 0:
		return fmt.Errorf("archiver: EncodeOptions.RowGroupRows: must not be negative, got %d", o.RowGroupRows)
	case o.RowGroupBytes < 0:
		return fmt.Errorf("archiver: EncodeOptions.RowGroupBytes: must not be negative, got %d", o.RowGroupBytes)
	case o.Compression != "" && !slices.Contains(Compressions, o.Compression):
		return fmt.Errorf("archiver: EncodeOptions.Compression: must be one of %s, got %q", strings.Join(Compressions, ", "), o.Compression)
	}
	return nil
}

// The codecs are shared: each keeps a pool of (costly to create) encoders.
var (
	zstdCodec   = &zstd.Codec{Level: zstd.SpeedDefault}
	zstdBetter  = &zstd.Codec{Level: zstd.SpeedBetterCompression}
	snappyCodec = &snappy.Codec{}
	noCodec     = &uncompressed.Codec{}
)

func codecOf(name string) compress.Codec {
	switch name {
	case "snappy":
		return snappyCodec
	case "none":
		return noCodec
	case "zstd-better":
		return zstdBetter
	default:
		return zstdCodec
	}
}

// Key-value metadata written into every file. Version 1 files have
// TIMESTAMP(MILLIS) columns and no field ids; version 2 files have
// TIMESTAMP(MICROS) columns and every column's field id. Decode reads both.
const (
	metaTable   = "streamfold.table"
	metaVersion = "streamfold.archive.version"
	fileVersion = "2"
)

// Encode writes recs as one Parquet file of the given table to w. Rows are
// sorted by event_time, then by stream sequence number (numerically), so
// that the row groups' min/max statistics let Athena skip time ranges. A
// record whose type belongs to another table is rejected with
// ErrWrongTable; one of an unknown type is written with null typed columns.
// Times must lie in the years 0000-9999 (RFC 3339).
func Encode(w io.Writer, table string, recs []Record, opts EncodeOptions) error {
	enc, err := newEncoder(w, table, opts)
	if err != nil {
		return err
	}
	sorted := make([]*Record, len(recs))
	for i := range recs {
		sorted[i] = &recs[i]
	}
	slices.SortStableFunc(sorted, compareRecords)
	for _, r := range sorted {
		if err := enc.write(r); err != nil {
			return err
		}
	}
	return enc.close()
}

// compareRecords orders by event time, then stream position.
func compareRecords(a, b *Record) int {
	if c := a.Event.Time.Compare(b.Event.Time); c != 0 {
		return c
	}
	return streamimage.CompareSeq(a.Seq, b.Seq)
}

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

// ---------------------------------------------------------------- schema

var (
	schemaOnce sync.Once
	schemas    map[string]*parquet.Schema
)

// parquetSchema returns the Parquet schema of a table, built from its
// column definitions (the same ones Tables returns), each column carrying
// its field id.
func parquetSchema(table string) (*parquet.Schema, error) {
	schemaOnce.Do(func() {
		schemas = map[string]*parquet.Schema{}
		for _, t := range tableDefs {
			schemas[t.name] = parquet.NewSchema(t.name, t.node())
		}
	})
	s, ok := schemas[table]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	return s, nil
}

func (t *tableDef) node() parquet.Node {
	fields := make([]parquet.Field, len(t.cols))
	for i, c := range t.cols {
		fields[i] = &orderedField{Node: c.node(), name: c.Name, index: i}
	}
	return &orderedGroup{fields: fields}
}

func (c colDef) node() parquet.Node {
	var n parquet.Node
	switch c.Type {
	case TypeString:
		n = parquet.String()
		if c.dict {
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		}
	case TypeBigint:
		n = parquet.Int(64)
	case TypeInt:
		n = parquet.Int(32)
	case TypeDouble:
		n = parquet.Leaf(parquet.DoubleType)
	case TypeBoolean:
		n = parquet.Leaf(parquet.BooleanType)
	case TypeTimestamp:
		// TIMESTAMP(MICROS, isAdjustedToUTC=true): Iceberg's timestamptz.
		n = parquet.Timestamp(parquet.Microsecond)
	default:
		panic("archiver: column " + c.Name + ": unknown type " + c.Type)
	}
	if !c.Required {
		n = parquet.Optional(n)
	}
	return parquet.FieldID(n, c.ID)
}

// orderedGroup is a Parquet group whose fields keep the order they are given in
// (parquet.Group sorts them by name): files list their columns in the order
// of Tables().
type orderedGroup struct{ fields []parquet.Field }

func (g *orderedGroup) ID() int { return 0 }
func (g *orderedGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "", g)
	return b.String()
}
func (g *orderedGroup) Type() parquet.Type                  { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool                      { return false }
func (g *orderedGroup) Repeated() bool                      { return false }
func (g *orderedGroup) Required() bool                      { return true }
func (g *orderedGroup) Leaf() bool                          { return false }
func (g *orderedGroup) Fields() []parquet.Field             { return g.fields }
func (g *orderedGroup) Encoding() encoding.Encoding         { return nil }
func (g *orderedGroup) Compression() compress.Codec         { return nil }
func (g *orderedGroup) GoType() reflect.Type                { return groupGoType(g.fields) }
func (f *orderedField) Name() string                        { return f.name }
func (f *orderedField) Value(v reflect.Value) reflect.Value { return v.Field(f.index) }

type orderedField struct {
	parquet.Node
	name  string
	index int
}

func groupGoType(fields []parquet.Field) reflect.Type {
	sf := make([]reflect.StructField, len(fields))
	for i, f := range fields {
		sf[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: f.GoType(), Tag: reflect.StructTag(`parquet:"` + f.Name() + `"`)}
	}
	return reflect.StructOf(sf)
}

// ---------------------------------------------------------------- encoder

// encoder streams records of one table into one Parquet file.
type encoder struct {
	t       *tableDef
	w       *parquet.Writer
	opts    EncodeOptions
	vals    []any
	row     parquet.Row
	rgBytes int64
}

func newEncoder(w io.Writer, table string, opts EncodeOptions) (*encoder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	t, ok := tableByName[table]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	sch, err := parquetSchema(table)
	if err != nil {
		return nil, err
	}
	wopts := []parquet.WriterOption{
		sch,
		parquet.Compression(codecOf(opts.Compression)),
		// Version 1 data pages: the most widely read (Athena's Hive and
		// Trino readers, DuckDB, Spark).
		parquet.DataPageVersion(1),
		parquet.MaxRowsPerRowGroup(int64(opts.RowGroupRows)),
		parquet.CreatedBy("streamfold", "archive-"+fileVersion, ""),
		parquet.KeyValueMetadata(metaTable, table),
		parquet.KeyValueMetadata(metaVersion, fileVersion),
	}
	for _, c := range t.cols {
		if c.noStats {
			wopts = append(wopts, parquet.SkipPageBounds(c.Name))
		}
	}
	return &encoder{t: t, w: parquet.NewWriter(w, wopts...), opts: opts}, nil
}

// write appends one record.
func (e *encoder) write(rec *Record) error {
	if tbl, ok := TableFor(rec.Event.Type); ok && tbl != e.t.name {
		return fmt.Errorf("%w: event %s/%s of type %s belongs to %s, not %s", ErrWrongTable, rec.Event.Subject, rec.Event.ID, rec.Event.Type, tbl, e.t.name)
	}
	if err := checkTime("time", rec.Event.Time); err != nil {
		return fmt.Errorf("archiver: event %s/%s: %w", rec.Event.Subject, rec.Event.ID, err)
	}
	if rec.Event.RecordedAt != nil {
		if err := checkTime("recordedat", *rec.Event.RecordedAt); err != nil {
			return fmt.Errorf("archiver: event %s/%s: %w", rec.Event.Subject, rec.Event.ID, err)
		}
	}
	e.vals = e.t.row(rec, e.vals)
	row := e.row[:0]
	var size int64
	for i, v := range e.vals {
		c := &e.t.cols[i]
		pv, n, err := parquetValue(c, v)
		if err != nil {
			return fmt.Errorf("archiver: event %s/%s: %w", rec.Event.Subject, rec.Event.ID, err)
		}
		size += n
		def := 0
		if !c.Required && v != nil {
			def = 1
		}
		row = append(row, pv.Level(0, def, i))
	}
	e.row = row
	if _, err := e.w.WriteRows([]parquet.Row{row}); err != nil {
		return fmt.Errorf("archiver: write parquet row: %w", err)
	}
	e.rgBytes += size
	if e.rgBytes >= e.opts.RowGroupBytes {
		if err := e.w.Flush(); err != nil {
			return fmt.Errorf("archiver: flush row group: %w", err)
		}
		e.rgBytes = 0
	}
	return nil
}

func (e *encoder) close() error {
	if err := e.w.Close(); err != nil {
		return fmt.Errorf("archiver: close parquet file: %w", err)
	}
	return nil
}

// checkTime rejects times that RFC 3339 cannot carry.
func checkTime(name string, t time.Time) error {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("%s: year %d is outside 0000-9999", name, y)
	}
	if _, off := t.Zone(); off%60 != 0 {
		return fmt.Errorf("%s: zone offset %ds is not a whole minute", name, off)
	}
	return nil
}

// parquetValue converts a column value; n estimates its uncompressed size.
func parquetValue(c *colDef, v any) (parquet.Value, int64, error) {
	if v == nil {
		if c.Required {
			return parquet.Value{}, 0, fmt.Errorf("column %s: is required", c.Name)
		}
		return parquet.NullValue(), 1, nil
	}
	switch c.Type {
	case TypeString:
		if s, ok := v.(string); ok {
			return parquet.ByteArrayValue([]byte(s)), int64(len(s)) + 4, nil
		}
	case TypeBigint:
		if i, ok := v.(int64); ok {
			return parquet.Int64Value(i), 8, nil
		}
	case TypeInt:
		if i, ok := v.(int32); ok {
			return parquet.Int32Value(i), 4, nil
		}
	case TypeDouble:
		if f, ok := v.(float64); ok {
			return parquet.DoubleValue(f), 8, nil
		}
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return parquet.BooleanValue(b), 1, nil
		}
	case TypeTimestamp:
		if t, ok := v.(time.Time); ok {
			return parquet.Int64Value(t.UnixMicro()), 8, nil
		}
	}
	return parquet.Value{}, 0, fmt.Errorf("column %s (%s): cannot hold a %T", c.Name, c.Type, v)
}

// ---------------------------------------------------------------- decoder

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

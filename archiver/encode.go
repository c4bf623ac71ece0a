package archiver

import (
	"fmt"
	"io"
	"slices"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

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
	var bulk int64
	sorted := make([]*Record, len(recs))
	for i := range recs {
		sorted[i] = &recs[i]
		bulk += int64(len(recs[i].Event.Data)) + 4
	}
	enc, err := newEncoder(w, table, opts, bulk)
	if err != nil {
		return err
	}
	slices.SortStableFunc(sorted, compareRecords)
	for _, r := range sorted {
		if err := enc.write(r); err != nil {
			return err
		}
	}
	return enc.close()
}

// encoder streams records of one table into one Parquet file.
type encoder struct {
	t       *tableDef
	w       *parquet.Writer
	opts    EncodeOptions
	vals    []any
	rows    []parquet.Row // rows[:n] are not written yet
	n       int
	rgBytes int64
}

// rowBatch is how many rows the encoder hands the writer at once (the
// writer's cost per call and column is then shared by the rows).
const rowBatch = 256

// Page sizes. Each page of a column is compressed on its own, so zstd
// finds the repeats of the payload (the same repository, workflow, runner
// and state machine in event after event, minutes apart) only within one
// page: the data column of 20,000 events with GitHub's full webhook bodies
// takes 233 B/event in parquet-go's default 256 KiB pages and 69 in 8 MiB
// pages (gzip NDJSON of the whole events: 234). parquet-go gives all the
// columns of a file one page size and allocates some columns' buffers of
// that size up front, so a small file (a small batch) gets pages only as
// large as its payloads. Athena, DuckDB and parquet-go read pages of any
// size; a column whose values fill fewer bytes has fewer, larger pages
// (page-level min/max cover more rows).
const (
	minPageBytes = 256 << 10
	maxPageBytes = 8 << 20
)

// pageBytes is the page size of a file whose payload column holds about
// bulk bytes: all of it in one page, within minPageBytes-maxPageBytes.
func pageBytes(bulk int64) int {
	return int(min(max(bulk+bulk/16, minPageBytes), maxPageBytes))
}

// newEncoder starts a file of the table whose payload column will hold
// about bulk bytes (any larger value than maxPageBytes when unknown).
func newEncoder(w io.Writer, table string, opts EncodeOptions, bulk int64) (*encoder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	t, ok := tableByName[table]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	sch, err := parquetSchema(table, opts.Compression)
	if err != nil {
		return nil, err
	}
	wopts := []parquet.WriterOption{
		sch,
		parquet.Compression(codecOf(opts.Compression)),
		// Version 1 data pages: the most widely read (Athena's Hive and
		// Trino readers, DuckDB, Spark).
		parquet.DataPageVersion(1),
		parquet.PageBufferSize(pageBytes(bulk)),
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
	if e.n == len(e.rows) {
		e.rows = append(e.rows, make(parquet.Row, 0, len(e.vals)))
	}
	row := e.rows[e.n][:0]
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
	e.rows[e.n] = row
	e.n++
	e.rgBytes += size
	if e.n == rowBatch || e.rgBytes >= e.opts.RowGroupBytes {
		if err := e.writeRows(); err != nil {
			return err
		}
	}
	if e.rgBytes >= e.opts.RowGroupBytes {
		if err := e.w.Flush(); err != nil {
			return fmt.Errorf("archiver: flush row group: %w", err)
		}
		e.rgBytes = 0
	}
	return nil
}

// writeRows hands the pending rows to the writer. Their values point at
// the records' strings and bytes, which the writer copies.
func (e *encoder) writeRows() error {
	if e.n == 0 {
		return nil
	}
	_, err := e.w.WriteRows(e.rows[:e.n])
	e.n = 0
	if err != nil {
		return fmt.Errorf("archiver: write parquet rows: %w", err)
	}
	return nil
}

func (e *encoder) close() error {
	if err := e.writeRows(); err != nil {
		return err
	}
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
		switch s := v.(type) {
		case string:
			// The value points at the string's bytes, which the writer
			// copies and never changes: no copy of our own.
			return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s))), int64(len(s)) + 4, nil
		case []byte:
			return parquet.ByteArrayValue(s), int64(len(s)) + 4, nil
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

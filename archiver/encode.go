package archiver

import (
	"fmt"
	"io"
	"slices"
	"time"

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

package archiver

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
)

// columnReader streams some columns of a Parquet file written by Encode,
// row by row, without decoding the others: each row group's rows are read
// from the chosen column chunks only (a reader that needs the ids does not
// decompress the data column, nor any typed column). Rows are read 256 at a
// time: memory beyond the file's bytes is constant.
type columnReader struct {
	groups []parquet.RowGroup
	rows   parquet.Rows
	buf    []parquet.Row
	n, i   int
	stalls int
	chunks []int                    // file column index of each projected column
	pos    map[string]int           // column name -> position in a projected row
	unit   map[string]time.Duration // timestamp column -> its unit in the file
}

// newColumnReader opens the file and projects it on the columns of want
// (name -> required). A required column the file lacks is ErrCorruptObject;
// an optional one reads as null.
func newColumnReader(r io.ReaderAt, size int64, want map[string]bool) (_ *columnReader, err error) {
	defer recoverCorrupt(&err)
	f, err := parquet.OpenFile(r, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptObject, err)
	}
	c := &columnReader{groups: f.RowGroups(), pos: map[string]int{}, unit: map[string]time.Duration{}}
	for i, path := range f.Schema().Columns() {
		if len(path) != 1 {
			continue
		}
		if _, ok := want[path[0]]; ok {
			c.pos[path[0]] = len(c.chunks)
			c.chunks = append(c.chunks, i)
		}
	}
	for name, required := range want {
		if _, ok := c.pos[name]; !ok && required {
			return nil, fmt.Errorf("%w: column %q is missing", ErrCorruptObject, name)
		}
	}
	for _, name := range timeCols {
		if _, ok := c.pos[name]; !ok {
			continue
		}
		unit, err := timestampUnit(f.Root().Column(name))
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %w", ErrCorruptObject, name, err)
		}
		c.unit[name] = unit
	}
	c.buf = make([]parquet.Row, 256)
	return c, nil
}

// projectedRowGroup is a row group seen through some of its column chunks:
// its rows hold those columns' values, in that order.
type projectedRowGroup struct {
	parquet.RowGroup
	chunks []parquet.ColumnChunk
}

func (g projectedRowGroup) ColumnChunks() []parquet.ColumnChunk { return g.chunks }

func (c *columnReader) close() {
	if c.rows != nil {
		_ = c.rows.Close()
		c.rows = nil
	}
}

// next returns the next row (valid until the following call), false at the
// end of the file.
func (c *columnReader) next() (_ parquet.Row, _ bool, err error) {
	defer recoverCorrupt(&err)
	for c.i >= c.n {
		if c.rows == nil {
			if len(c.groups) == 0 {
				return nil, false, nil
			}
			all := c.groups[0].ColumnChunks()
			chunks := make([]parquet.ColumnChunk, len(c.chunks))
			for j, i := range c.chunks {
				chunks[j] = all[i]
			}
			c.rows = parquet.NewRowGroupRowReader(projectedRowGroup{RowGroup: c.groups[0], chunks: chunks})
			c.groups = c.groups[1:]
		}
		n, err := c.rows.ReadRows(c.buf)
		c.n, c.i = n, 0
		switch {
		case errors.Is(err, io.EOF):
			_ = c.rows.Close()
			c.rows = nil
		case err != nil:
			return nil, false, fmt.Errorf("%w: read rows: %w", ErrCorruptObject, err)
		case n == 0:
			if c.stalls++; c.stalls > 3 {
				return nil, false, fmt.Errorf("%w: read rows: no progress", ErrCorruptObject)
			}
			continue
		}
		c.stalls = 0
	}
	row := c.buf[c.i]
	c.i++
	if len(row) != len(c.chunks) {
		return nil, false, fmt.Errorf("%w: a row of %d values, want %d", ErrCorruptObject, len(row), len(c.chunks))
	}
	return row, true, nil
}

// value returns the named column's value in row; false when it is null or
// not projected.
func (c *columnReader) value(row parquet.Row, name string) (parquet.Value, bool) {
	i, ok := c.pos[name]
	if !ok || row[i].IsNull() {
		return parquet.Value{}, false
	}
	return row[i], true
}

// bytes returns a string column's value, aliasing the reader's buffers
// (valid until the next row).
func (c *columnReader) bytes(row parquet.Row, name string) ([]byte, bool) {
	v, ok := c.value(row, name)
	if !ok {
		return nil, false
	}
	return v.ByteArray(), true
}

func (c *columnReader) str(row parquet.Row, name string) string {
	b, _ := c.bytes(row, name)
	return string(b)
}

// time reads a timestamp column, preferring its full-precision raw twin
// (time.RFC3339Nano), else the column in the file's unit.
func (c *columnReader) time(row parquet.Row, col, rawCol string) (*time.Time, error) {
	if raw, ok := c.bytes(row, rawCol); ok {
		t, err := time.Parse(time.RFC3339Nano, string(raw))
		if err != nil {
			return nil, fmt.Errorf("%w: column %s: %q is not RFC 3339", ErrCorruptObject, rawCol, raw)
		}
		return &t, nil
	}
	v, ok := c.value(row, col)
	if !ok {
		return nil, nil
	}
	t := fromUnits(v.Int64(), c.unit[col])
	return &t, nil
}

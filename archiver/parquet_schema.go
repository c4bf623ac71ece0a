package archiver

import (
	"fmt"
	"sync"

	"github.com/parquet-go/parquet-go"
)

var (
	schemaOnce sync.Once
	schemas    map[schemaKey]*parquet.Schema
)

type schemaKey struct{ table, compression string }

// parquetSchema returns the Parquet schema of a table's files written with
// a compression of Compressions, built from its column definitions (the
// same ones Tables returns), each column carrying its field id, encoding
// and, where it differs from the file's, codec.
//
// The encodings and codecs are the physical layout only: readers find them
// in each file (every Parquet reader of the archive reads PLAIN,
// RLE_DICTIONARY, DELTA_BYTE_ARRAY and DELTA_BINARY_PACKED), and files
// written before them read the same. They are chosen per column:
//
//   - the payload (data, bulk): PLAIN, each JSON value after its length,
//     the cheapest to write and read (what makes it small is the page
//     size, see pageBytes; parquet-go's default, DELTA_LENGTH_BYTE_ARRAY,
//     was 1% larger);
//   - low-cardinality strings (dict): RLE_DICTIONARY;
//   - every other string (ids, subjects, ARNs, names, raw times):
//     DELTA_BYTE_ARRAY, which stores each value's prefix shared with the
//     previous one once and the lengths apart from the bytes;
//   - event_time and recorded_at (ascending, as rows are sorted):
//     DELTA_BINARY_PACKED; other numbers are PLAIN (delta-coding unsorted
//     ids and times made them larger).
func parquetSchema(table, compression string) (*parquet.Schema, error) {
	schemaOnce.Do(func() {
		schemas = map[schemaKey]*parquet.Schema{}
		for _, t := range tableDefs {
			for _, c := range Compressions {
				schemas[schemaKey{t.name, c}] = parquet.NewSchema(t.name, t.node(c))
			}
		}
	})
	s, ok := schemas[schemaKey{table, compression}]
	if !ok {
		if _, ok := tableByName[table]; !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
		}
		return nil, fmt.Errorf("archiver: unknown compression %q", compression)
	}
	return s, nil
}

func (t *tableDef) node(compression string) parquet.Node {
	fields := make([]parquet.Field, len(t.cols))
	for i, c := range t.cols {
		fields[i] = &orderedField{Node: c.node(compression), name: c.Name, index: i}
	}
	return &orderedGroup{fields: fields}
}

func (c colDef) node(compression string) parquet.Node {
	var n parquet.Node
	switch c.Type {
	case TypeString:
		n = parquet.String()
		switch {
		case c.dict:
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		case c.bulk:
			n = parquet.Encoded(n, &parquet.Plain)
		default:
			n = parquet.Encoded(n, &parquet.DeltaByteArray)
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
		if c.ascending {
			n = parquet.Encoded(n, &parquet.DeltaBinaryPacked)
		}
	default:
		panic("archiver: column " + c.Name + ": unknown type " + c.Type)
	}
	if codec := columnCodec(c, compression); codec != nil {
		n = parquet.Compressed(n, codec)
	}
	if !c.Required {
		n = parquet.Optional(n)
	}
	return parquet.FieldID(n, c.ID)
}

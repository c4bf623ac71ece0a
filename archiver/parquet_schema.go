package archiver

import (
	"fmt"
	"sync"

	"github.com/parquet-go/parquet-go"
)

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

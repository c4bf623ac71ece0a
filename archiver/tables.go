package archiver

import (
	"slices"
	"strings"

	"github.com/streamfold/streamfold/schema"
)

// PartitionKey names the event's own UTC date (YYYY-MM-DD) in a data file's
// key (event_date=D/); the Iceberg partition is day(event_time). It is part
// of the object key, not of the file.
const PartitionKey = "event_date"

// Glue (Hive) column types used by the tables. Only types Athena reads from
// Parquet: signed 32/64-bit integers, doubles, booleans, UTF-8 strings and
// TIMESTAMP(MICROS, adjusted to UTC).
const (
	TypeString    = "string"
	TypeBigint    = "bigint"
	TypeInt       = "int"
	TypeDouble    = "double"
	TypeBoolean   = "boolean"
	TypeTimestamp = "timestamp"
)

// Column is one column of an archive table (Glue reads it from the Iceberg
// schema).
type Column struct {
	Name    string // snake_case, unique in its table
	Type    string // Glue/Hive type: string, bigint, int, double, boolean, timestamp
	Comment string
	// ID is the column's Iceberg field id, written into the Parquet schema
	// as its field_id. It is unique in its table and never changes: the
	// envelope columns have 1-12 in every table, a table's typed columns
	// FirstTypedID and up, in list order.
	ID int
	// Required means never null (the envelope columns except recorded_at,
	// spec_version and the *_raw columns); the others are optional.
	Required bool
}

// FirstTypedID is the field id of the first typed column of every table:
// the head columns have 1-6 and the tail columns 7-12.
const FirstTypedID = 13

// TableDef is one archive table: its name, what it holds and its columns in
// file order. The partition column (PartitionKey) is not among them.
type TableDef struct {
	Name, Doc string
	Columns   []Column
}

// The archive's tables: each domain's file (table_<domain>.go) declares the
// table of its schema.Domain and registers it from an init function.
var (
	tableDefs     []*tableDef // in name order, the order of Tables()
	tableByName   = map[string]*tableDef{}
	tableByDomain = map[schema.Domain]*tableDef{}
)

// registerTable adds the table of a domain; it panics on a second table of
// the same name or domain.
func registerTable(t *tableDef) {
	if _, dup := tableByName[t.name]; dup {
		panic("archiver: duplicate table " + t.name)
	}
	if other, dup := tableByDomain[t.domain]; dup {
		panic("archiver: tables " + other.name + " and " + t.name + " both archive domain " + string(t.domain))
	}
	tableByName[t.name] = t
	tableByDomain[t.domain] = t
	i, _ := slices.BinarySearchFunc(tableDefs, t.name, func(d *tableDef, name string) int { return strings.Compare(d.name, name) })
	tableDefs = slices.Insert(tableDefs, i, t)
}

// Tables returns the archive's table definitions (the Iceberg schema), in a
// stable order (by name). The Parquet schema of each table is built from
// the same definitions, column for column, with each column's ID as its
// field_id and Required as its repetition (the Iceberg schema is built from
// them too).
func Tables() []TableDef {
	out := make([]TableDef, len(tableDefs))
	for i, t := range tableDefs {
		cols := make([]Column, len(t.cols))
		for j, c := range t.cols {
			cols[j] = c.Column
		}
		out[i] = TableDef{Name: t.name, Doc: t.doc, Columns: cols}
	}
	return out
}

// TableDefOf returns the definition of the named table, as Tables lists
// it, and false for a table the archive does not have.
func TableDefOf(name string) (TableDef, bool) {
	for _, t := range Tables() {
		if t.Name == name {
			return t, true
		}
	}
	return TableDef{}, false
}

// TableFor returns the archive table that holds events of eventType (the
// table of its schema.Domain), and false for a type it does not know.
func TableFor(eventType string) (string, bool) {
	k, ok := schema.KindOf(eventType)
	if !ok {
		return "", false
	}
	t, ok := tableByDomain[k.Domain]
	if !ok {
		return "", false
	}
	return t.name, true
}

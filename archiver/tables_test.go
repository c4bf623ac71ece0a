package archiver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/streamfold/streamfold/internal/laptop/golden"
	"github.com/streamfold/streamfold/schema"
)

func TestTableForEveryType(t *testing.T) {
	// The expected table of each type, by its prefix (the brief's routing).
	byPrefix := []struct{ prefix, table string }{
		{"aws.states.", TableAgentExecutions},
		{"album.", TableAlbumWorkflow},
		{"github.workflow_job.", TableGitHubJobs},
		{"github.deployment.", TableGitHubJobs},
		{"runson.runner.", TableGitHubJobs},
		{"rez.message.", TableMessages},
	}
	types := schema.Types()
	if len(types) < 29 {
		t.Fatalf("schema.Types() lists only %d types", len(types))
	}
	for _, typ := range types {
		want := ""
		for _, p := range byPrefix {
			if strings.HasPrefix(typ, p.prefix) {
				want = p.table
			}
		}
		got, ok := TableFor(typ)
		if !ok || got != want || want == "" {
			t.Errorf("TableFor(%q) = %q, %v; want %q", typ, got, ok, want)
		}
	}
	for _, bad := range []string{"", "album", "github.workflow_job", "unknown.type"} {
		if tb, ok := TableFor(bad); ok {
			t.Errorf("TableFor(%q) = %q, want not found", bad, tb)
		}
	}
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func TestTablesSpec(t *testing.T) {
	allowed := []string{TypeString, TypeBigint, TypeInt, TypeDouble, TypeBoolean, TypeTimestamp}
	tables := Tables()
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
		if tb.Doc == "" {
			t.Errorf("%s: no doc", tb.Name)
		}
		seen := map[string]bool{}
		for _, c := range tb.Columns {
			if !snake.MatchString(c.Name) || seen[c.Name] || c.Name == PartitionKey {
				t.Errorf("%s.%s: bad, duplicate or partition column name", tb.Name, c.Name)
			}
			seen[c.Name] = true
			if !slices.Contains(allowed, c.Type) {
				t.Errorf("%s.%s: type %q is not one Athena reads", tb.Name, c.Name, c.Type)
			}
			if c.Comment == "" || len(c.Comment) > 255 {
				t.Errorf("%s.%s: comment must be 1-255 characters (Glue's limit)", tb.Name, c.Name)
			}
		}
		for _, c := range []string{"event_id", "subject", "event_type", "source", "event_time", "recorded_at", "stream_sequence", "stream_event_id", "data"} {
			if !seen[c] {
				t.Errorf("%s: common column %s is missing", tb.Name, c)
			}
		}
	}
	if !slices.Equal(names, []string{TableAgentExecutions, TableAlbumWorkflow, TableGitHubJobs, TableMessages}) {
		t.Errorf("tables = %v", names)
	}
	// Field ids: headCols 1-6, tailCols 7-12, the typed columns
	// FirstTypedID and up in list order; Required exactly on the envelope
	// columns that are never null.
	required := []string{"event_id", "event_type", "subject", "source", "event_time", "data", "stream_sequence", "stream_event_id"}
	for _, tb := range tables {
		n := len(tb.Columns)
		for i, c := range tb.Columns {
			var want int
			switch {
			case i < len(headCols):
				want = i + 1
			case i >= n-len(tailCols):
				want = len(headCols) + i - (n - len(tailCols)) + 1
			default:
				want = FirstTypedID + i - len(headCols)
			}
			if c.ID != want {
				t.Errorf("%s.%s: id %d, want %d", tb.Name, c.Name, c.ID, want)
			}
			if c.Required != slices.Contains(required, c.Name) {
				t.Errorf("%s.%s: Required = %v", tb.Name, c.Name, c.Required)
			}
		}
	}
	// Tables returns copies: changing them cannot change the schema.
	tables[0].Columns[0].Name = "changed"
	if Tables()[0].Columns[0].Name == "changed" {
		t.Error("Tables() exposes the package's column slice")
	}
}

// TestParquetSchemaMatchesSpec reads the schema back from an encoded file
// and checks it against Tables(), column for column: same names in the same
// order, the Parquet type that the Glue type reads, TIMESTAMP(MICROS, UTC)
// timestamps (Iceberg's timestamptz), nothing Athena cannot read (unsigned
// integers, nanosecond timestamps), and each column's field id.
func TestParquetSchemaMatchesSpec(t *testing.T) {
	for _, tb := range Tables() {
		var buf bytes.Buffer
		if err := Encode(&buf, tb.Name, nil, EncodeOptions{}); err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := f.Lookup("streamfold.table"); v != tb.Name {
			t.Errorf("%s: file metadata names table %q", tb.Name, v)
		}
		fields := f.Schema().Fields()
		if len(fields) != len(tb.Columns) {
			t.Fatalf("%s: file has %d columns, spec %d", tb.Name, len(fields), len(tb.Columns))
		}
		tdef := tableByName[tb.Name]
		for i, c := range tb.Columns {
			fl := fields[i]
			if fl.Name() != c.Name {
				t.Errorf("%s column %d: file %s, spec %s", tb.Name, i, fl.Name(), c.Name)
				continue
			}
			if !fl.Leaf() || fl.Repeated() {
				t.Errorf("%s.%s: not a flat leaf", tb.Name, c.Name)
			}
			if fl.Optional() == c.Required || c.Required != tdef.cols[i].Required {
				t.Errorf("%s.%s: optional=%v, required=%v", tb.Name, c.Name, fl.Optional(), c.Required)
			}
			if fl.ID() != c.ID || c.ID == 0 {
				t.Errorf("%s.%s: field_id %d in the file, Tables() says %d", tb.Name, c.Name, fl.ID(), c.ID)
			}
			typ := fl.Type()
			var lv format.LogicalTypeValue
			if lt := typ.LogicalType(); lt != nil {
				lv = lt.Value
			}
			var want format.Type
			ok := true
			switch c.Type {
			case TypeString:
				_, ok = lv.(*format.StringType)
				want = format.ByteArray
			case TypeBigint:
				it, isInt := lv.(*format.IntType)
				want, ok = format.Int64, lv == nil || (isInt && it.IsSigned && it.BitWidth == 64)
			case TypeInt:
				it, isInt := lv.(*format.IntType)
				want, ok = format.Int32, lv == nil || (isInt && it.IsSigned && it.BitWidth == 32)
			case TypeDouble:
				want, ok = format.Double, lv == nil
			case TypeBoolean:
				want, ok = format.Boolean, lv == nil
			case TypeTimestamp:
				ts, isTS := lv.(*format.TimestampType)
				want = format.Int64
				if ok = isTS && ts.IsAdjustedToUTC; ok {
					_, ok = ts.Unit.Value.(*format.MicroSeconds)
				}
			}
			if typ.Kind() != parquet.Kind(want) || !ok {
				t.Errorf("%s.%s: parquet %s (%v) does not hold Glue %s", tb.Name, c.Name, typ, lv, c.Type)
			}
		}
	}
}

func TestTableDefOf(t *testing.T) {
	for _, want := range Tables() {
		got, ok := TableDefOf(want.Name)
		if !ok || got.Name != want.Name || got.Doc != want.Doc || !slices.Equal(got.Columns, want.Columns) {
			t.Errorf("TableDefOf(%q) = %+v, %v", want.Name, got, ok)
		}
	}
	if tb, ok := TableDefOf("nope"); ok {
		t.Errorf("TableDefOf(nope) = %+v", tb)
	}
}

// fieldIDsGolden is testdata/field_ids.golden.json: every table's columns
// as the written Parquet files declare them, with their field ids.
const fieldIDsGolden = "testdata/field_ids.golden.json"

type goldenColumn struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

type goldenTable struct {
	Table   string         `json:"table"`
	Columns []goldenColumn `json:"columns"`
}

// TestFieldIDsGolden pins the Iceberg field ids of every column, read back
// from the schema of written Parquet files. Field ids are permanent: an
// existing column must keep its id, name and type, and no column may go, so
// a new column can only be added at the end of its table's typed list
// (where it gets the next id). Adding one needs -update to record it; an
// id change fails even with -update (if no archive was ever written with
// the table, delete the golden file and run -update to start over).
func TestFieldIDsGolden(t *testing.T) {
	var got []goldenTable
	for _, tb := range Tables() {
		var buf bytes.Buffer
		if err := Encode(&buf, tb.Name, nil, EncodeOptions{}); err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		gt := goldenTable{Table: tb.Name}
		for i, fl := range f.Schema().Fields() {
			gt.Columns = append(gt.Columns, goldenColumn{ID: fl.ID(), Name: fl.Name(), Type: tb.Columns[i].Type, Required: fl.Required()})
		}
		got = append(got, gt)
	}

	// Existing ids first, even with -update: -update only records new columns.
	if old, err := os.ReadFile(fieldIDsGolden); err == nil {
		var want []goldenTable
		if err := json.Unmarshal(old, &want); err != nil {
			t.Fatalf("%s: %v", fieldIDsGolden, err)
		}
		for _, wt := range want {
			i := slices.IndexFunc(got, func(g goldenTable) bool { return g.Table == wt.Table })
			if i < 0 {
				t.Errorf("table %s is gone", wt.Table)
				continue
			}
			byID := map[int]goldenColumn{}
			for _, c := range got[i].Columns {
				byID[c.ID] = c
			}
			for _, wc := range wt.Columns {
				if gc, ok := byID[wc.ID]; !ok || gc != wc {
					t.Errorf("%s field id %d was %+v, is now %+v: field ids are permanent; add new columns at the end of the table's typed list", wt.Table, wc.ID, wc, gc)
				}
			}
		}
		if t.Failed() {
			return
		}
	}

	// One line per column, so that a diff shows the columns that changed.
	comma := func(i, n int) string {
		if i < n-1 {
			return ","
		}
		return ""
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, gt := range got {
		fmt.Fprintf(&b, "  {\"table\": %q, \"columns\": [\n", gt.Table)
		for j, c := range gt.Columns {
			line, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("    " + string(line) + comma(j, len(gt.Columns)) + "\n")
		}
		b.WriteString("  ]}" + comma(i, len(got)) + "\n")
	}
	b.WriteString("]\n")
	golden.Check(t, fieldIDsGolden, b.Bytes())
}

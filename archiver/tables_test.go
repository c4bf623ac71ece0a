package archiver

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

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
	// Tables returns copies: changing them cannot change the schema.
	tables[0].Columns[0].Name = "changed"
	if Tables()[0].Columns[0].Name == "changed" {
		t.Error("Tables() exposes the package's column slice")
	}
}

// TestParquetSchemaMatchesSpec reads the schema back from an encoded file
// and checks it against Tables(), column for column: same names in the same
// order, the Parquet type that the Glue type reads, and nothing Athena
// cannot read (unsigned integers, nanosecond timestamps).
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
			if fl.Optional() == tdef.cols[i].required {
				t.Errorf("%s.%s: optional=%v, required=%v", tb.Name, c.Name, fl.Optional(), tdef.cols[i].required)
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
					_, ok = ts.Unit.Value.(*format.MilliSeconds)
				}
			}
			if typ.Kind() != parquet.Kind(want) || !ok {
				t.Errorf("%s.%s: parquet %s (%v) does not hold Glue %s", tb.Name, c.Name, typ, lv, c.Type)
			}
		}
	}
}

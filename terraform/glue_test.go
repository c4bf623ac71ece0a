package terraform

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

const (
	// generatedGlue is written from the archiver's table definitions (the
	// ones its Parquet schema is built from) by `go test ./archiver -run
	// TestGlueSchema -update`, whose golden check keeps it equal to
	// archiver.Tables(); terraform/archive.tf builds the Glue tables from it.
	generatedGlue = "generated/glue_tables.json"
	// fixtureGlue has the same shape; the negative checks use it, and the
	// evaluation falls back to it if generatedGlue is missing (which
	// TestGlueFile reports).
	fixtureGlue = "testdata/glue_tables.json"
)

type glueColumn struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Comment string `json:"comment"`
}

type glueTable struct {
	Doc     string       `json:"doc"`
	Columns []glueColumn `json:"columns"`
}

// glueStorage is the archiver's storage layout as Glue needs it.
type glueStorage struct {
	InputFormat          string `json:"input_format"`
	OutputFormat         string `json:"output_format"`
	SerializationLibrary string `json:"serialization_library"`
	LocationDir          string `json:"location_dir"` // under the prefix, e.g. "_symlink/"
	DataDir              string `json:"data_dir"`     // under the prefix, "" = tables directly
	DateFormat           string `json:"date_format"`
}

type glueFile struct {
	Tables        map[string]glueTable `json:"tables"`
	PartitionKeys []glueColumn         `json:"partition_keys"`
	Storage       glueStorage          `json:"storage"`
}

// wantStorage is the layout issue 5 and the archiver agree on: Athena reads
// per-partition Hive symlink manifests pointing at Parquet files.
var wantStorage = glueStorage{
	InputFormat:          "org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat",
	OutputFormat:         "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
	SerializationLibrary: "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
	LocationDir:          "_symlink/",
	DataDir:              "",
	DateFormat:           "yyyy-MM-dd",
}

func readGlue(t *testing.T, path string) glueFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g glueFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// glueSource is the file the evaluation reads: the generated one when it
// exists.
func glueSource(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(generatedGlue); err == nil {
		return generatedGlue
	}
	t.Logf("%s does not exist yet (the archiver's generator writes it); checking against %s", generatedGlue, fixtureGlue)
	return fixtureGlue
}

var athenaIdent = regexp.MustCompile(`^[a-z][a-z0-9_]{0,127}$`)

// athenaPrimitive are the Hive DDL types Athena reads from Parquet, without
// parameters.
var athenaPrimitive = map[string]bool{
	"boolean": true, "tinyint": true, "smallint": true, "int": true, "integer": true, "bigint": true,
	"float": true, "double": true, "string": true, "binary": true, "date": true, "timestamp": true,
}

// athenaType checks a Glue column type against the types Athena reads from
// Parquet: the primitives, decimal(p[,s]), char(n), varchar(n), and
// array<T>, map<K,V> (K primitive) and struct<name:T,...> of those.
func athenaType(typ string) error {
	rest, err := parseAthenaType(typ)
	if err != nil {
		return err
	}
	if rest != "" {
		return fmt.Errorf("type %q: unexpected %q", typ, rest)
	}
	return nil
}

var (
	leadingIdent = regexp.MustCompile(`^[a-z][a-z0-9_]*`)
	paramsRE     = regexp.MustCompile(`^\((\d+)(?:,\s*(\d+))?\)`)
	fieldName    = regexp.MustCompile(`^[a-z_][a-z0-9_]*:`)
)

// parseAthenaType parses one type at the start of s and returns the rest.
func parseAthenaType(s string) (string, error) {
	name := leadingIdent.FindString(s)
	if name == "" {
		return "", fmt.Errorf("type %q: expected a type name", s)
	}
	rest := s[len(name):]
	switch name {
	case "decimal", "char", "varchar":
		m := paramsRE.FindStringSubmatch(rest)
		if m == nil {
			return "", fmt.Errorf("type %q: %s needs parameters", s, name)
		}
		a, _ := strconv.Atoi(m[1])
		switch {
		case name == "decimal" && (a < 1 || a > 38):
			return "", fmt.Errorf("type %q: decimal precision must be 1-38", s)
		case name == "decimal" && m[2] != "":
			if b, _ := strconv.Atoi(m[2]); b > a {
				return "", fmt.Errorf("type %q: decimal scale above precision", s)
			}
		case name != "decimal" && m[2] != "":
			return "", fmt.Errorf("type %q: %s takes one parameter", s, name)
		case name == "char" && (a < 1 || a > 255), name == "varchar" && (a < 1 || a > 65535):
			return "", fmt.Errorf("type %q: %s length out of range", s, name)
		}
		return rest[len(m[0]):], nil
	case "array", "map", "struct":
		if !strings.HasPrefix(rest, "<") {
			return "", fmt.Errorf("type %q: %s needs <...>", s, name)
		}
		rest = rest[1:]
		for i := 0; ; i++ {
			switch name {
			case "struct":
				f := fieldName.FindString(rest)
				if f == "" {
					return "", fmt.Errorf("type %q: struct field needs name:type", s)
				}
				rest = rest[len(f):]
			case "map":
				if i == 0 {
					k := leadingIdent.FindString(rest)
					if !athenaPrimitive[k] {
						return "", fmt.Errorf("type %q: map key must be a primitive type", s)
					}
				}
			}
			var err error
			if rest, err = parseAthenaType(rest); err != nil {
				return "", err
			}
			if strings.HasPrefix(rest, ">") {
				if name == "array" && i != 0 || name == "map" && i != 1 {
					return "", fmt.Errorf("type %q: %s has the wrong number of element types", s, name)
				}
				return rest[1:], nil
			}
			if !strings.HasPrefix(rest, ",") {
				return "", fmt.Errorf("type %q: expected ',' or '>'", s)
			}
			rest = rest[1:]
		}
	}
	if !athenaPrimitive[name] {
		return "", fmt.Errorf("type %q: %q is not a type Athena reads from Parquet", s, name)
	}
	return rest, nil
}

func TestAthenaType(t *testing.T) {
	good := []string{"string", "bigint", "int", "double", "boolean", "timestamp", "date", "decimal(10,2)", "decimal(38)", "varchar(20)", "char(3)",
		"array<string>", "map<string,bigint>", "struct<a:string,b:array<int>>", "array<struct<x:double>>"}
	bad := map[string]string{
		"uint64":               `"uint64" is not a type Athena reads from Parquet`,
		"String":               "expected a type name",
		"varchar":              "varchar needs parameters",
		"decimal(39,2)":        "decimal precision must be 1-38",
		"decimal(5,6)":         "decimal scale above precision",
		"array<string,int>":    "array has the wrong number of element types",
		"map<array<int>,int>":  "map key must be a primitive type",
		"struct<string>":       "struct field needs name:type",
		"string extra":         `unexpected " extra"`,
		"timestamp(3)":         `unexpected "(3)"`,
		"array<json>":          `"json" is not a type Athena reads from Parquet`,
		"map<string,bigint":    "expected ',' or '>'",
		"char(0)":              "char length out of range",
		"struct<a:string,b:>":  "expected a type name",
		"array<timestamp_tz>":  `"timestamp_tz" is not a type Athena reads from Parquet`,
		"":                     "expected a type name",
		"bigint;drop table x":  `unexpected ";drop table x"`,
		"varchar(10,2)":        "varchar takes one parameter",
		"map<string>":          "map has the wrong number of element types",
		"struct<A:int>":        "struct field needs name:type",
		"array<decimal(10,2)>": "",
	}
	for _, typ := range good {
		if err := athenaType(typ); err != nil {
			t.Errorf("athenaType(%q) = %v, want nil", typ, err)
		}
	}
	for typ, want := range bad {
		err := athenaType(typ)
		if want == "" {
			if err != nil {
				t.Errorf("athenaType(%q) = %v, want nil", typ, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("athenaType(%q) = %v, want an error containing %q", typ, err, want)
		}
	}
}

// checkGlueFile reports every problem with a glue_tables.json: column types
// Athena cannot read, identifiers Athena would need quoted, duplicates, and
// a partition key other than event_date string.
func checkGlueFile(g glueFile, path string) []string {
	var errs []string
	if len(g.Tables) == 0 {
		errs = append(errs, path+": no tables")
	}
	for _, name := range sortedMapKeys(g.Tables) {
		tb := g.Tables[name]
		if !athenaIdent.MatchString(name) {
			errs = append(errs, fmt.Sprintf("%s: table %q: not a plain Athena identifier ([a-z][a-z0-9_]*)", path, name))
		}
		if tb.Doc == "" || len(tb.Doc) > 2048 {
			errs = append(errs, fmt.Sprintf("%s: table %s: doc must be 1-2048 characters (Glue's table description), is %d", path, name, len(tb.Doc)))
		}
		if len(tb.Columns) == 0 {
			errs = append(errs, fmt.Sprintf("%s: table %s: no columns", path, name))
		}
		seen := map[string]bool{}
		for _, c := range tb.Columns {
			if !athenaIdent.MatchString(c.Name) {
				errs = append(errs, fmt.Sprintf("%s: table %s column %q: not a plain Athena identifier", path, name, c.Name))
			}
			if seen[c.Name] {
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: declared twice", path, name, c.Name))
			}
			seen[c.Name] = true
			if len(c.Comment) > 255 {
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: comment is %d characters; Glue takes at most 255", path, name, c.Name, len(c.Comment)))
			}
			if err := athenaType(c.Type); err != nil {
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: %v", path, name, c.Name, err))
			}
		}
		for _, pk := range g.PartitionKeys {
			if seen[pk.Name] {
				errs = append(errs, fmt.Sprintf("%s: table %s: partition key %s is also a column", path, name, pk.Name))
			}
		}
	}
	if want := []glueColumn{{Name: "event_date", Type: "string"}}; len(g.PartitionKeys) != 1 || g.PartitionKeys[0].Name != "event_date" || g.PartitionKeys[0].Type != "string" {
		errs = append(errs, fmt.Sprintf("%s: partition_keys %+v, want %+v (the archiver's Hive partition, projected as a date)", path, g.PartitionKeys, want))
	}
	if g.Storage != wantStorage {
		errs = append(errs, fmt.Sprintf("%s: storage %+v, want %+v (symlink manifests over Parquet)", path, g.Storage, wantStorage))
	}
	return errs
}

func sortedMapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestGlueFile(t *testing.T) {
	for _, path := range []string{fixtureGlue, generatedGlue} {
		t.Run(path, func(t *testing.T) {
			if _, err := os.Stat(path); err != nil && path == generatedGlue {
				t.Fatalf("terraform/%s is missing: archive.tf reads it. Regenerate it with `go test ./archiver -run TestGlueSchema -update`", path)
			}
			for _, e := range checkGlueFile(readGlue(t, path), path) {
				t.Error(e)
			}
		})
	}
	// The check catches a type Athena cannot read and a second partition key.
	g := readGlue(t, fixtureGlue)
	tb := g.Tables["messages"]
	tb.Columns = append(tb.Columns, glueColumn{Name: "size", Type: "uint64"}, glueColumn{Name: "status", Type: "string"})
	g.Tables["messages"] = tb
	g.PartitionKeys = append(g.PartitionKeys, glueColumn{Name: "hour", Type: "int"})
	g.Storage.InputFormat = "org.apache.hadoop.mapred.TextInputFormat"
	got := checkGlueFile(g, "x.json")
	want := []string{
		`x.json: table messages column size: type "uint64": "uint64" is not a type Athena reads from Parquet`,
		"x.json: table messages column status: declared twice",
		"x.json: partition_keys [{Name:event_date Type:string Comment:the event's UTC date, YYYY-MM-DD} {Name:hour Type:int Comment:}], want [{Name:event_date Type:string Comment:}] (the archiver's Hive partition, projected as a date)",
		"x.json: storage {InputFormat:org.apache.hadoop.mapred.TextInputFormat OutputFormat:org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat SerializationLibrary:org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe LocationDir:_symlink/ DataDir: DateFormat:yyyy-MM-dd}, want {InputFormat:org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat OutputFormat:org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat SerializationLibrary:org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe LocationDir:_symlink/ DataDir: DateFormat:yyyy-MM-dd} (symlink manifests over Parquet)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkGlueFile reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// exprSource is the source text of an expression.
func exprSource(files map[string][]byte, r hcl.Range) string {
	return string(files[r.Filename][r.Start.Byte:r.End.Byte])
}

// TestGlueTablesComeFromGeneratedJSON proves that archive.tf builds the Glue
// tables from the generated JSON, one table per entry, with dynamic
// columns copied field by field: so the Glue columns equal the archiver's
// Parquet columns by construction. Then it evaluates the tables and checks
// each against the JSON, plus the symlink input format and the partition
// projection settings.
func TestGlueTablesComeFromGeneratedJSON(t *testing.T) {
	files := readConfigFiles(t)
	cfg, err := parseConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	// Structure, from the source.
	glueLocal, ok := cfg.Locals["glue"]
	if !ok {
		t.Fatal("no local.glue")
	}
	if got, want := exprSource(files, glueLocal.Expr.Range()), `jsondecode(file("${path.module}/generated/glue_tables.json"))`; got != want {
		t.Errorf("local.glue = %s, want %s", got, want)
	}
	tables := cfg.find("resource", "aws_glue_catalog_table")
	if len(tables) != 1 {
		t.Fatalf("%d aws_glue_catalog_table resources, want 1 (for_each over the generated tables)", len(tables))
	}
	tb := tables[0]
	fe, ok := tb.Block.Body.Attributes["for_each"]
	if !ok || exprSource(files, fe.Expr.Range()) != "local.glue.tables" {
		t.Errorf("aws_glue_catalog_table.%s: for_each must be local.glue.tables", tb.Name)
	}
	var sd *hclsyntax.Block
	for _, b := range tb.Block.Body.Blocks {
		if b.Type == "storage_descriptor" {
			sd = b
		}
	}
	if sd == nil {
		t.Fatalf("aws_glue_catalog_table.%s: no storage_descriptor", tb.Name)
	}
	dynCols := 0
	for _, b := range sd.Body.Blocks {
		switch {
		case b.Type == "columns":
			t.Errorf("aws_glue_catalog_table.%s: a literal columns block (%s); columns must come from the generated JSON only", tb.Name, b.Range())
		case b.Type == "dynamic" && len(b.Labels) == 1 && b.Labels[0] == "columns":
			dynCols++
			if got := exprSource(files, b.Body.Attributes["for_each"].Expr.Range()); got != "each.value.columns" {
				t.Errorf("dynamic columns: for_each = %s, want each.value.columns", got)
			}
			for _, c := range b.Body.Blocks {
				if c.Type != "content" {
					continue
				}
				for _, f := range []string{"name", "type", "comment"} {
					a, ok := c.Body.Attributes[f]
					if got := ""; !ok || exprSource(files, a.Expr.Range()) != "columns.value."+f {
						if ok {
							got = exprSource(files, a.Expr.Range())
						}
						t.Errorf("dynamic columns: content.%s = %q, want columns.value.%s", f, got, f)
					}
				}
				if len(c.Body.Attributes) != 3 {
					t.Errorf("dynamic columns: content has %d arguments, want name, type, comment", len(c.Body.Attributes))
				}
			}
		}
	}
	if dynCols != 1 {
		t.Errorf("aws_glue_catalog_table.%s: %d dynamic \"columns\" blocks, want 1", tb.Name, dynCols)
	}

	// Values, evaluated.
	src := glueSource(t)
	g := readGlue(t, src)
	_, ev := loadEvaluated(t, evalOptions{Files: map[string]string{generatedGlue: src}})
	bucket := getStr(ev.resources["aws_s3_bucket"]["archive"], "bucket")
	prefix := ev.vars["archive_prefix"].AsString()
	if bucket != "streamfold-dev-archive" || prefix != "archive" {
		t.Fatalf("archive bucket %q prefix %q, want streamfold-dev-archive and archive (schema.Naming.BucketName, archiver default)", bucket, prefix)
	}
	insts := ev.instancesOf("resource", "aws_glue_catalog_table")
	var names []string
	for _, in := range insts {
		names = append(names, in.Key)
	}
	if want := sortedMapKeys(g.Tables); !reflect.DeepEqual(names, want) {
		t.Fatalf("Glue tables %v, want %v (the tables of %s)", names, want, src)
	}
	for _, in := range insts {
		want := g.Tables[in.Key]
		root := fmt.Sprintf("s3://%s/%s/_symlink/%s/", bucket, prefix, in.Key)
		checks := map[string]string{
			"name":          in.Key,
			"database_name": getStr(ev.resources["aws_glue_catalog_database"]["archive"], "name"),
			"description":   want.Doc,
			"table_type":    "EXTERNAL_TABLE",
		}
		for k, v := range checks {
			if got := getStr(in.Obj, k); got != v {
				t.Errorf("%s: %s = %q, want %q", in.Addr, k, got, v)
			}
		}
		sds := blocks(in.Obj, "storage_descriptor")
		if len(sds) != 1 {
			t.Fatalf("%s: %d storage_descriptor blocks", in.Addr, len(sds))
		}
		sdv := sds[0]
		sdChecks := map[string]string{
			"location":      root,
			"input_format":  "org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat",
			"output_format": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
		}
		for k, v := range sdChecks {
			if got := getStr(sdv, k); got != v {
				t.Errorf("%s: storage_descriptor.%s = %q, want %q", in.Addr, k, got, v)
			}
		}
		if serde := blocks(sdv, "ser_de_info"); len(serde) != 1 || getStr(serde[0], "serialization_library") != "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe" {
			t.Errorf("%s: ser_de_info must use ParquetHiveSerDe", in.Addr)
		}
		var cols []glueColumn
		for _, c := range blocks(sdv, "columns") {
			cols = append(cols, glueColumn{Name: getStr(c, "name"), Type: getStr(c, "type"), Comment: getStr(c, "comment")})
		}
		if !reflect.DeepEqual(cols, want.Columns) {
			t.Errorf("%s: columns\n  %+v\nwant (from %s)\n  %+v", in.Addr, cols, src, want.Columns)
		}
		var pks []glueColumn
		for _, c := range blocks(in.Obj, "partition_keys") {
			pks = append(pks, glueColumn{Name: getStr(c, "name"), Type: getStr(c, "type"), Comment: getStr(c, "comment")})
		}
		if !reflect.DeepEqual(pks, g.PartitionKeys) {
			t.Errorf("%s: partition_keys %+v, want %+v", in.Addr, pks, g.PartitionKeys)
		}
		params := attr(in.Obj, "parameters")
		wantParams := map[string]string{
			"EXTERNAL":                            "TRUE",
			"projection.enabled":                  "true",
			"projection.event_date.type":          "date",
			"projection.event_date.format":        "yyyy-MM-dd",
			"projection.event_date.range":         "2000-01-01,NOW+1YEARS",
			"projection.event_date.interval":      "1",
			"projection.event_date.interval.unit": "DAYS",
			"storage.location.template":           root + "event_date=${event_date}/",
		}
		gotParams := map[string]string{}
		for k, v := range params.AsValueMap() {
			gotParams[k] = v.AsString()
		}
		if !reflect.DeepEqual(gotParams, wantParams) {
			t.Errorf("%s: parameters\n  %v\nwant\n  %v", in.Addr, gotParams, wantParams)
		}
	}
}

// TestNamedQueries: one named query per archiver/queries/*.sql, run in the
// archive's database and workgroup, with the file's text.
func TestNamedQueries(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{})
	sqls, err := globNames("../archiver/queries", "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(sqls) == 0 {
		t.Log("archiver/queries has no *.sql yet: no named queries")
	}
	var got []string
	db := getStr(ev.resources["aws_glue_catalog_database"]["archive"], "name")
	wg := getStr(ev.resources["aws_athena_workgroup"]["archive"], "id")
	for _, in := range ev.instancesOf("resource", "aws_athena_named_query") {
		got = append(got, in.Key)
		text, err := os.ReadFile("../archiver/queries/" + in.Key)
		if err != nil {
			t.Fatal(err)
		}
		if getStr(in.Obj, "query") != string(text) || getStr(in.Obj, "database") != db || getStr(in.Obj, "workgroup") != wg ||
			getStr(in.Obj, "name") != strings.TrimSuffix(in.Key, ".sql") {
			t.Errorf("%s: query/database/workgroup/name wrong: database %q workgroup %q name %q", in.Addr, getStr(in.Obj, "database"), getStr(in.Obj, "workgroup"), getStr(in.Obj, "name"))
		}
	}
	if !reflect.DeepEqual(got, sqls) && !(len(got) == 0 && len(sqls) == 0) {
		t.Errorf("named queries %v, want one per archiver/queries/*.sql %v", got, sqls)
	}
	if db != "streamfold_dev_archive" {
		t.Errorf("Glue database %q, want streamfold_dev_archive (Athena identifiers: no '-')", db)
	}
}

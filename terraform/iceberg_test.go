package terraform

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

const (
	// generatedTables is written from the archiver's table definitions (the
	// ones its Iceberg schemas are built from) by `go test ./archiver -run
	// TestTablesJSON -update`, whose golden check keeps it equal to
	// archiver.Tables(); terraform/archive.tf reads it for the tables'
	// names (IAM, lifecycle rules, the archive_tables output).
	generatedTables = "generated/iceberg_tables.json"
	// fixtureTables has the same shape; the negative checks use it, and the
	// evaluation falls back to it if generatedTables is missing (which
	// TestTablesFile reports).
	fixtureTables = "testdata/iceberg_tables.json"
)

type icebergColumn struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	AthenaType string `json:"athena_type"`
	Required   bool   `json:"required"`
	Comment    string `json:"comment,omitempty"`
}

type icebergTable struct {
	Doc      string          `json:"doc"`
	Location string          `json:"location"`
	Columns  []icebergColumn `json:"columns"`
}

type tablesFile struct {
	Format        string                  `json:"format"`
	FormatVersion int                     `json:"format_version"`
	Partition     string                  `json:"partition"`
	Tables        map[string]icebergTable `json:"tables"`
	Properties    map[string]string       `json:"properties"`
}

func readTables(t *testing.T, path string) tablesFile {
	t.Helper()
	g, err := decodeTables(path)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func decodeTables(path string) (tablesFile, error) {
	var g tablesFile
	b, err := os.ReadFile(path)
	if err != nil {
		return g, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return g, fmt.Errorf("%s: %v", path, err)
	}
	return g, nil
}

// tablesSourcePath is the file the evaluation reads: the generated one when
// it exists, else the fixture.
func tablesSourcePath() string {
	if _, err := os.Stat(generatedTables); err == nil {
		return generatedTables
	}
	return fixtureTables
}

// tablesSource is tablesSourcePath, saying when the fixture stands in.
func tablesSource(t *testing.T) string {
	t.Helper()
	p := tablesSourcePath()
	if p != generatedTables {
		t.Logf("%s does not exist yet (the archiver's generator writes it); checking against %s", generatedTables, fixtureTables)
	}
	return p
}

// archiveTableNames are the tables of the file the evaluation reads, sorted.
func archiveTableNames() []string {
	g, err := decodeTables(tablesSourcePath())
	if err != nil {
		panic(err)
	}
	return sortedMapKeys(g.Tables)
}

var athenaIdent = regexp.MustCompile(`^[a-z][a-z0-9_]{0,127}$`)

// icebergAthena maps each Iceberg primitive type to the type Athena shows
// for it in an Iceberg table (what the generator writes as athena_type).
var icebergAthena = map[string]string{
	"boolean":     "boolean",
	"int":         "int",
	"long":        "bigint",
	"float":       "float",
	"double":      "double",
	"date":        "date",
	"string":      "string",
	"binary":      "varbinary",
	"timestamp":   "timestamp(6)",
	"timestamptz": "timestamp(6) with time zone",
}

var decimalRE = regexp.MustCompile(`^decimal\((\d+),\s*(\d+)\)$`)

// athenaTypeOf is the Athena type of an Iceberg type, or an error for a type
// the archive's tables do not use (nested types included: the archive keeps
// nested data as JSON strings).
func athenaTypeOf(iceberg string) (string, error) {
	if a, ok := icebergAthena[iceberg]; ok {
		return a, nil
	}
	if m := decimalRE.FindStringSubmatch(iceberg); m != nil {
		return "decimal(" + m[1] + "," + m[2] + ")", nil
	}
	return "", fmt.Errorf("%q is not an Iceberg primitive type", iceberg)
}

func TestAthenaTypeOf(t *testing.T) {
	good := map[string]string{"long": "bigint", "timestamptz": "timestamp(6) with time zone", "string": "string", "decimal(10, 2)": "decimal(10,2)"}
	for in, want := range good {
		if got, err := athenaTypeOf(in); err != nil || got != want {
			t.Errorf("athenaTypeOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"bigint", "list<string>", "", "uint64", "timestamp_ns"} {
		if got, err := athenaTypeOf(in); err == nil {
			t.Errorf("athenaTypeOf(%q) = %q, want an error", in, got)
		}
	}
}

// checkTablesFile reports every problem with an iceberg_tables.json: a
// format other than Iceberg v2 partitioned by day(event_time), identifiers
// Athena would need quoted, field ids that are not 1..n, duplicates, types
// that are not Iceberg primitives or whose Athena type is not the one
// Athena shows, comments longer than Glue keeps, and a table without the
// partition source (a required timestamptz event_time).
func checkTablesFile(g tablesFile, path string) []string {
	var errs []string
	if g.Format != "iceberg" || g.FormatVersion != 2 || g.Partition != "day(event_time)" {
		errs = append(errs, fmt.Sprintf("%s: format %q version %d partition %q, want iceberg 2 day(event_time)", path, g.Format, g.FormatVersion, g.Partition))
	}
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
		if tb.Location != name+"/" {
			errs = append(errs, fmt.Sprintf("%s: table %s: location %q, want %q (under the archive prefix; the lifecycle rules move %sdata/)", path, name, tb.Location, name+"/", name+"/"))
		}
		if len(tb.Columns) == 0 {
			errs = append(errs, fmt.Sprintf("%s: table %s: no columns", path, name))
		}
		seen := map[string]bool{}
		partitionSource := false
		for i, c := range tb.Columns {
			if c.ID != i+1 {
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: field id %d, want %d (ids 1..n in order)", path, name, c.Name, c.ID, i+1))
			}
			if !athenaIdent.MatchString(c.Name) {
				errs = append(errs, fmt.Sprintf("%s: table %s column %q: not a plain Athena identifier", path, name, c.Name))
			}
			if seen[c.Name] {
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: declared twice", path, name, c.Name))
			}
			seen[c.Name] = true
			if len(c.Comment) > 255 {
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: comment is %d characters; Glue keeps at most 255", path, name, c.Name, len(c.Comment)))
			}
			want, err := athenaTypeOf(c.Type)
			switch {
			case err != nil:
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: %v", path, name, c.Name, err))
			case c.AthenaType != want:
				errs = append(errs, fmt.Sprintf("%s: table %s column %s: athena_type %q, but Athena shows Iceberg %s as %q", path, name, c.Name, c.AthenaType, c.Type, want))
			}
			if c.Name == "event_time" {
				partitionSource = c.Type == "timestamptz" && c.Required
			}
		}
		if !partitionSource {
			errs = append(errs, fmt.Sprintf("%s: table %s: no required timestamptz event_time, the source of the partition day(event_time)", path, name))
		}
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

func TestTablesFile(t *testing.T) {
	for _, path := range []string{fixtureTables, generatedTables} {
		t.Run(path, func(t *testing.T) {
			if _, err := os.Stat(path); err != nil && path == generatedTables {
				t.Fatalf("terraform/%s is missing: archive.tf reads it. Regenerate it with `go test ./archiver -run TestTablesJSON -update`", path)
			}
			for _, e := range checkTablesFile(readTables(t, path), path) {
				t.Error(e)
			}
		})
	}
	// The check catches a type that is not Iceberg's, a wrong Athena type,
	// a duplicate, a gap in the field ids, a moved location, a lost
	// partition source and another partition spec.
	g := readTables(t, fixtureTables)
	tb := g.Tables["messages"]
	n := len(tb.Columns)
	tb.Columns = append(tb.Columns,
		icebergColumn{ID: n + 1, Name: "size", Type: "uint64", AthenaType: "bigint"},
		icebergColumn{ID: n + 3, Name: "subject", Type: "long", AthenaType: "long"})
	tb.Location = "messages/v2/"
	g.Tables["messages"] = tb
	jobs := g.Tables["github_jobs"]
	for i := range jobs.Columns {
		if jobs.Columns[i].Name == "event_time" {
			jobs.Columns[i].Required = false
		}
	}
	g.Tables["github_jobs"] = jobs
	g.Partition = "hour(event_time)"
	got := checkTablesFile(g, "x.json")
	want := []string{
		`x.json: format "iceberg" version 2 partition "hour(event_time)", want iceberg 2 day(event_time)`,
		"x.json: table github_jobs: no required timestamptz event_time, the source of the partition day(event_time)",
		`x.json: table messages: location "messages/v2/", want "messages/" (under the archive prefix; the lifecycle rules move messages/data/)`,
		`x.json: table messages column size: "uint64" is not an Iceberg primitive type`,
		fmt.Sprintf("x.json: table messages column subject: field id %d, want %d (ids 1..n in order)", n+3, n+2),
		"x.json: table messages column subject: declared twice",
		`x.json: table messages column subject: athena_type "long", but Athena shows Iceberg long as "bigint"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkTablesFile reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// tablesNotManaged are the resources that would declare the archive's tables
// in Terraform, which the archiver owns (archive.tf says why).
var tablesNotManaged = []string{
	"aws_glue_catalog_table",
	"aws_glue_catalog_table_optimizer",
	"aws_s3tables_table_bucket",
	"aws_s3tables_namespace",
	"aws_s3tables_table",
}

// TestArchiveTablesFromGeneratedJSON: Terraform declares no archive table
// (the archiver creates and evolves them: Terraform cannot declare the
// partition spec), reads the generated JSON for their names, and names
// every table of it where the tables are named: the archiver's Glue table
// ARNs, the lifecycle rules (TestArchiveBucket) and the archive_tables
// output. The archiver's environment names the Glue catalog and database.
func TestArchiveTablesFromGeneratedJSON(t *testing.T) {
	files := readConfigFiles(t)
	cfg, err := parseConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range tablesNotManaged {
		for _, b := range cfg.find("resource", typ) {
			t.Errorf("%s (%s): the archive's tables are created and evolved by the archiver, not Terraform (no partition spec day(event_time) in Terraform; archive.tf)", b.Addr(), b.File)
		}
	}
	for name, src := range files {
		if strings.Contains(string(src), "glue_tables.json") {
			t.Errorf("%s reads glue_tables.json, which no longer exists (the tables are in %s)", name, generatedTables)
		}
	}
	loc, ok := cfg.Locals["iceberg"]
	if !ok {
		t.Fatal("no local.iceberg")
	}
	r := loc.Expr.Range()
	if got, want := string(files[r.Filename][r.Start.Byte:r.End.Byte]), `jsondecode(file("${path.module}/generated/iceberg_tables.json"))`; got != want {
		t.Errorf("local.iceberg = %s, want %s", got, want)
	}

	src := tablesSource(t)
	g := readTables(t, src)
	names := sortedMapKeys(g.Tables)
	_, ev := loadEvaluated(t, evalOptions{Files: map[string]string{generatedTables: src}})
	db := getStr(ev.resources["aws_glue_catalog_database"]["archive"], "name")
	if db != "streamfold_dev_archive" {
		t.Errorf("Glue database %q, want streamfold_dev_archive (Athena identifiers: no '-')", db)
	}

	var wantARNs []string
	for _, n := range names {
		wantARNs = append(wantARNs, "arn:aws:glue:eu-west-1:123456789012:table/"+db+"/"+n)
	}
	gotARNs, err := stringList(ev.locals["glue_table_arns"])
	if err != nil || !reflect.DeepEqual(gotARNs, wantARNs) {
		t.Errorf("local.glue_table_arns = %v (%v), want %v (one per table of %s)", gotARNs, err, wantARNs, src)
	}

	// The output, evaluated here (the evaluator evaluates no outputs).
	var out cty.Value
	for _, b := range cfg.find("output", "") {
		if b.Name != "archive_tables" {
			continue
		}
		v, diags := b.Block.Body.Attributes["value"].Expr.Value(ev.ctx(nil))
		if diags.HasErrors() {
			t.Fatalf("output archive_tables: %v", diags)
		}
		out = v
	}
	if out == cty.NilVal {
		t.Fatal("no output archive_tables")
	}
	got := map[string]string{}
	for k, v := range out.AsValueMap() {
		m := v.AsValueMap()
		got[k] = m["athena"].AsString() + " " + m["location"].AsString()
	}
	want := map[string]string{}
	for _, n := range names {
		want[n] = fmt.Sprintf("%s.%s s3://streamfold-dev-archive/archive/%s/", db, n, n)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("output archive_tables = %v, want %v", got, want)
	}

	env := attr(blocks(ev.resources["aws_lambda_function"]["function"].GetAttr("archiver"), "environment")[0], "variables").AsValueMap()
	if c, ns := env["ARCHIVE_CATALOG"], env["ARCHIVE_NAMESPACE"]; c == cty.NilVal || ns == cty.NilVal || c.AsString() != "glue" || ns.AsString() != db {
		t.Errorf("archiver ARCHIVE_CATALOG %v ARCHIVE_NAMESPACE %v, want glue and %s (the Glue Data Catalog, the archive's database)", c, ns, db)
	}

	// Athena engine version 3 reads Iceberg tables.
	wg := ev.resources["aws_athena_workgroup"]["archive"]
	engine := ""
	for _, c := range blocks(wg, "configuration") {
		for _, e := range blocks(c, "engine_version") {
			engine = getStr(e, "selected_engine_version")
		}
	}
	if engine != "Athena engine version 3" {
		t.Errorf("Athena workgroup engine %q, want \"Athena engine version 3\" (Iceberg tables)", engine)
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
}

package terraform

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/streamfold/streamfold/schema"
)

// tfIndex is a global_secondary_index block as written in Terraform.
type tfIndex struct {
	Name       string
	Hash       []string // key_schema HASH attribute names, in order
	Range      []string // key_schema RANGE attribute names, in order
	Projection string
}

// tfTable is an aws_dynamodb_table resource, with the arguments that are
// literals evaluated and the rest kept as source text.
type tfTable struct {
	Logical     string // suffix of name = "${local.name}-<logical>"
	Resource    string // resource label, e.g. "table"
	File        string // e.g. "terraform/main.tf"
	Hash        string
	Range       string
	Attrs       map[string]string // attribute name -> type, in block order
	AttrOrder   []string
	Indexes     []tfIndex
	TTLAttr     string
	TTLEnabled  bool
	HasTTL      bool
	StreamOn    bool
	StreamView  string
	PITR        string // "local.pitr_enabled", "true", "false" or "" (no block)
	BillingMode string
	SSE         bool
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func keyNames(ks []schema.KeyAttr) []string {
	out := []string{}
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

func names(ss []string) string { return "[" + strings.Join(ss, " ") + "]" }

// compare reports every difference between the schema specs and the
// Terraform tables; each message names both sides.
func compare(specs []schema.Table, tf map[string]*tfTable) []string {
	var errs []string
	seen := map[string]bool{}
	for _, sp := range specs {
		seen[sp.Logical] = true
		t, ok := tf[sp.Logical]
		if !ok {
			errs = append(errs, fmt.Sprintf(`table %s: schema.Tables() has it, terraform/*.tf has no aws_dynamodb_table named "${local.name}-%s"`, sp.Logical, sp.Logical))
			continue
		}
		fail := func(format string, a ...any) {
			errs = append(errs, fmt.Sprintf("table %s", sp.Logical)+fmt.Sprintf(format, a...))
		}
		f := t.File
		if t.Hash != sp.Hash.Name {
			fail(": schema.Tables() says hash_key %s, %s says hash_key %s", sp.Hash.Name, f, orNone(t.Hash))
		}
		wantRange := ""
		if sp.Range != nil {
			wantRange = sp.Range.Name
		}
		if t.Range != wantRange {
			fail(": schema.Tables() says range_key %s, %s says range_key %s", orNone(wantRange), f, orNone(t.Range))
		}
		// Attribute types: every key attribute of the table and its indexes.
		want := map[string]schema.ScalarType{}
		var order []string
		add := func(k schema.KeyAttr) {
			if _, ok := want[k.Name]; !ok {
				order = append(order, k.Name)
			}
			want[k.Name] = k.Type
		}
		add(sp.Hash)
		if sp.Range != nil {
			add(*sp.Range)
		}
		for _, ix := range sp.Indexes {
			for _, k := range ix.Hash {
				add(k)
			}
			for _, k := range ix.Range {
				add(k)
			}
		}
		for _, n := range order {
			if got, ok := t.Attrs[n]; !ok || got != string(want[n]) {
				fail(" attribute %s: schema.Tables() says %s, %s says %s", n, want[n], f, orNone(got))
			}
		}
		for _, n := range t.AttrOrder {
			if _, ok := want[n]; !ok {
				fail(" attribute %s: schema.Tables() has no key attribute %s, %s declares it as %s", n, n, f, t.Attrs[n])
			}
		}
		// Indexes by name, with ordered hash and range lists.
		tfIx := map[string]tfIndex{}
		for _, ix := range t.Indexes {
			tfIx[ix.Name] = ix
		}
		specIx := map[string]bool{}
		for _, ix := range sp.Indexes {
			specIx[ix.Name] = true
			got, ok := tfIx[ix.Name]
			if !ok {
				fail(" index %s: schema.Tables() has it, %s has no global_secondary_index named %s", ix.Name, f, ix.Name)
				continue
			}
			if wh, gh := names(keyNames(ix.Hash)), names(got.Hash); wh != gh {
				fail(" index %s: schema.Tables() says hash %s, %s says hash %s", ix.Name, wh, f, gh)
			}
			if wr, gr := names(keyNames(ix.Range)), names(got.Range); wr != gr {
				fail(" index %s: schema.Tables() says range %s, %s says range %s", ix.Name, wr, f, gr)
			}
		}
		for _, ix := range t.Indexes {
			if !specIx[ix.Name] {
				fail(" index %s: schema.Tables() has no such index, %s declares global_secondary_index %s", ix.Name, f, ix.Name)
			}
		}
		// TTL.
		wantTTL := "off"
		if sp.TTLAttribute != "" {
			wantTTL = fmt.Sprintf("on (attribute %s)", sp.TTLAttribute)
		}
		gotTTL := "off"
		if t.HasTTL && t.TTLEnabled {
			gotTTL = fmt.Sprintf("on (attribute %s)", orNone(t.TTLAttr))
		} else if t.HasTTL && t.TTLAttr != "" {
			gotTTL = fmt.Sprintf("off (attribute %s, enabled = false)", t.TTLAttr)
		}
		if wantTTL != gotTTL {
			fail(": schema.Tables() says ttl %s, %s says ttl %s", wantTTL, f, gotTTL)
		}
		// Stream.
		wantStream := "off"
		if sp.StreamView != "" {
			wantStream = string(sp.StreamView)
		}
		gotStream := "off"
		if t.StreamOn {
			gotStream = orNone(t.StreamView)
		} else if t.StreamView != "" {
			gotStream = "off (stream_view_type " + t.StreamView + " with stream_enabled unset or false)"
		}
		if wantStream != gotStream {
			fail(": schema.Tables() says stream %s, %s says stream %s", wantStream, f, gotStream)
		}
		// PITR: on in stage/prod (local.pitr_enabled) where the spec says so.
		wantPITR := "false"
		if sp.PITR {
			wantPITR = "local.pitr_enabled"
		}
		if t.PITR != wantPITR {
			fail(": schema.Tables() says point_in_time_recovery.enabled = %s, %s says %s", wantPITR, f, orNone(t.PITR))
		}
	}
	var extra []string
	for logical := range tf {
		if !seen[logical] {
			extra = append(extra, logical)
		}
	}
	sort.Strings(extra)
	for _, logical := range extra {
		t := tf[logical]
		errs = append(errs, fmt.Sprintf("table %s: schema.Tables() has no such table, %s declares it", logical, t.File))
	}
	return errs
}

// conventions reports Terraform-only rules that no schema field covers.
func conventions(tf map[string]*tfTable) []string {
	var errs []string
	logicals := make([]string, 0, len(tf))
	for l := range tf {
		logicals = append(logicals, l)
	}
	sort.Strings(logicals)
	for _, l := range logicals {
		t := tf[l]
		if t.BillingMode != "PAY_PER_REQUEST" {
			errs = append(errs, fmt.Sprintf("table %s: %s says billing_mode %s, want PAY_PER_REQUEST", l, t.File, orNone(t.BillingMode)))
		}
		if !t.SSE {
			errs = append(errs, fmt.Sprintf("table %s: %s does not set server_side_encryption { enabled = true }", l, t.File))
		}
		for _, ix := range t.Indexes {
			if ix.Projection != "ALL" {
				errs = append(errs, fmt.Sprintf("table %s index %s: %s says projection_type %s, want ALL", l, ix.Name, t.File, orNone(ix.Projection)))
			}
		}
	}
	return errs
}

// generatedDynamoDB is the DynamoDB tables' file Terraform reads
// (local.dynamodb in main.tf), written by schema.TerraformTablesGenerator.
const generatedDynamoDB = "generated/dynamodb_tables.json"

// dynamoDBFileKey is the key under which a files map (runPlan's input)
// carries a replacement of generatedDynamoDB; without it runPlan copies the
// file on disk.
const dynamoDBFileKey = "terraform/" + generatedDynamoDB

// withTables returns a copy of files whose generatedDynamoDB is the one on
// disk changed by mutate (the gsi_shards_off tables, which the plans use).
func withTables(t *testing.T, files map[string][]byte, mutate func(map[string]schema.TerraformTable)) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(generatedDynamoDB)
	if err != nil {
		t.Fatal(err)
	}
	var f schema.TerraformTablesFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	mutate(f.GSIShardsOff)
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(out)+"\n" == string(b) {
		t.Fatal("mutation changed nothing")
	}
	m := maps.Clone(files)
	m[dynamoDBFileKey] = out
	return m
}

// indexOf returns a pointer to the index name of a generated table.
func indexOf(t *testing.T, tb schema.TerraformTable, name string) *schema.TerraformIndex {
	t.Helper()
	for i := range tb.Indexes {
		if tb.Indexes[i].Name == name {
			return &tb.Indexes[i]
		}
	}
	t.Fatalf("no index %s", name)
	return nil
}

// withoutKey removes attribute's key_schema element from an index.
func withoutKey(ix *schema.TerraformIndex, attribute string) {
	var ks []schema.TerraformKeySchema
	for _, k := range ix.KeySchema {
		if k.AttributeName != attribute {
			ks = append(ks, k)
		}
	}
	ix.KeySchema = ks
}

// TestTablesFromGeneratedJSON: generated/dynamodb_tables.json is what
// schema.TerraformTablesJSON renders now (not stale), and main.tf declares
// the tables from it: one aws_dynamodb_table resource, for_each over
// local.dynamodb_tables, which decodes that file, its arguments and nested
// blocks taken from each.value; no other .tf file declares a table.
func TestTablesFromGeneratedJSON(t *testing.T) {
	want, err := schema.TerraformTablesJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(generatedDynamoDB)
	if err != nil {
		t.Fatalf("%v (run %s)", err, schema.TerraformTablesGenerator)
	}
	if string(got) != string(want) {
		t.Errorf("terraform/%s is stale: it differs from schema.TablesFor; run %s and review the diff", generatedDynamoDB, schema.TerraformTablesGenerator)
	}
	files := readConfigFiles(t)
	cfg, err := parseConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	src := func(e hclsyntax.Expression) string {
		r := e.Range()
		return string(files[r.Filename][r.Start.Byte:r.End.Byte])
	}
	for _, l := range []struct{ name, want string }{
		{"dynamodb", `jsondecode(file("${path.module}/generated/dynamodb_tables.json"))`},
		{"dynamodb_tables", `local.dynamodb[local.gsi_sharded ? "gsi_shards_on" : "gsi_shards_off"]`},
	} {
		a, ok := cfg.Locals[l.name]
		if !ok {
			t.Errorf("no local.%s", l.name)
			continue
		}
		if got := src(a.Expr); got != l.want {
			t.Errorf("local.%s = %s, want %s", l.name, got, l.want)
		}
	}
	tables := cfg.find("resource", "aws_dynamodb_table")
	if len(tables) != 1 {
		var addrs []string
		for _, b := range tables {
			addrs = append(addrs, b.Addr()+" ("+b.File+")")
		}
		t.Fatalf("want one aws_dynamodb_table resource, for_each over local.dynamodb_tables; got %d: %v", len(tables), addrs)
	}
	body := tables[0].Block.Body
	if fe, ok := body.Attributes["for_each"]; !ok || src(fe.Expr) != "local.dynamodb_tables" {
		t.Errorf("%s: for_each must be local.dynamodb_tables (the generated file)", tables[0].Addr())
	}
	// Every key, index, TTL and stream argument comes from each.value.
	for _, n := range []string{"hash_key", "range_key", "stream_view_type"} {
		if a, ok := body.Attributes[n]; !ok || src(a.Expr) != "each.value."+n {
			t.Errorf("%s: %s must be each.value.%s", tables[0].Addr(), n, n)
		}
	}
	dyn := map[string]string{}
	for _, nb := range body.Blocks {
		if nb.Type == "dynamic" && len(nb.Labels) == 1 {
			dyn[nb.Labels[0]] = src(nb.Body.Attributes["for_each"].Expr)
		} else if nb.Type == "attribute" || nb.Type == "global_secondary_index" || nb.Type == "ttl" {
			t.Errorf("%s: a literal %s block; the tables' %ss come from the generated file", tables[0].Addr(), nb.Type, nb.Type)
		}
	}
	for label, fe := range map[string]string{
		"attribute":              "each.value.attributes",
		"global_secondary_index": "each.value.global_secondary_indexes",
		"ttl":                    "each.value.ttl_attribute[*]",
	} {
		if dyn[label] != fe {
			t.Errorf("%s: dynamic %q for_each = %q, want %s", tables[0].Addr(), label, dyn[label], fe)
		}
	}
	// The evaluated tables are the file's, one instance per logical name.
	_, ev := loadEvaluated(t, evalOptions{})
	var keys []string
	for _, in := range ev.instancesOf("resource", "aws_dynamodb_table") {
		keys = append(keys, in.Key)
		if n := getStr(in.Obj, "name"); n != "streamfold-dev-"+in.Key {
			t.Errorf("%s: name %q, want streamfold-dev-%s", in.Addr, n, in.Key)
		}
	}
	var specs []string
	for _, sp := range schema.Tables() {
		specs = append(specs, sp.Logical)
	}
	sort.Strings(specs)
	if strings.Join(keys, " ") != strings.Join(specs, " ") {
		t.Errorf("evaluated tables %v, schema.Tables() %v", keys, specs)
	}
}

// TestMovedTables: every table address before the tables were generated
// (one resource per table, named like its logical name with '_') is moved
// to its instance of aws_dynamodb_table.table, so an existing deployment's
// tables are kept, not destroyed and re-created.
func TestMovedTables(t *testing.T) {
	cfg, err := parseConfig(readConfigFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{}
	for _, b := range cfg.find("moved", "") {
		r := func(n string) string {
			a, ok := b.Block.Body.Attributes[n]
			if !ok {
				return ""
			}
			tr, diags := hcl.AbsTraversalForExpr(a.Expr)
			if diags.HasErrors() {
				return ""
			}
			var s strings.Builder
			for i, st := range tr {
				switch st := st.(type) {
				case hcl.TraverseRoot:
					s.WriteString(st.Name)
				case hcl.TraverseAttr:
					s.WriteString("." + st.Name)
				case hcl.TraverseIndex:
					s.WriteString(fmt.Sprintf("[%q]", st.Key.AsString()))
				}
				_ = i
			}
			return s.String()
		}
		moved[r("from")] = r("to")
	}
	for _, sp := range schema.Tables() {
		from := "aws_dynamodb_table." + strings.ReplaceAll(sp.Logical, "-", "_")
		if got, want := moved[from], fmt.Sprintf("aws_dynamodb_table.table[%q]", sp.Logical); got != want {
			t.Errorf("moved from %s: to %q, want %s", from, got, want)
		}
	}
}

// TestDriftIsCaught changes the generated tables (and main.tf), plans them
// with the real provider and expects the exact report of compare (or the
// provider's own refusal, for a key attribute left without any index).
func TestDriftIsCaught(t *testing.T) {
	files := readConfigFiles(t)
	main := string(files["terraform/main.tf"])
	tfReplace := func(t *testing.T, from, to string) map[string][]byte {
		t.Helper()
		if !strings.Contains(main, from) {
			t.Fatalf("main.tf has no %q", from)
		}
		m := maps.Clone(files)
		m["terraform/main.tf"] = []byte(strings.Replace(main, from, to, 1))
		return m
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T) map[string][]byte
		want   []string // compare's report
		// wantErr, instead: the provider refuses the configuration with
		// this text (validate or plan).
		wantErr string
	}{
		{
			name: "GSI hash attribute removed",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) { withoutKey(indexOf(t, m["workflow-jobs"], "GSI1"), "status") })
			},
			wantErr: `Unused attributes: ["status"]`,
		},
		{
			name: "GSI range attribute removed",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) { withoutKey(indexOf(t, m["workflows"], "GSI2"), "sortValue") })
			},
			wantErr: `Unused attributes: ["sortValue"]`,
		},
		{
			name: "GSI range attribute replaced",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) {
					ix := indexOf(t, m["workflows"], "GSI2")
					withoutKey(ix, "sortValue")
					ix.KeySchema = append(ix.KeySchema, schema.TerraformKeySchema{AttributeName: "sortValue", KeyType: "HASH"})
				})
			},
			wantErr: "must be before",
		},
		{
			name: "attribute type changed",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) {
					for i, a := range m["workflow-jobs"].Attributes {
						if a.Name == "run_id" {
							m["workflow-jobs"].Attributes[i].Type = "S"
						}
					}
				})
			},
			want: []string{`table workflow-jobs attribute run_id: schema.Tables() says N, aws_dynamodb_table.table["workflow-jobs"] (plan) says S`},
		},
		{
			name: "TTL removed",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) {
					tb := m["messages"]
					tb.TTLAttribute = nil
					m["messages"] = tb
				})
			},
			want: []string{`table messages: schema.Tables() says ttl on (attribute ttl), aws_dynamodb_table.table["messages"] (plan) says ttl off`},
		},
		{
			name: "stream turned off",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) {
					tb := m["events"]
					tb.StreamViewType = nil
					m["events"] = tb
				})
			},
			want: []string{`table events: schema.Tables() says stream NEW_IMAGE, aws_dynamodb_table.table["events"] (plan) says stream off`},
		},
		{
			name: "table renamed",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) {
					m["checkpoint"] = m["checkpoints"]
					delete(m, "checkpoints")
				})
			},
			// The policies name aws_dynamodb_table.table["checkpoints"].
			wantErr: "Invalid index",
		},
		{
			name: "table added",
			mutate: func(t *testing.T) map[string][]byte {
				return withTables(t, files, func(m map[string]schema.TerraformTable) { m["checkpoint"] = m["checkpoints"] })
			},
			want: []string{`table checkpoint: schema.Tables() has no such table, aws_dynamodb_table.table["checkpoint"] (plan) declares it`},
		},
		{
			name: "main.tf: stream_enabled unset",
			mutate: func(t *testing.T) map[string][]byte {
				return tfReplace(t, "  stream_enabled   = each.value.stream_view_type != null\n", "")
			},
			wantErr: "stream_view_type",
		},
		{
			name: "main.tf: a table of the file left out",
			mutate: func(t *testing.T) map[string][]byte {
				return tfReplace(t, "for_each = local.dynamodb_tables\n", "for_each = { for k, v in local.dynamodb_tables : k => v if k != \"metrics\" }\n")
			},
			// The projection tables and the policies name it.
			wantErr: "Invalid index",
		},
		{
			name: "main.tf: PITR on without the spec",
			mutate: func(t *testing.T) map[string][]byte {
				return tfReplace(t, "enabled = each.value.point_in_time_recovery && local.pitr_enabled", "enabled = local.pitr_enabled")
			},
			want: []string{
				`table executions: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["executions"] (plan) says local.pitr_enabled`,
				`table workflows: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["workflows"] (plan) says local.pitr_enabled`,
				`table workflow-jobs: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["workflow-jobs"] (plan) says local.pitr_enabled`,
				`table workflow-runs: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["workflow-runs"] (plan) says local.pitr_enabled`,
				`table deployments: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["deployments"] (plan) says local.pitr_enabled`,
				`table metrics: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["metrics"] (plan) says local.pitr_enabled`,
				`table aggregates: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["aggregates"] (plan) says local.pitr_enabled`,
				`table checkpoints: schema.Tables() says point_in_time_recovery.enabled = false, aws_dynamodb_table.table["checkpoints"] (plan) says local.pitr_enabled`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			broken := tc.mutate(t)
			r := runPlan(t, broken, "prod")
			var refused string
			if v := r.Result.Validate; v != nil && !v.Valid {
				refused = diagnostics(v)
			} else if r.Err != nil {
				refused = r.Err.Error()
			}
			if tc.wantErr != "" {
				if !strings.Contains(refused, tc.wantErr) {
					t.Fatalf("want the provider to refuse with %q, got: %s", tc.wantErr, orNone(refused))
				}
				return
			}
			if refused != "" {
				t.Fatalf("the provider refused the mutation: %s", refused)
			}
			got := compare(schema.Tables(), tablesFromPlan(t, r.Result.Plan, "prod", true))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("compare reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestFmt runs the real `terraform fmt -check -recursive` from TOOLS_DIR.
func TestFmt(t *testing.T) {
	dir := os.Getenv("TOOLS_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".tools")
	}
	bin := filepath.Join(dir, "bin", "terraform")
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("terraform binary not found at %s (set TOOLS_DIR; install with GOBIN=%s/bin go install github.com/hashicorp/terraform@v1.5.7): %v", bin, dir, err)
		if os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(bin, "fmt", "-check", "-recursive", "-diff", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s fmt -check -recursive terraform/ failed (%v); run `%s fmt -recursive terraform`:\n%s", bin, err, bin, out)
	}
}

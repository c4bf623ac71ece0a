package terraform

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
	Resource    string // resource label, e.g. "workflow_jobs"
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
		errs = append(errs, fmt.Sprintf("table %s: schema.Tables() has no such table, %s declares aws_dynamodb_table.%s", logical, t.File, t.Resource))
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

// TestDriftIsCaught mutates main.tf, plans it with the real provider and
// expects the exact report of compare (or the provider's own refusal, for
// a key attribute left without any index).
func TestDriftIsCaught(t *testing.T) {
	files := readConfigFiles(t)
	main := string(files["terraform/main.tf"])
	// cut removes the first occurrence of block (a whole line-aligned
	// snippet) after anchor within the resource res.
	cut := func(t *testing.T, res, anchor, block string) string {
		t.Helper()
		start := strings.Index(main, `resource "aws_dynamodb_table" "`+res+`" {`)
		if start < 0 {
			t.Fatalf("main.tf has no aws_dynamodb_table.%s", res)
		}
		a := strings.Index(main[start:], anchor)
		if a < 0 {
			t.Fatalf("aws_dynamodb_table.%s has no %q", res, anchor)
		}
		from := start + a
		i := strings.Index(main[from:], block)
		if i < 0 {
			t.Fatalf("aws_dynamodb_table.%s has no %q after %q", res, block, anchor)
		}
		i += from
		return main[:i] + main[i+len(block):]
	}
	keySchema := func(attr, kt string) string {
		return "\n    key_schema {\n      attribute_name = \"" + attr + "\"\n      key_type       = \"" + kt + "\"\n    }\n"
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T) string
		want   []string // compare's report
		// wantErr, instead: the provider refuses the configuration with
		// this text (validate or plan).
		wantErr string
	}{
		{
			name:    "GSI hash attribute removed",
			mutate:  func(t *testing.T) string { return cut(t, "workflow_jobs", `"GSI1"`, keySchema("status", "HASH")) },
			wantErr: `Unused attributes: ["status"]`,
		},
		{
			name:    "GSI range attribute removed",
			mutate:  func(t *testing.T) string { return cut(t, "workflows", `"GSI2"`, keySchema("sortValue", "RANGE")) },
			wantErr: `Unused attributes: ["sortValue"]`,
		},
		{
			name: "GSI range attribute replaced",
			mutate: func(t *testing.T) string {
				return strings.Replace(cut(t, "workflows", `"GSI2"`, keySchema("sortValue", "RANGE")), keySchema("entityType", "RANGE"),
					keySchema("entityType", "RANGE")+keySchema("sortValue", "HASH")[1:], 1)
			},
			wantErr: "must be before",
		},
		{
			name: "attribute type changed",
			mutate: func(t *testing.T) string {
				return strings.Replace(cut(t, "workflow_jobs", `name = "run_id"`, `type = "N"`), `name = "run_id"`, `name = "run_id"`+"\n    type = \"S\"", 1)
			},
			want: []string{"table workflow-jobs attribute run_id: schema.Tables() says N, aws_dynamodb_table.workflow_jobs (plan) says S"},
		},
		{
			name: "TTL removed",
			mutate: func(t *testing.T) string {
				return cut(t, "messages", `"${local.name}-messages"`, "\n  ttl {\n    attribute_name = \"ttl\"\n    enabled        = true\n  }\n")
			},
			want: []string{"table messages: schema.Tables() says ttl on (attribute ttl), aws_dynamodb_table.messages (plan) says ttl off"},
		},
		{
			name: "stream turned off",
			mutate: func(t *testing.T) string {
				return cut(t, "events", `"${local.name}-events"`, "  stream_enabled   = true\n")
			},
			wantErr: "stream_view_type",
		},
		{
			name: "table renamed",
			mutate: func(t *testing.T) string {
				return strings.Replace(main, `"${local.name}-checkpoints"`, `"${local.name}-checkpoint"`, 1)
			},
			want: []string{
				`table checkpoints: schema.Tables() has it, terraform/*.tf has no aws_dynamodb_table named "${local.name}-checkpoints"`,
				"table checkpoint: schema.Tables() has no such table, aws_dynamodb_table.checkpoints (plan) declares aws_dynamodb_table.checkpoints",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mutated := tc.mutate(t)
			if mutated == main {
				t.Fatal("mutation changed nothing")
			}
			broken := maps.Clone(files)
			broken["terraform/main.tf"] = []byte(mutated)
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

package schema_test

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestCreateTableInputsGolden pins every table's CreateTable request: a change
// of keys or indexes shows up as a golden diff in review.
func TestCreateTableInputsGolden(t *testing.T) {
	n := schema.Naming{Prefix: "streamfold", Stage: "dev"}
	var all []any
	for _, tb := range schema.Tables() {
		all = append(all, map[string]any{
			"table":              tb.CreateTableInput(n.Table(tb.Logical)),
			"ttlAttribute":       tb.TTLAttribute,
			"ttlDays":            tb.TTLDays,
			"pitrInStageAndProd": tb.PITR,
		})
	}
	got, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/tables.golden"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./schema -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("CreateTable inputs differ from %s; run go test ./schema -update and review the diff", golden)
	}
}

func TestTablesInvariants(t *testing.T) {
	seen := map[string]bool{}
	for _, tb := range schema.Tables() {
		if seen[tb.Logical] {
			t.Errorf("duplicate table %s", tb.Logical)
		}
		seen[tb.Logical] = true
		if tb.Doc == "" {
			t.Errorf("%s: no Doc", tb.Logical)
		}
		if (tb.TTLAttribute == "") != (tb.TTLDays == 0) {
			t.Errorf("%s: TTLAttribute and TTLDays must be set together", tb.Logical)
		}
		for _, ix := range tb.Indexes {
			if len(ix.Hash) == 0 || len(ix.Hash) > 4 || len(ix.Range) > 4 {
				t.Errorf("%s/%s: 1-4 hash and 0-4 range attributes allowed", tb.Logical, ix.Name)
			}
		}
	}
	ev, ok := schema.TableSpec(schema.TableEvents)
	if !ok || ev.StreamView == "" || ev.Hash.Name != schema.AttrSubject || ev.Range == nil || ev.Range.Name != schema.AttrID {
		t.Fatalf("event table must be keyed (subject, id) with streams on: %+v", ev)
	}
}

func TestNamingValidate(t *testing.T) {
	tests := []struct {
		name   string
		naming schema.Naming
		want   string
	}{
		{"ok", schema.Naming{Prefix: "streamfold", Stage: "prod"}, ""},
		{"upper prefix", schema.Naming{Prefix: "Streamfold", Stage: "dev"}, `schema: Naming.Prefix: must be 1-63 lowercase letters, digits or '-', got "Streamfold"`},
		{"empty prefix", schema.Naming{Stage: "dev"}, `schema: Naming.Prefix: must be 1-63 lowercase letters, digits or '-', got ""`},
		{"bad stage", schema.Naming{Prefix: "sf", Stage: "qa"}, `schema: Naming.Stage: must be one of dev, stage, prod, got "qa"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.naming.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
	if got := (schema.Naming{Prefix: "sf", Stage: "dev"}).Table("events"); got != "sf-dev-events" {
		t.Fatalf("Table = %q", got)
	}
}

func TestTableKey(t *testing.T) {
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	cases := []struct {
		table string
		item  map[string]types.AttributeValue
		want  map[string]types.AttributeValue // nil: not a complete key
	}{
		{schema.TableWorkflows, map[string]types.AttributeValue{"pk": str("a"), "sk": str("b"), "x": str("c")},
			map[string]types.AttributeValue{"pk": str("a"), "sk": str("b")}},
		{schema.TableWorkflows, map[string]types.AttributeValue{"pk": str("a")}, nil},
		{schema.TableMessages, map[string]types.AttributeValue{"message_id": str("m"), "stage": str("dev")},
			map[string]types.AttributeValue{"message_id": str("m")}},
		{schema.TableMessages, map[string]types.AttributeValue{"pk": str("a"), "sk": str("b")}, nil},
	}
	for _, c := range cases {
		spec, ok := schema.TableSpec(c.table)
		if !ok {
			t.Fatalf("no spec for %s", c.table)
		}
		got, ok := spec.Key(c.item)
		if ok != (c.want != nil) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s.Key(%v) = %v, %v; want %v", c.table, c.item, got, ok, c.want)
		}
	}
}

// TestTerraformTablesJSON keeps terraform/generated/dynamodb_tables.json,
// from which Terraform declares the DynamoDB tables, equal to TablesFor
// (terraform/drift_test.go fails too when it is stale, and the plan tier
// compares the planned tables with the specs).
func TestTerraformTablesJSON(t *testing.T) {
	got, err := schema.TerraformTablesJSON()
	if err != nil {
		t.Fatal(err)
	}
	const path = "../terraform/generated/dynamodb_tables.json"
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s)", err, schema.TerraformTablesGenerator)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale; run %s and review the diff", path, schema.TerraformTablesGenerator)
	}
	var f schema.TerraformTablesFile
	if err := json.Unmarshal(got, &f); err != nil {
		t.Fatal(err)
	}
	for shards, tables := range map[int]map[string]schema.TerraformTable{0: f.GSIShardsOff, 4: f.GSIShardsOn} {
		specs := schema.TablesFor(shards)
		if len(tables) != len(specs) {
			t.Errorf("gsi_shards %d: %d tables, TablesFor has %d", shards, len(tables), len(specs))
		}
		for _, sp := range specs {
			tt, ok := tables[sp.Logical]
			if !ok {
				t.Errorf("gsi_shards %d: no table %s", shards, sp.Logical)
				continue
			}
			if tt.HashKey != sp.Hash.Name || len(tt.Indexes) != len(sp.Indexes) || (tt.TTLAttribute != nil) != (sp.TTLAttribute != "") ||
				(tt.StreamViewType != nil) != (sp.StreamView != "") || tt.PointInTimeRecovery != sp.PITR ||
				tt.Projection != slices.Contains(schema.ProjectionTables(), sp.Logical) {
				t.Errorf("gsi_shards %d: table %s = %+v, spec %+v", shards, sp.Logical, tt, sp)
			}
			for i, ix := range sp.Indexes {
				if i < len(tt.Indexes) && (tt.Indexes[i].Name != ix.Name || len(tt.Indexes[i].KeySchema) != len(ix.Hash)+len(ix.Range)) {
					t.Errorf("gsi_shards %d: table %s index %d = %+v, spec %+v", shards, sp.Logical, i, tt.Indexes[i], ix)
				}
			}
		}
	}
}

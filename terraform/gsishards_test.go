package terraform

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/streamfold/streamfold/schema"
)

// evaluatedTables reads the evaluated aws_dynamodb_table instances as
// logical name -> index name -> [hash attributes..., "/", range
// attributes...], and each table's attribute definitions.
func evaluatedTables(t *testing.T, vars map[string]cty.Value) (map[string]map[string][]string, map[string]map[string]string) {
	t.Helper()
	_, ev := loadEvaluated(t, evalOptions{Vars: vars})
	indexes, attrs := map[string]map[string][]string{}, map[string]map[string]string{}
	for _, in := range ev.instancesOf("resource", "aws_dynamodb_table") {
		name := strings.TrimPrefix(attr(in.Obj, "name").AsString(), "streamfold-dev-")
		indexes[name], attrs[name] = map[string][]string{}, map[string]string{}
		for _, a := range blocks(in.Obj, "attribute") {
			attrs[name][attr(a, "name").AsString()] = attr(a, "type").AsString()
		}
		for _, g := range blocks(in.Obj, "global_secondary_index") {
			var hash, rng []string
			for _, ks := range blocks(g, "key_schema") {
				if attr(ks, "key_type").AsString() == "HASH" {
					hash = append(hash, attr(ks, "attribute_name").AsString())
				} else {
					rng = append(rng, attr(ks, "attribute_name").AsString())
				}
			}
			indexes[name][attr(g, "name").AsString()] = append(append(hash, "/"), rng...)
		}
	}
	return indexes, attrs
}

// TestGSIShardsTables: the configuration's tables and indexes equal
// schema.TablesFor(n) for gsi_shards off (default, 1) and 4, and the
// projector, api and reconcile (whose heal writes items) functions get
// STREAMFOLD_GSI_SHARDS only when on.
func TestGSIShardsTables(t *testing.T) {
	for _, shards := range []int{0, 1, 4} {
		vars := map[string]cty.Value{"stage": cty.StringVal("dev")}
		if shards > 0 {
			vars["gsi_shards"] = cty.NumberIntVal(int64(shards))
		}
		indexes, attrs := evaluatedTables(t, vars)
		for _, spec := range schema.TablesFor(shards) {
			want := map[string][]string{}
			for _, ix := range spec.Indexes {
				want[ix.Name] = append(append(keyNames(ix.Hash), "/"), keyNames(ix.Range)...)
				for _, k := range append(append([]schema.KeyAttr{}, ix.Hash...), ix.Range...) {
					if attrs[spec.Logical][k.Name] != string(k.Type) {
						t.Errorf("gsi_shards=%d: %s attribute %s is %q, want %s", shards, spec.Logical, k.Name, attrs[spec.Logical][k.Name], k.Type)
					}
				}
			}
			if !reflect.DeepEqual(indexes[spec.Logical], want) && (len(want) > 0 || len(indexes[spec.Logical]) > 0) {
				t.Errorf("gsi_shards=%d: %s indexes\n got %v\nwant %v", shards, spec.Logical, indexes[spec.Logical], want)
			}
			if _, has := attrs[spec.Logical][schema.AttrGSIShard]; has != schema.HasShardedIndex(spec.Logical, shards) {
				t.Errorf("gsi_shards=%d: %s declares gsiShard: %v", shards, spec.Logical, has)
			}
		}
		_, ev := loadEvaluated(t, evalOptions{Vars: vars})
		for _, in := range ev.instancesOf("resource", "aws_lambda_function") {
			envs := blocks(in.Obj, "environment")
			got := ""
			if len(envs) == 1 {
				if v, ok := attr(envs[0], "variables").AsValueMap()["STREAMFOLD_GSI_SHARDS"]; ok {
					got = v.AsString()
				}
			}
			want := ""
			if shards > 1 && (in.Key == "projector" || in.Key == "api" || in.Key == "reconcile") {
				want = "4"
			}
			if got != want {
				t.Errorf("gsi_shards=%d: %s STREAMFOLD_GSI_SHARDS = %q, want %q", shards, in.Addr, got, want)
			}
		}
	}
}

package terraform

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestReservedConcurrency: every function has its concurrency reserved by
// default (a ceiling for the public function URLs, a guarantee for the
// stream consumers), from lambda_reserved_concurrency.
func TestReservedConcurrency(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"lambda_reserved_concurrency": cty.MapVal(map[string]cty.Value{
		"projector": cty.NumberIntVal(3), "archiver": cty.NumberIntVal(4), "ingest": cty.NumberIntVal(5), "api": cty.NumberIntVal(-1), "reconcile": cty.NumberIntVal(2),
	})}})
	want := map[string]int64{"projector": 3, "archiver": 4, "ingest": 5, "api": -1, "reconcile": 2}
	for _, in := range ev.instancesOf("resource", "aws_lambda_function") {
		v := attr(in.Obj, "reserved_concurrent_executions")
		if v == cty.NilVal || v.IsNull() {
			t.Errorf("%s: no reserved_concurrent_executions", in.Addr)
			continue
		}
		if n, _ := v.AsBigFloat().Int64(); n != want[in.Key] {
			t.Errorf("%s: reserved_concurrent_executions %d, want %d", in.Addr, n, want[in.Key])
		}
	}
	_, def := loadEvaluated(t, evalOptions{})
	for _, in := range def.instancesOf("resource", "aws_lambda_function") {
		if n, _ := attr(in.Obj, "reserved_concurrent_executions").AsBigFloat().Int64(); n < 1 {
			t.Errorf("%s: reserves %d by default", in.Addr, n)
		}
	}
}

// TestDeletionProtection: outside dev every table refuses deletion.
func TestDeletionProtection(t *testing.T) {
	for stage, want := range map[string]bool{"dev": false, "stage": true, "prod": true} {
		_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"stage": cty.StringVal(stage)}})
		tables := ev.instancesOf("resource", "aws_dynamodb_table")
		if len(tables) == 0 {
			t.Fatal("no table")
		}
		for _, in := range tables {
			v := attr(in.Obj, "deletion_protection_enabled")
			if v == cty.NilVal || v.IsNull() || v.True() != want {
				t.Errorf("stage %s: %s deletion_protection_enabled = %#v, want %v", stage, in.Addr, v, want)
			}
		}
	}
}

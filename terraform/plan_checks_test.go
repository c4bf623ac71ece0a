package terraform

// The plan tier's checks (plan_test.go runs the plans). Each reads what the
// real provider planned and compares it with the code:
//
//   - TestPlanMatchesEvaluator: every resource and data instance of the
//     plan is one of the evaluator's (config_test.go) and the reverse, and
//     every value the plan knows equals the evaluator's. This anchors every
//     hcl/v2 check of this package (IAM resources, schedules, alarms,
//     buckets, ...) to what Terraform really plans; where the plan does not
//     know a value before apply (an ARN), the evaluator must hold a
//     placeholder naming the resource, which those checks then test.
//   - TestPlanTables: every table and GSI (multi-attribute key_schema)
//     against schema.Tables(), read from the provider's planned values.
//   - TestPlanEventSourceMappings, TestPlanFunctionEnvironment, TestPlanIAM,
//     TestPlanAlarmsAndSchedules: the mappings' settings, each function's
//     environment against what its main reads, the actions of each role,
//     and the alarms and schedules.
//   - TestPlanCatchesBrokenConfig: an unknown argument, a GSI key the schema
//     does not have, a mapping at LATEST with a wider filter, and a policy
//     action the code does not need fail the tier.

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/streamfold/streamfold/schema"
)

// planned is one instance of the plan: its values after the plan and
// which of them are unknown until apply.
type planned struct {
	Address, Mode, Type, Name, Key string
	After                          any
	Unknown                        any
}

// plannedInstances returns every resource and data instance of the plan by
// address: managed resources and deferred data reads from resource_changes,
// data sources read while planning from prior_state.
func plannedInstances(p *tfjson.Plan) map[string]planned {
	out := map[string]planned{}
	key := func(i any) string {
		if i == nil {
			return ""
		}
		return fmt.Sprint(i)
	}
	for _, rc := range p.ResourceChanges {
		if rc.Change == nil || rc.ModuleAddress != "" {
			continue
		}
		out[rc.Address] = planned{rc.Address, string(rc.Mode), rc.Type, rc.Name, key(rc.Index), rc.Change.After, rc.Change.AfterUnknown}
	}
	if p.PriorState != nil && p.PriorState.Values != nil && p.PriorState.Values.RootModule != nil {
		for _, r := range p.PriorState.Values.RootModule.Resources {
			if _, ok := out[r.Address]; !ok && r.Mode == tfjson.DataResourceMode {
				out[r.Address] = planned{r.Address, string(r.Mode), r.Type, r.Name, key(r.Index), map[string]any(r.AttributeValues), nil}
			}
		}
	}
	return out
}

// ofType returns the planned instances of one type and mode, by key.
func ofType(p *tfjson.Plan, mode tfjson.ResourceMode, typ string) map[string]planned {
	out := map[string]planned{}
	for _, in := range plannedInstances(p) {
		if in.Mode == string(mode) && in.Type == typ {
			out[in.Name+"/"+in.Key] = in
		}
	}
	return out
}

// placeholderRE matches the evaluator's stand-ins for values known only
// after apply (config_test.go's computed and fakeHashFunc).
var placeholderRE = regexp.MustCompile(`arn:fake:|fakehash:|lambda-url\.fake|sqs\.fake|^(id|name|function_name|json|bucket|alarm_name|uuid):`)

func hasPlaceholder(v any) bool {
	switch x := v.(type) {
	case string:
		return placeholderRE.MatchString(x)
	case []any:
		for _, e := range x {
			if hasPlaceholder(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasPlaceholder(e) {
				return true
			}
		}
	}
	return false
}

// diffValues compares the evaluator's value (ev) with the plan's (pv, with
// unknown marks un) and returns the differences under path. What the
// evaluator does not set is not compared (the provider fills in defaults);
// a placeholder in ev matches whatever the plan has; an unknown in the
// plan matches only a placeholder. Lists that differ element by element
// are compared as sets (the provider orders set blocks its own way).
func diffValues(path string, ev, pv, un any) []string {
	if ev == nil {
		return nil
	}
	if s, ok := ev.(string); ok && placeholderRE.MatchString(s) {
		return nil
	}
	if u, ok := un.(bool); ok && u {
		if hasPlaceholder(ev) || isEmpty(ev) {
			return nil // a placeholder, or nothing configured for a computed attribute
		}
		return []string{fmt.Sprintf("%s: the plan does not know it before apply, the evaluator says %s", path, brief(ev))}
	}
	switch e := ev.(type) {
	case map[string]any:
		p, ok := pv.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: the evaluator says an object, the plan says %s", path, brief(pv))}
		}
		u, _ := un.(map[string]any)
		var out []string
		for _, k := range sortedMapKeys(e) {
			out = append(out, diffValues(path+"."+k, e[k], p[k], u[k])...)
		}
		return out
	case []any:
		p, ok := pv.([]any)
		if !ok {
			if len(e) == 0 && pv == nil {
				return nil
			}
			return []string{fmt.Sprintf("%s: the evaluator says %s, the plan says %s", path, brief(ev), brief(pv))}
		}
		u, _ := un.([]any)
		at := func(i int) any {
			if i < len(u) {
				return u[i]
			}
			return nil
		}
		if len(e) != len(p) {
			return []string{fmt.Sprintf("%s: the evaluator has %d elements, the plan %d: %s vs %s", path, len(e), len(p), brief(ev), brief(pv))}
		}
		var ordered []string
		for i := range e {
			ordered = append(ordered, diffValues(fmt.Sprintf("%s[%d]", path, i), e[i], p[i], at(i))...)
		}
		if len(ordered) == 0 {
			return nil
		}
		// As a set: known values match known plan values exactly; then the
		// evaluator's placeholders, and only then what is left, take the
		// plan's elements that are unknown before apply.
		used := make([]bool, len(p))
		matched := make([]bool, len(e))
		for pass := 0; pass < 3; pass++ {
			for i := range e {
				if matched[i] || (pass == 0) == hasPlaceholder(e[i]) {
					continue
				}
				for j := range p {
					unknownJ, _ := at(j).(bool)
					if used[j] || (pass == 2 && !unknownJ) {
						continue
					}
					if pass == 2 || len(diffValues("", e[i], p[j], at(j))) == 0 {
						used[j], matched[i] = true, true
						break
					}
				}
			}
		}
		for i := range e {
			if !matched[i] {
				return ordered
			}
		}
		return nil
	case float64:
		if p, ok := pv.(float64); ok && p == e {
			return nil
		}
	case bool:
		if p, ok := pv.(bool); ok && p == e {
			return nil
		}
	case string:
		if p, ok := pv.(string); ok && p == e {
			return nil
		}
		// JSON documents (policies, event patterns, inputs) are compared
		// as JSON: the provider normalises their whitespace and order.
		var ej, pj any
		if p, ok := pv.(string); ok && json.Unmarshal([]byte(e), &ej) == nil && json.Unmarshal([]byte(p), &pj) == nil && reflect.DeepEqual(ej, pj) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: the evaluator says %s, the plan says %s", path, brief(ev), brief(pv))}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// evaluatorJSON converts an evaluated instance to the plan's JSON shape.
func evaluatorJSON(t *testing.T, in *instance) any {
	t.Helper()
	b, err := ctyjson.Marshal(in.Obj, in.Obj.Type())
	if err != nil {
		t.Fatalf("%s: %v", in.Addr, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPlanMatchesEvaluator(t *testing.T) {
	for _, stage := range []string{"dev", "prod"} {
		t.Run(stage, func(t *testing.T) {
			p := repoPlan(t, stage)
			got := plannedInstances(p)
			_, ev := loadEvaluated(t, evalOptions{Vars: stageVars(stage)})
			want := map[string]*instance{}
			for _, kind := range []string{"resource", "data"} {
				for _, in := range ev.instancesOf(kind, "") {
					want[in.Addr] = in
				}
			}
			if len(want) < 50 {
				t.Fatalf("the evaluator has only %d instances: not the whole configuration", len(want))
			}
			managed := 0
			for _, addr := range sortedMapKeys(want) {
				pl, ok := got[addr]
				if !ok {
					t.Errorf("%s: evaluated, not in the plan", addr)
					continue
				}
				if pl.Mode == string(tfjson.ManagedResourceMode) {
					managed++
				}
				for _, d := range diffValues(addr, evaluatorJSON(t, want[addr]), pl.After, pl.Unknown) {
					t.Error(d)
				}
			}
			for _, addr := range sortedMapKeys(got) {
				if _, ok := want[addr]; !ok {
					t.Errorf("%s: planned, not evaluated", addr)
				}
			}
			t.Logf("stage %s: %d resources to create, %d data sources; every known value equals the evaluator's", stage, managed, len(want)-managed)
		})
	}
}

// stageVars are the evaluator's variables for a stage.
func stageVars(stage string) map[string]cty.Value {
	return map[string]cty.Value{"stage": cty.StringVal(stage)}
}

// tablesFromPlan reads the planned aws_dynamodb_table instances as drift_test.go's
// tfTable, by logical name (name = "streamfold-<stage>-<logical>"), so
// compare() and conventions() check the provider's view. pitrOn says
// whether the stage turns point-in-time recovery on: then enabled = true
// reads as "local.pitr_enabled", the evaluator-free spelling compare wants.
func tablesFromPlan(t *testing.T, p *tfjson.Plan, stage string, pitrOn bool) map[string]*tfTable {
	t.Helper()
	out := map[string]*tfTable{}
	prefix := "streamfold-" + stage + "-"
	for _, in := range ofType(p, tfjson.ManagedResourceMode, "aws_dynamodb_table") {
		v, _ := in.After.(map[string]any)
		s := func(m map[string]any, k string) string { x, _ := m[k].(string); return x }
		b := func(m map[string]any, k string) bool { x, _ := m[k].(bool); return x }
		objs := func(m map[string]any, k string) []map[string]any {
			var r []map[string]any
			l, _ := m[k].([]any)
			for _, e := range l {
				if o, ok := e.(map[string]any); ok {
					r = append(r, o)
				}
			}
			return r
		}
		name := s(v, "name")
		if !strings.HasPrefix(name, prefix) {
			t.Errorf("%s: name %q does not start with %q", in.Address, name, prefix)
			continue
		}
		tt := &tfTable{
			Logical: strings.TrimPrefix(name, prefix), Resource: in.Name, File: in.Address + " (plan)",
			Hash: s(v, "hash_key"), Range: s(v, "range_key"), Attrs: map[string]string{},
			StreamOn: b(v, "stream_enabled"), StreamView: s(v, "stream_view_type"), BillingMode: s(v, "billing_mode"),
		}
		for _, a := range objs(v, "attribute") {
			tt.Attrs[s(a, "name")] = s(a, "type")
			tt.AttrOrder = append(tt.AttrOrder, s(a, "name"))
		}
		sort.Strings(tt.AttrOrder)
		for _, g := range objs(v, "global_secondary_index") {
			ix := tfIndex{Name: s(g, "name"), Projection: s(g, "projection_type")}
			if s(g, "hash_key") != "" || s(g, "range_key") != "" {
				t.Errorf("%s index %s: planned with hash_key/range_key; write multi-attribute keys as key_schema blocks", in.Address, ix.Name)
			}
			for _, ks := range objs(g, "key_schema") {
				switch s(ks, "key_type") {
				case "HASH":
					ix.Hash = append(ix.Hash, s(ks, "attribute_name"))
				case "RANGE":
					ix.Range = append(ix.Range, s(ks, "attribute_name"))
				}
			}
			tt.Indexes = append(tt.Indexes, ix)
		}
		for _, ttl := range objs(v, "ttl") {
			tt.HasTTL, tt.TTLAttr, tt.TTLEnabled = true, s(ttl, "attribute_name"), b(ttl, "enabled")
		}
		tt.PITR = "false"
		for _, pitr := range objs(v, "point_in_time_recovery") {
			if b(pitr, "enabled") {
				tt.PITR = "true"
				if pitrOn {
					tt.PITR = "local.pitr_enabled"
				}
			}
		}
		for _, sse := range objs(v, "server_side_encryption") {
			tt.SSE = b(sse, "enabled")
		}
		if prev, dup := out[tt.Logical]; dup {
			t.Errorf("table %s planned twice: %s and %s", tt.Logical, prev.File, tt.File)
		}
		out[tt.Logical] = tt
	}
	return out
}

func TestPlanTables(t *testing.T) {
	// prod: point-in-time recovery on where the spec says, deletion
	// protection on every table.
	p := repoPlan(t, "prod")
	tf := tablesFromPlan(t, p, "prod", true)
	if len(tf) != len(schema.Tables()) {
		t.Errorf("the plan creates %d tables, schema.Tables() has %d", len(tf), len(schema.Tables()))
	}
	for _, e := range compare(schema.Tables(), tf) {
		t.Error(e)
	}
	for _, e := range conventions(tf) {
		t.Error(e)
	}
	indexes := 0
	for _, in := range ofType(p, tfjson.ManagedResourceMode, "aws_dynamodb_table") {
		v, _ := in.After.(map[string]any)
		if dp, _ := v["deletion_protection_enabled"].(bool); !dp {
			t.Errorf("%s: deletion_protection_enabled is not true in prod", in.Address)
		}
		g, _ := v["global_secondary_index"].([]any)
		indexes += len(g)
	}
	t.Logf("%d tables, %d GSIs planned as schema.Tables() specifies", len(tf), indexes)
}

// afterMap returns a planned instance's values as an object.
func afterMap(in planned) map[string]any { m, _ := in.After.(map[string]any); return m }

// unknownAt reports whether the plan marks a top-level value unknown.
func unknownAt(in planned, k string) bool {
	m, _ := in.Unknown.(map[string]any)
	u, _ := m[k].(bool)
	return u
}

// refsOf returns the references of a top-level argument of a resource
// block in the plan's configuration (address without the instance key).
func refsOf(p *tfjson.Plan, address, arg string) []string {
	if p.Config == nil || p.Config.RootModule == nil {
		return nil
	}
	for _, r := range p.Config.RootModule.Resources {
		if r.Address == address && r.Expressions[arg] != nil && r.Expressions[arg].ExpressionData != nil {
			return r.Expressions[arg].References
		}
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestPlanEventSourceMappings(t *testing.T) {
	for _, e := range checkPlanESMs(repoPlan(t, "dev")) {
		t.Error(e)
	}
}

// checkPlanESMs reports every planned stream mapping setting that differs
// from what the consumers need (esm_test.go says why each matters).
func checkPlanESMs(p *tfjson.Plan) []string {
	var errs []string
	esms := ofType(p, tfjson.ManagedResourceMode, "aws_lambda_event_source_mapping")
	var keys []string
	for _, in := range esms {
		keys = append(keys, in.Key)
		v := afterMap(in)
		fail := func(format string, a ...any) { errs = append(errs, in.Address+": "+fmt.Sprintf(format, a...)) }
		num := func(k string) float64 { n, _ := v[k].(float64); return n }
		cfgAddr := "aws_lambda_event_source_mapping." + in.Name
		if !unknownAt(in, "event_source_arn") || !contains(refsOf(p, cfgAddr, "event_source_arn"), "aws_dynamodb_table.table[\"events\"].stream_arn") {
			fail("event_source_arn is not the events table's stream_arn (references %v)", refsOf(p, cfgAddr, "event_source_arn"))
		}
		if got := v["starting_position"]; got != "TRIM_HORIZON" {
			fail("starting_position %v, want TRIM_HORIZON", got)
		}
		if got := fmt.Sprint(v["function_response_types"]); got != "[ReportBatchItemFailures]" {
			fail("function_response_types %s, want [ReportBatchItemFailures]", got)
		}
		if v["bisect_batch_on_function_error"] != true {
			fail("bisect_batch_on_function_error is not true")
		}
		if num("parallelization_factor") != 1 {
			fail("parallelization_factor %v, want 1", v["parallelization_factor"])
		}
		if a := num("maximum_record_age_in_seconds"); a < 60 || a > 86400 {
			fail("maximum_record_age_in_seconds %v, want 60-86400", a)
		}
		for setting, variable := range map[string]string{
			"batch_size": in.Key + "_batch_size", "maximum_batching_window_in_seconds": in.Key + "_batching_window_seconds",
			"maximum_retry_attempts": in.Key + "_maximum_retry_attempts",
		} {
			pv, ok := p.Variables[variable]
			if !ok {
				fail("no variable %s in the plan", variable)
				continue
			}
			if fmt.Sprint(pv.Value) != fmt.Sprint(v[setting]) {
				fail("%s %v, want var.%s = %v", setting, v[setting], variable, pv.Value)
			}
		}
		var dest map[string]any
		for _, dc := range asObjs(v["destination_config"]) {
			for _, of := range asObjs(dc["on_failure"]) {
				dest = of
			}
		}
		// Which bucket is known only after apply: the evaluator's check
		// (esm_test.go) names it, and TestPlanMatchesEvaluator ties the two.
		if dest == nil {
			fail("no destination_config.on_failure destination")
		}
		var patterns []string
		for _, fc := range asObjs(v["filter_criteria"]) {
			for _, f := range asObjs(fc["filter"]) {
				s, _ := f["pattern"].(string)
				patterns = append(patterns, s)
			}
		}
		var pat any
		if len(patterns) != 1 || json.Unmarshal([]byte(patterns[0]), &pat) != nil || !reflect.DeepEqual(pat, map[string]any{"eventName": []any{"INSERT"}}) {
			fail(`filter patterns %q, want exactly {"eventName":["INSERT"]}`, patterns)
		}
		var metrics []any
		for _, mc := range asObjs(v["metrics_config"]) {
			metrics, _ = mc["metrics"].([]any)
		}
		if fmt.Sprint(metrics) != "[EventCount]" {
			fail("metrics_config %v, want [EventCount]", metrics)
		}
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != strings.Join(streamConsumers, ",") {
		errs = append(errs, fmt.Sprintf("the plan maps %v to the stream, want one mapping per stream consumer %v", keys, streamConsumers))
	}
	sort.Strings(errs)
	return errs
}

func asObjs(v any) []map[string]any {
	var out []map[string]any
	l, _ := v.([]any)
	for _, e := range l {
		if o, ok := e.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func TestPlanFunctionEnvironment(t *testing.T) {
	p := repoPlan(t, "dev")
	fns := map[string]planned{}
	for _, in := range ofType(p, tfjson.ManagedResourceMode, "aws_lambda_function") {
		fns[in.Key] = in
	}
	for _, name := range lambdaCommands {
		in, ok := fns[name]
		if !ok {
			t.Errorf("cmd/%s: the plan creates no aws_lambda_function for it", name)
			continue
		}
		delete(fns, name)
		// Names with values known at plan time are in after; those whose
		// values are ARNs known only after apply are in after_unknown.
		set := map[string]bool{}
		for _, e := range asObjs(afterMap(in)["environment"]) {
			vars, _ := e["variables"].(map[string]any)
			for k := range vars {
				set[k] = true
			}
		}
		unk, _ := in.Unknown.(map[string]any)
		for _, e := range asObjs(unk["environment"]) {
			vars, ok := e["variables"].(map[string]any)
			if !ok && e["variables"] == true {
				// The provider's SDKv2 schema makes a map holding any
				// apply-time value (a secret's ARN) wholly unknown: the
				// names come from the evaluated configuration, whose known
				// values TestPlanMatchesEvaluator ties to the plan.
				envs := blocks(evaluatedFunction(t, name).Obj, "environment")
				if len(envs) != 1 {
					t.Fatalf("%s: the evaluator has %d environment blocks", in.Address, len(envs))
				}
				for k := range attr(envs[0], "variables").AsValueMap() {
					set[k] = true
				}
				t.Logf("%s: environment unknown until apply in the plan (a secret's ARN); names from the configuration", in.Address)
			}
			for k := range vars {
				set[k] = true
			}
		}
		_, srcs, err := hasMain(name)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]bool{}
		for _, n := range envNames(srcs) {
			read[n] = true
			if !testOnlyEnv[n] && featureEnv[n] == "" && !set[n] {
				t.Errorf("%s: cmd/%s reads %s, the plan does not set it", in.Address, name, n)
			}
			if testOnlyEnv[n] && set[n] {
				t.Errorf("%s: the plan sets %s, a test-only override", in.Address, n)
			}
		}
		for n := range set {
			if !read[n] {
				t.Errorf("%s: the plan sets %s, cmd/%s never reads it", in.Address, n, name)
			}
		}
	}
	for name, in := range fns {
		t.Errorf("%s: planned, but no cmd/%s among %v", in.Address, name, lambdaCommands)
	}
}

// evaluatedFunction returns the evaluator's aws_lambda_function.function[name].
func evaluatedFunction(t *testing.T, name string) *instance {
	t.Helper()
	_, ev := loadEvaluated(t, evalOptions{})
	for _, in := range ev.instancesOf("resource", "aws_lambda_function") {
		if in.Key == name {
			return in
		}
	}
	t.Fatalf("the evaluator has no aws_lambda_function for %s", name)
	return nil
}

func TestPlanIAM(t *testing.T) {
	for _, e := range checkPlanIAM(repoPlan(t, "dev")) {
		t.Error(e)
	}
}

// checkPlanIAM reports every function policy whose planned actions differ
// from the grants its code needs, wildcard actions, and roles or policies
// not one per function.
func checkPlanIAM(p *tfjson.Plan) []string {
	var errs []string
	docs := ofType(p, tfjson.DataResourceMode, "aws_iam_policy_document")
	expected := expectedGrants()
	for _, fn := range lambdaCommands {
		in, ok := docs[fn+"/"]
		if !ok {
			errs = append(errs, fmt.Sprintf("no data.aws_iam_policy_document.%s in the plan", fn))
			continue
		}
		got := map[string]bool{}
		for _, st := range asObjs(afterMap(in)["statement"]) {
			if e, _ := st["effect"].(string); e == "Deny" {
				continue
			}
			acts, _ := st["actions"].([]any)
			for _, a := range acts {
				s := fmt.Sprint(a)
				if strings.Contains(s, "*") {
					errs = append(errs, fmt.Sprintf("%s: action %q is a wildcard", in.Address, s))
				}
				got[s] = true
			}
		}
		want := map[string]bool{}
		for _, g := range expected[fn] {
			want[g.action] = true
		}
		if g, w := strings.Join(sortedMapKeys(got), " "), strings.Join(sortedMapKeys(want), " "); g != w {
			errs = append(errs, fmt.Sprintf("role of %s: the plan grants\n  %s\nthe code needs\n  %s", fn, g, w))
		}
	}
	// One role and one inline policy per function, attached to it.
	for _, typ := range []string{"aws_iam_role", "aws_iam_role_policy"} {
		n := 0
		for _, in := range ofType(p, tfjson.ManagedResourceMode, typ) {
			if in.Name == "function" {
				n++
			}
		}
		if n != len(lambdaCommands) {
			errs = append(errs, fmt.Sprintf("%d %s.function instances, want one per function (%d)", n, typ, len(lambdaCommands)))
		}
	}
	return errs
}

func TestPlanAlarmsAndSchedules(t *testing.T) {
	p := repoPlan(t, "dev")
	_, ev := loadEvaluated(t, evalOptions{})
	for _, typ := range []string{"aws_cloudwatch_metric_alarm", "aws_scheduler_schedule", "aws_cloudwatch_event_rule"} {
		planned := ofType(p, tfjson.ManagedResourceMode, typ)
		want := ev.instancesOf("resource", typ)
		if len(planned) != len(want) || len(planned) == 0 {
			t.Errorf("%s: the plan creates %d, the configuration declares %d", typ, len(planned), len(want))
		}
		for _, in := range planned {
			v := afterMap(in)
			switch typ {
			case "aws_cloudwatch_metric_alarm":
				if n, _ := v["alarm_name"].(string); !strings.HasPrefix(n, "streamfold-dev-") {
					t.Errorf("%s: alarm_name %q", in.Address, n)
				}
				if ns, _ := v["namespace"].(string); ns == "" && len(asAny(v["metric_query"])) == 0 {
					t.Errorf("%s: neither a namespace nor a metric query", in.Address)
				}
			case "aws_scheduler_schedule":
				if e, _ := v["schedule_expression"].(string); !strings.HasPrefix(e, "cron(") && !strings.HasPrefix(e, "rate(") {
					t.Errorf("%s: schedule_expression %q", in.Address, e)
				}
				if len(asObjs(v["target"])) != 1 {
					t.Errorf("%s: %d targets, want 1", in.Address, len(asObjs(v["target"])))
				}
			}
		}
	}
}

func asAny(v any) []any { l, _ := v.([]any); return l }

// TestPlanCatchesBrokenConfig: the tier fails on an argument the provider
// does not have (validate) and on a GSI key the schema does not have (the
// tables check of the plan).
func TestPlanCatchesBrokenConfig(t *testing.T) {
	files := readConfigFiles(t)
	t.Run("unknown argument", func(t *testing.T) {
		loc := regexp.MustCompile(`billing_mode\s*=\s*"PAY_PER_REQUEST"`).FindIndex(files["terraform/main.tf"])
		if loc == nil {
			t.Fatal("main.tf sets no billing_mode = \"PAY_PER_REQUEST\"")
		}
		src := string(files["terraform/main.tf"])
		broken := maps.Clone(files)
		broken["terraform/main.tf"] = []byte(src[:loc[1]] + "\n  read_capacity_units_typo = 5" + src[loc[1]:])
		r := runPlan(t, broken, "dev")
		if r.Result.Validate == nil || r.Result.Validate.Valid {
			t.Fatalf("validate accepted an unknown argument (err %v)", r.Err)
		}
		if d := diagnostics(r.Result.Validate); !strings.Contains(d, "read_capacity_units_typo") {
			t.Errorf("validate's diagnostics do not name the argument:\n%s", d)
		}
	})
	t.Run("stream mapping settings", func(t *testing.T) {
		// Two settings broken at once in streams.tf's mappings: a new
		// mapping that starts at LATEST skips the stream's 24 h, and a
		// filter that also passes MODIFY.
		src := string(files["terraform/streams.tf"])
		broken := maps.Clone(files)
		mut := strings.Replace(src, `"TRIM_HORIZON"`, `"LATEST"`, 1)
		mut = strings.Replace(mut, `eventName = ["INSERT"]`, `eventName = ["INSERT", "MODIFY"]`, 1)
		if mut == src || strings.Count(mut, `"LATEST"`) != 1 || !strings.Contains(mut, `"MODIFY"`) {
			t.Fatal("streams.tf has no starting_position \"TRIM_HORIZON\" or no eventName = [\"INSERT\"] filter to break")
		}
		broken["terraform/streams.tf"] = []byte(mut)
		r := runPlan(t, broken, "dev")
		if r.Err != nil {
			t.Fatalf("the broken mappings did not plan: %v", r.Err)
		}
		got := strings.Join(checkPlanESMs(r.Result.Plan), "\n")
		for _, want := range []string{"starting_position LATEST, want TRIM_HORIZON", `want exactly {"eventName":["INSERT"]}`} {
			if !strings.Contains(got, want) {
				t.Errorf("checkPlanESMs does not report %q; it reported:\n%s", want, got)
			}
		}
	})
	t.Run("policy action", func(t *testing.T) {
		// The api function's policy gains a write the code never makes.
		src := string(files["terraform/iam.tf"])
		at := strings.Index(src, `data "aws_iam_policy_document" "api" {`)
		if at < 0 {
			t.Fatal(`iam.tf has no data "aws_iam_policy_document" "api"`)
		}
		at += len(`data "aws_iam_policy_document" "api" {`)
		broken := maps.Clone(files)
		broken["terraform/iam.tf"] = []byte(src[:at] + "\n  statement {\n    actions   = [\"dynamodb:DeleteItem\"]\n    resources = [aws_dynamodb_table.table[\"events\"].arn]\n  }" + src[at:])
		r := runPlan(t, broken, "dev")
		if r.Err != nil {
			t.Fatalf("the broken policy did not plan: %v", r.Err)
		}
		if got := strings.Join(checkPlanIAM(r.Result.Plan), "\n"); !strings.Contains(got, "role of api") || !strings.Contains(got, "dynamodb:DeleteItem") {
			t.Errorf("checkPlanIAM does not report api's extra dynamodb:DeleteItem; it reported:\n%s", got)
		}
	})
	t.Run("GSI key the schema does not have", func(t *testing.T) {
		// workflow-jobs' GSI1 keyed on a new attribute "tenant" instead of
		// "status" (declared in place of status, so the provider's own
		// checks pass and the schema comparison must catch it), in the
		// generated file main.tf declares the tables from.
		broken := withTables(t, files, func(m map[string]schema.TerraformTable) {
			ix := indexOf(t, m["workflow-jobs"], "GSI1")
			for i, k := range ix.KeySchema {
				if k.AttributeName == "status" {
					ix.KeySchema[i].AttributeName = "tenant"
				}
			}
			for i, a := range m["workflow-jobs"].Attributes {
				if a.Name == "status" {
					m["workflow-jobs"].Attributes[i].Name = "tenant"
				}
			}
		})
		r := runPlan(t, broken, "prod")
		var problems []string
		switch {
		case r.Result.Validate != nil && !r.Result.Validate.Valid:
			problems = append(problems, diagnostics(r.Result.Validate))
		case r.Err != nil:
			problems = append(problems, r.Err.Error())
		default:
			problems = compare(schema.Tables(), tablesFromPlan(t, r.Result.Plan, "prod", true))
		}
		if len(problems) == 0 {
			t.Fatal("a GSI key the schema does not have passed the plan tier")
		}
		if j := strings.Join(problems, "\n"); !strings.Contains(j, "GSI1") && !strings.Contains(j, "tenant") {
			t.Errorf("the tier failed without naming the index or the key:\n%s", j)
		} else {
			t.Logf("caught: %s", j)
		}
	})
}

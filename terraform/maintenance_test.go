package terraform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// maintenanceTasks are the tasks the archiver function's maintenance mode
// runs (archiver/maintenance.Tasks).
var maintenanceTasks = []string{"compact", "verify"}

// checkMaintenance reports what is wrong with the scheduled maintenance
// (maintenance.tf): one daily schedule per task, in UTC, invoking the
// archiver function with {"maintenance":{"task":<task>}} (a task name, no
// storage format) through the scheduler role; that role assumable by
// EventBridge Scheduler of this account only and allowed exactly
// lambda:InvokeFunction on the archiver function.
func checkMaintenance(ev *evaluated) []string {
	var errs []string
	var keys []string
	for _, in := range ev.instancesOf("resource", "aws_scheduler_schedule") {
		if in.Block.Name != "maintenance" {
			continue // reconcile.tf's: reconcile_test.go
		}
		keys = append(keys, in.Key)
		o := in.Obj
		fail := func(format string, a ...any) { errs = append(errs, in.Addr+": "+fmt.Sprintf(format, a...)) }
		if want := ev.vars["maintenance_"+in.Key+"_schedule"]; want == cty.NilVal || !attr(o, "schedule_expression").RawEquals(want) {
			fail("schedule_expression %s, want var.maintenance_%s_schedule", attr(o, "schedule_expression").GoString(), in.Key)
		}
		if expr := getStr(o, "schedule_expression"); !strings.HasPrefix(expr, "cron(") || strings.Count(expr, " ") != 5 {
			fail("schedule_expression %q is not a daily cron(...) expression", expr)
		}
		if got := getStr(o, "schedule_expression_timezone"); got != "UTC" {
			fail("schedule_expression_timezone %q, want UTC (the task's day is a UTC day)", got)
		}
		mode := ""
		for _, w := range blocks(o, "flexible_time_window") {
			mode = getStr(w, "mode")
		}
		if mode != "OFF" {
			fail("flexible_time_window mode %q, want OFF", mode)
		}
		targets := blocks(o, "target")
		if len(targets) != 1 {
			fail("%d targets, want 1", len(targets))
			continue
		}
		tg := targets[0]
		if got, want := getStr(tg, "arn"), `arn:fake:aws_lambda_function.function["archiver"]`; got != want {
			fail("target %q, want the archiver function %s", got, want)
		}
		if got, want := getStr(tg, "role_arn"), "arn:fake:aws_iam_role.scheduler"; got != want {
			fail("target role %q, want %s", got, want)
		}
		var input any
		if err := json.Unmarshal([]byte(getStr(tg, "input")), &input); err != nil || !reflect.DeepEqual(input, map[string]any{"maintenance": map[string]any{"task": in.Key}}) {
			fail(`target input %s, want {"maintenance":{"task":%q}}`, getStr(tg, "input"), in.Key)
		}
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, maintenanceTasks) {
		errs = append(errs, fmt.Sprintf("schedules for %v, want one per maintenance task %v", keys, maintenanceTasks))
	}

	docs := statements(ev)
	var trust []string
	for _, st := range docs["scheduler_assume"] {
		trust = append(trust, strings.Join(st.actions, ","))
	}
	if strings.Join(trust, ";") != "sts:AssumeRole" {
		errs = append(errs, fmt.Sprintf("scheduler_assume: actions %v, want one statement of sts:AssumeRole", trust))
	}
	for _, in := range ev.instancesOf("data", "aws_iam_policy_document") {
		if in.Block.Name != "scheduler_assume" {
			continue
		}
		for _, st := range blocks(in.Obj, "statement") {
			var principals, account []string
			for _, p := range blocks(st, "principals") {
				ids, _ := stringList(attr(p, "identifiers"))
				principals = append(principals, getStr(p, "type")+":"+strings.Join(ids, ","))
			}
			for _, c := range blocks(st, "condition") {
				if getStr(c, "test") == "StringEquals" && getStr(c, "variable") == "aws:SourceAccount" {
					account, _ = stringList(attr(c, "values"))
				}
			}
			if strings.Join(principals, ";") != "Service:scheduler.amazonaws.com" {
				errs = append(errs, fmt.Sprintf("scheduler_assume: principals %v, want Service:scheduler.amazonaws.com only", principals))
			}
			if strings.Join(account, ",") != "123456789012" {
				errs = append(errs, fmt.Sprintf("scheduler_assume: aws:SourceAccount %v, want this account (confused deputy)", account))
			}
		}
	}
	var grants []string
	for _, st := range docs["scheduler"] {
		for _, a := range st.actions {
			for _, r := range st.resources {
				grants = append(grants, st.effect+" "+a+" on "+r)
			}
		}
	}
	if want := `Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["archiver"]`; strings.Join(grants, "; ") != want {
		errs = append(errs, fmt.Sprintf("scheduler policy grants %v, want exactly %s", grants, want))
	}
	roles := ev.instancesOf("resource", "aws_iam_role")
	found := false
	for _, r := range roles {
		if r.Block.Name == "scheduler" {
			found = true
			if got := getStr(r.Obj, "assume_role_policy"); got != "json:data.aws_iam_policy_document.scheduler_assume" {
				errs = append(errs, fmt.Sprintf("%s: assume_role_policy %q, want the scheduler_assume document", r.Addr, got))
			}
		}
	}
	if !found {
		errs = append(errs, "no aws_iam_role.scheduler")
	}
	var policies []string
	for _, p := range ev.instancesOf("resource", "aws_iam_role_policy") {
		if getStr(p.Obj, "role") == "id:aws_iam_role.scheduler" {
			policies = append(policies, getStr(p.Obj, "policy"))
		}
	}
	if strings.Join(policies, ",") != "json:data.aws_iam_policy_document.scheduler" {
		errs = append(errs, fmt.Sprintf("the scheduler role's inline policies %v, want exactly the scheduler document", policies))
	}
	return errs
}

func TestMaintenanceSchedules(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"maintenance_verify_schedule": cty.StringVal("cron(0 6 * * ? *)")}})
	for _, e := range checkMaintenance(ev) {
		t.Error(e)
	}
	if got := getStr(ev.resources["aws_scheduler_schedule"]["maintenance"].GetAttr("verify"), "schedule_expression"); got != "cron(0 6 * * ? *)" {
		t.Errorf("verify schedule %q, want the variable's cron(0 6 * * ? *)", got)
	}
	// The archiver's environment names the tables verify reads and the
	// metrics' Deployment dimension the alarms use (local.name).
	env := attr(blocks(ev.resources["aws_lambda_function"]["function"].GetAttr("archiver"), "environment")[0], "variables").AsValueMap()
	if env["STREAMFOLD_PREFIX"].AsString()+"-"+env["STREAMFOLD_STAGE"].AsString() != "streamfold-dev" {
		t.Errorf("archiver environment %v: STREAMFOLD_PREFIX-STREAMFOLD_STAGE must be local.name", env)
	}
	for _, a := range ev.instancesOf("resource", "aws_cloudwatch_metric_alarm") {
		if m := getStr(a.Obj, "metric_name"); m != "MaintenanceSucceeded" && m != "VerifyDifferences" {
			continue
		}
		if d := attr(a.Obj, "dimensions").AsValueMap()["Deployment"]; d.AsString() != "streamfold-dev" {
			t.Errorf("%s: Deployment dimension %q, want local.name", a.Addr, d.AsString())
		}
		if getStr(a.Obj, "metric_name") == "MaintenanceSucceeded" && getStr(a.Obj, "treat_missing_data") != "breaching" {
			t.Errorf("%s: treat_missing_data %q, want breaching (a task that never ran must alarm)", a.Addr, getStr(a.Obj, "treat_missing_data"))
		}
	}
}

// TestMaintenanceCheckCatchesDrift mutates maintenance.tf.
func TestMaintenanceCheckCatchesDrift(t *testing.T) {
	files := readConfigFiles(t)
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"format-specific input", `input    = jsonencode({ maintenance = { task = each.key } })`, `input    = jsonencode({ parquet_compact = each.key })`, []string{
			`aws_scheduler_schedule.maintenance["compact"]: target input {"parquet_compact":"compact"}, want {"maintenance":{"task":"compact"}}`,
			`aws_scheduler_schedule.maintenance["verify"]: target input {"parquet_compact":"verify"}, want {"maintenance":{"task":"verify"}}`,
		}},
		{"scheduler may invoke any function", `resources = [aws_lambda_function.function["archiver"].arn]`, `resources = [aws_lambda_function.function["archiver"].arn, aws_lambda_function.function["api"].arn]`, []string{
			`scheduler policy grants [Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["archiver"] Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["api"]], want exactly Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["archiver"]`,
		}},
		{"no confused-deputy condition", `variable = "aws:SourceAccount"`, `variable = "aws:SourceArn"`, []string{
			`scheduler_assume: aws:SourceAccount [], want this account (confused deputy)`,
		}},
		{"local time", `schedule_expression_timezone = "UTC"`, `schedule_expression_timezone = "Europe/Berlin"`, []string{
			`aws_scheduler_schedule.maintenance["compact"]: schedule_expression_timezone "Europe/Berlin", want UTC (the task's day is a UTC day)`,
			`aws_scheduler_schedule.maintenance["verify"]: schedule_expression_timezone "Europe/Berlin", want UTC (the task's day is a UTC day)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := strings.Count(string(files["terraform/maintenance.tf"]), tt.from); n != 1 {
				t.Fatalf("maintenance.tf has %d occurrences of %q, want 1", n, tt.from)
			}
			got := checkMaintenance(evaluateFiles(t, replaced(files, "terraform/maintenance.tf", tt.from, tt.to), evalOptions{}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestMaintenancePaused: by default every schedule is enabled and its
// missed alarm notifies; maintenance_paused = ["compact"] disables the
// compact schedule and its alarm's notifications only.
func TestMaintenancePaused(t *testing.T) {
	for _, paused := range [][]string{nil, {"compact"}} {
		vars := map[string]cty.Value{"maintenance_paused": cty.ListValEmpty(cty.String)}
		if len(paused) > 0 {
			vars["maintenance_paused"] = cty.ListVal([]cty.Value{cty.StringVal(paused[0])})
		}
		_, ev := loadEvaluated(t, evalOptions{Vars: vars})
		isPaused := func(task string) bool { return len(paused) > 0 && paused[0] == task }
		for _, in := range ev.instancesOf("resource", "aws_scheduler_schedule") {
			if in.Block.Name != "maintenance" {
				continue
			}
			want := "ENABLED"
			if isPaused(in.Key) {
				want = "DISABLED"
			}
			if got := getStr(in.Obj, "state"); got != want {
				t.Errorf("paused %v: %s: state %q, want %q", paused, in.Addr, got, want)
			}
		}
		for _, in := range ev.instancesOf("resource", "aws_cloudwatch_metric_alarm") {
			if in.Block.Name != "maintenance_missed" {
				continue
			}
			if got := attr(in.Obj, "actions_enabled"); got == nilValue || got.True() == isPaused(in.Key) {
				t.Errorf("paused %v: %s: actions_enabled %v, want %v", paused, in.Addr, got, !isPaused(in.Key))
			}
		}
	}
}

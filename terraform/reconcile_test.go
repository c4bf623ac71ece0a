package terraform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// checkReconcile reports what is wrong with the scheduled reconcile
// (reconcile.tf): one schedule, var.reconcile_schedule in UTC, invoking the
// reconcile function with {"since": var.reconcile_window, "heal":
// var.reconcile_heal} (the payload cmd/reconcile's Request reads) through
// its own scheduler role; that role assumable through the scheduler_assume
// document (EventBridge Scheduler of this account, maintenance_test.go
// checks it) and allowed exactly lambda:InvokeFunction on the reconcile
// function; the function's environment giving the same window and heal;
// the gaps alarm on the metric cmd/reconcile writes.
func checkReconcile(ev *evaluated) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	window, heal := ev.vars["reconcile_window"].AsString(), ev.vars["reconcile_heal"].True()

	var schedules []*instance
	for _, in := range ev.instancesOf("resource", "aws_scheduler_schedule") {
		if in.Block.Name == "reconcile" {
			schedules = append(schedules, in)
		}
	}
	if len(schedules) != 1 {
		fail("%d aws_scheduler_schedule.reconcile, want 1", len(schedules))
	}
	for _, in := range schedules {
		o := in.Obj
		if !attr(o, "schedule_expression").RawEquals(ev.vars["reconcile_schedule"]) {
			fail("%s: schedule_expression %s, want var.reconcile_schedule", in.Addr, attr(o, "schedule_expression").GoString())
		}
		if got := getStr(o, "schedule_expression_timezone"); got != "UTC" {
			fail("%s: schedule_expression_timezone %q, want UTC", in.Addr, got)
		}
		if st := attr(o, "state"); st != nilValue && !st.IsNull() && st.AsString() != "ENABLED" {
			fail("%s: state %q, want enabled", in.Addr, st.AsString())
		}
		targets := blocks(o, "target")
		if len(targets) != 1 {
			fail("%s: %d targets, want 1", in.Addr, len(targets))
			continue
		}
		tg := targets[0]
		if got, want := getStr(tg, "arn"), `arn:fake:aws_lambda_function.function["reconcile"]`; got != want {
			fail("%s: target %q, want the reconcile function %s", in.Addr, got, want)
		}
		if got, want := getStr(tg, "role_arn"), "arn:fake:aws_iam_role.reconcile_scheduler"; got != want {
			fail("%s: target role %q, want %s", in.Addr, got, want)
		}
		var input any
		want := map[string]any{"since": window, "heal": heal}
		if err := json.Unmarshal([]byte(getStr(tg, "input")), &input); err != nil || !reflect.DeepEqual(input, want) {
			fail("%s: target input %s, want %v", in.Addr, getStr(tg, "input"), want)
		}
	}

	// The function's defaults for an on-demand invocation are the
	// schedule's: RECONCILE_WINDOW and RECONCILE_HEAL (cmd/reconcile).
	fn := ev.resources["aws_lambda_function"]["function"].GetAttr("reconcile")
	env := attr(blocks(fn, "environment")[0], "variables").AsValueMap()
	if got := env["RECONCILE_WINDOW"]; got == cty.NilVal || got.AsString() != window {
		fail("reconcile environment RECONCILE_WINDOW %v, want var.reconcile_window %q", got, window)
	}
	if got := env["RECONCILE_HEAL"]; got == cty.NilVal || got.AsString() != fmt.Sprint(heal) {
		fail("reconcile environment RECONCILE_HEAL %v, want %v (var.reconcile_heal)", got, heal)
	}

	role := ev.resources["aws_iam_role"]["reconcile_scheduler"]
	if role == cty.NilVal {
		fail("no aws_iam_role.reconcile_scheduler")
	} else if got := getStr(role, "assume_role_policy"); got != "json:data.aws_iam_policy_document.scheduler_assume" {
		fail("aws_iam_role.reconcile_scheduler: assume_role_policy %q, want the scheduler_assume document", got)
	}
	var grants []string
	for _, st := range statements(ev)["reconcile_scheduler"] {
		for _, a := range st.actions {
			for _, r := range st.resources {
				grants = append(grants, st.effect+" "+a+" on "+r)
			}
		}
	}
	if want := `Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["reconcile"]`; strings.Join(grants, "; ") != want {
		fail("reconcile_scheduler policy grants %v, want exactly %s", grants, want)
	}
	var policies []string
	for _, p := range ev.instancesOf("resource", "aws_iam_role_policy") {
		if getStr(p.Obj, "role") == "id:aws_iam_role.reconcile_scheduler" {
			policies = append(policies, getStr(p.Obj, "policy"))
		}
	}
	if strings.Join(policies, ",") != "json:data.aws_iam_policy_document.reconcile_scheduler" {
		fail("the reconcile scheduler role's inline policies %v, want exactly the reconcile_scheduler document", policies)
	}

	a := ev.resources["aws_cloudwatch_metric_alarm"]["reconcile_gaps"]
	if a == cty.NilVal {
		fail("no aws_cloudwatch_metric_alarm.reconcile_gaps")
		return errs
	}
	dims := map[string]string{}
	for k, v := range attr(a, "dimensions").AsValueMap() {
		dims[k] = v.AsString()
	}
	if getStr(a, "namespace") != "Streamfold" || getStr(a, "metric_name") != "ReconcileGaps" || len(dims) != 1 || dims["Deployment"] != "streamfold-dev" {
		fail("reconcile_gaps: %s/%s %v, want Streamfold/ReconcileGaps with only Deployment=local.name (the total line cmd/reconcile writes)", getStr(a, "namespace"), getStr(a, "metric_name"), dims)
	}
	if getStr(a, "treat_missing_data") != "notBreaching" || getStr(a, "comparison_operator") != "GreaterThanThreshold" {
		fail("reconcile_gaps: %s with missing data %s, want GreaterThanThreshold 0, notBreaching", getStr(a, "comparison_operator"), getStr(a, "treat_missing_data"))
	}
	return errs
}

func TestReconcileSchedule(t *testing.T) {
	for _, vars := range []map[string]cty.Value{
		nil,
		{"reconcile_heal": cty.True, "reconcile_window": cty.StringVal("50h"), "reconcile_schedule": cty.StringVal("cron(0 */12 * * ? *)")},
	} {
		_, ev := loadEvaluated(t, evalOptions{Vars: vars})
		for _, e := range checkReconcile(ev) {
			t.Errorf("vars %v: %s", vars, e)
		}
	}
	// The defaults: daily, a 26 h window, no heal.
	_, ev := loadEvaluated(t, evalOptions{})
	tg := blocks(ev.resources["aws_scheduler_schedule"]["reconcile"], "target")[0]
	if got := getStr(ev.resources["aws_scheduler_schedule"]["reconcile"], "schedule_expression"); !strings.HasPrefix(got, "cron(") || !strings.HasSuffix(got, " * * ? *)") {
		t.Errorf("default schedule %q, want a daily cron(...)", got)
	}
	if got := getStr(tg, "input"); got != `{"heal":false,"since":"26h"}` {
		t.Errorf("default input %s", got)
	}
}

// TestReconcileCheckCatchesDrift mutates reconcile.tf.
func TestReconcileCheckCatchesDrift(t *testing.T) {
	files := readConfigFiles(t)
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"heal hard-wired in the input", `input    = jsonencode({ since = var.reconcile_window, heal = var.reconcile_heal })`, `input    = jsonencode({ since = var.reconcile_window, heal = true })`, []string{
			`aws_scheduler_schedule.reconcile: target input {"heal":true,"since":"26h"}, want map[heal:false since:26h]`,
		}},
		{"scheduler may invoke the archiver too", `resources = [aws_lambda_function.function["reconcile"].arn]`, `resources = [aws_lambda_function.function["reconcile"].arn, aws_lambda_function.function["archiver"].arn]`, []string{
			`reconcile_scheduler policy grants [Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["reconcile"] Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["archiver"]], want exactly Allow lambda:InvokeFunction on arn:fake:aws_lambda_function.function["reconcile"]`,
		}},
		{"maintenance's scheduler role", `role_arn = aws_iam_role.reconcile_scheduler.arn`, `role_arn = aws_iam_role.scheduler.arn`, []string{
			`aws_scheduler_schedule.reconcile: target role "arn:fake:aws_iam_role.scheduler", want arn:fake:aws_iam_role.reconcile_scheduler`,
		}},
		{"alarm on a per-kind metric", `metric_name       = "ReconcileGaps"
  dimensions = {
    Deployment = local.name
  }`, `metric_name       = "ReconcileGaps"
  dimensions = {
    Deployment = local.name
    Kind       = "archive"
  }`, []string{
			`reconcile_gaps: Streamfold/ReconcileGaps map[Deployment:streamfold-dev Kind:archive], want Streamfold/ReconcileGaps with only Deployment=local.name (the total line cmd/reconcile writes)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := strings.Count(string(files["terraform/reconcile.tf"]), tt.from); n != 1 {
				t.Fatalf("reconcile.tf has %d occurrences of %q, want 1", n, tt.from)
			}
			got := checkReconcile(evaluateFiles(t, replaced(files, "terraform/reconcile.tf", tt.from, tt.to), evalOptions{}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

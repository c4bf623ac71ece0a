package terraform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// streamConsumers are the functions that read the event table's stream.
var streamConsumers = []string{"archiver", "projector"}

// checkESMs reports every event source mapping that lacks the failure
// settings of issue 5: ReportBatchItemFailures, bisection, bounded retries
// and record age, the on-failure S3 bucket, metrics_config EventCount, an INSERT-only filter,
// parallelization 1, TRIM_HORIZON, and batch size and window from the
// consumer's own variables. It also wants exactly one mapping per stream
// consumer, on the events table's stream.
func checkESMs(ev *evaluated) []string {
	var errs []string
	var keys []string
	for _, in := range ev.instancesOf("resource", "aws_lambda_event_source_mapping") {
		keys = append(keys, in.Key)
		o := in.Obj
		fail := func(format string, a ...any) { errs = append(errs, in.Addr+": "+fmt.Sprintf(format, a...)) }
		num := func(name string) (int64, bool) {
			v := attr(o, name)
			if v == nilValue || v.IsNull() || v.Type() != cty.Number {
				return 0, false
			}
			n, _ := v.AsBigFloat().Int64()
			return n, true
		}
		if got, want := getStr(o, "event_source_arn"), "arn:fake:aws_dynamodb_table.table[\"events\"]/stream/2024-01-01T00:00:00.000"; got != want {
			fail("event_source_arn %q, want the events table's stream_arn", got)
		}
		if got, want := getStr(o, "function_name"), fmt.Sprintf(`arn:fake:aws_lambda_function.function[%q]`, in.Key); got != want {
			fail("function_name %q, want %s", got, want)
		}
		if got := getStr(o, "starting_position"); got != "TRIM_HORIZON" {
			fail("starting_position %q, want TRIM_HORIZON (a new mapping reads the 24 h the stream still holds)", got)
		}
		if frt, err := stringList(attr(o, "function_response_types")); err != nil || !reflect.DeepEqual(frt, []string{"ReportBatchItemFailures"}) {
			fail("function_response_types %v, want [ReportBatchItemFailures]", frt)
		}
		if v := attr(o, "bisect_batch_on_function_error"); v == nilValue || v.Type() != cty.Bool || !v.True() {
			fail("bisect_batch_on_function_error is not true")
		}
		if n, ok := num("parallelization_factor"); !ok || n != 1 {
			fail("parallelization_factor %v, want 1 (order per aggregate)", attr(o, "parallelization_factor").GoString())
		}
		if n, ok := num("maximum_retry_attempts"); !ok || n < -1 {
			fail("maximum_retry_attempts must be set (-1 or more)")
		}
		// With unlimited retries, the bounded age is what sends a record to
		// the on-failure queue: it must be 60 s to 24 h (the stream's retention).
		if n, ok := num("maximum_record_age_in_seconds"); !ok || n < 60 || n > 86400 {
			fail("maximum_record_age_in_seconds must be set, 60-86400 (stream records live 24 h)")
		}
		for _, sv := range [][2]string{{"batch_size", in.Key + "_batch_size"}, {"maximum_batching_window_in_seconds", in.Key + "_batching_window_seconds"}, {"maximum_retry_attempts", in.Key + "_maximum_retry_attempts"}} {
			setting, variable := sv[0], sv[1]
			want, ok := ev.vars[variable]
			got := attr(o, setting)
			if !ok || got == nilValue || !got.RawEquals(want) {
				fail("%s %s, want var.%s", setting, got.GoString(), variable)
			}
		}
		dest := ""
		for _, dc := range blocks(o, "destination_config") {
			for _, of := range blocks(dc, "on_failure") {
				dest = getStr(of, "destination_arn")
			}
		}
		// S3 keeps the whole failed batch (the records); SQS/SNS only its range.
		if want := "arn:fake:aws_s3_bucket.failures"; dest != want {
			fail("on-failure destination %q, want the S3 bucket %s (it keeps the records; SQS/SNS only the range)", dest, want)
		}
		var metrics []string
		for _, mc := range blocks(o, "metrics_config") {
			metrics, _ = stringList(attr(mc, "metrics"))
		}
		if !reflect.DeepEqual(metrics, []string{"EventCount"}) {
			fail("metrics_config metrics %v, want [EventCount] (the alarms on DroppedEventCount and FailedInvokeEventCount need it)", metrics)
		}
		var patterns []string
		for _, fc := range blocks(o, "filter_criteria") {
			for _, f := range blocks(fc, "filter") {
				patterns = append(patterns, getStr(f, "pattern"))
			}
		}
		if len(patterns) != 1 {
			fail("%d filter patterns, want exactly one keeping INSERT", len(patterns))
		} else {
			var p map[string]any
			if err := json.Unmarshal([]byte(patterns[0]), &p); err != nil || !reflect.DeepEqual(p, map[string]any{"eventName": []any{"INSERT"}}) {
				fail(`filter pattern %s, want {"eventName":["INSERT"]}`, patterns[0])
			}
		}
	}
	if strings.Join(keys, ",") != strings.Join(streamConsumers, ",") {
		errs = append(errs, fmt.Sprintf("event source mappings for %v, want one per stream consumer %v", keys, streamConsumers))
	}
	return errs
}

func TestEventSourceMappings(t *testing.T) {
	// Non-default batch settings prove they come from each consumer's variables.
	_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{
		"projector_batch_size": cty.NumberIntVal(123), "projector_batching_window_seconds": cty.NumberIntVal(4),
		"archiver_batch_size": cty.NumberIntVal(4567), "archiver_batching_window_seconds": cty.NumberIntVal(89),
	}})
	for _, e := range checkESMs(ev) {
		t.Error(e)
	}
	for _, in := range ev.instancesOf("resource", "aws_lambda_event_source_mapping") {
		want := map[string]int64{"projector": 123, "archiver": 4567}[in.Key]
		if n, _ := attr(in.Obj, "batch_size").AsBigFloat().Int64(); n != want {
			t.Errorf("%s: batch_size %d, want %d", in.Addr, n, want)
		}
	}
}

// TestParallelizationFactorSaysWhy: the setting carries its reason.
func TestParallelizationFactorSaysWhy(t *testing.T) {
	files := readConfigFiles(t)
	cfg, err := parseConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range cfg.find("resource", "aws_lambda_event_source_mapping") {
		a, ok := b.Block.Body.Attributes["parallelization_factor"]
		if !ok {
			t.Fatalf("%s: no parallelization_factor", b.Addr())
		}
		src := string(files[b.File])
		before := src[:a.SrcRange.Start.Byte]
		lines := strings.Split(before, "\n")
		comment := ""
		for i := len(lines) - 2; i >= 0 && strings.HasPrefix(strings.TrimSpace(lines[i]), "#"); i-- {
			comment = strings.TrimSpace(lines[i]) + " " + comment
		}
		for _, word := range []string{"order", "aggregate", "per item"} {
			if !strings.Contains(comment, word) {
				t.Errorf("%s: the comment above parallelization_factor must say why (mention %q); it is %q", b.Addr(), word, comment)
			}
		}
	}
}

// TestESMCheckCatchesDrift mutates streams.tf and expects each problem named.
func TestESMCheckCatchesDrift(t *testing.T) {
	files := readConfigFiles(t)
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"no bisection", "bisect_batch_on_function_error = true", "bisect_batch_on_function_error = false", []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: bisect_batch_on_function_error is not true`,
			`aws_lambda_event_source_mapping.stream["projector"]: bisect_batch_on_function_error is not true`,
		}},
		{"parallelization 2", "parallelization_factor = 1", "parallelization_factor = 2", []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: parallelization_factor cty.NumberIntVal(2), want 1 (order per aggregate)`,
			`aws_lambda_event_source_mapping.stream["projector"]: parallelization_factor cty.NumberIntVal(2), want 1 (order per aggregate)`,
		}},
		{"MODIFY passes the filter", `eventName = ["INSERT"]`, `eventName = ["INSERT", "MODIFY"]`, []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: filter pattern {"eventName":["INSERT","MODIFY"]}, want {"eventName":["INSERT"]}`,
			`aws_lambda_event_source_mapping.stream["projector"]: filter pattern {"eventName":["INSERT","MODIFY"]}, want {"eventName":["INSERT"]}`,
		}},
		{"no partial batch responses", `function_response_types        = ["ReportBatchItemFailures"]`, `function_response_types        = []`, []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: function_response_types [], want [ReportBatchItemFailures]`,
			`aws_lambda_event_source_mapping.stream["projector"]: function_response_types [], want [ReportBatchItemFailures]`,
		}},
		{"shared batch size", "batch_size                         = each.value.batch_size", "batch_size                         = var.projector_batch_size", []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: batch_size cty.NumberIntVal(500), want var.archiver_batch_size`,
		}},
		{"on-failure to SQS", "destination_arn = aws_s3_bucket.failures.arn", "destination_arn = aws_sqs_queue.failures[\"ingest\"].arn", []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: on-failure destination "arn:fake:aws_sqs_queue.failures[\"ingest\"]", want the S3 bucket arn:fake:aws_s3_bucket.failures (it keeps the records; SQS/SNS only the range)`,
			`aws_lambda_event_source_mapping.stream["projector"]: on-failure destination "arn:fake:aws_sqs_queue.failures[\"ingest\"]", want the S3 bucket arn:fake:aws_s3_bucket.failures (it keeps the records; SQS/SNS only the range)`,
		}},
		{"no ESM metrics", `metrics = ["EventCount"]`, `metrics = []`, []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: metrics_config metrics [], want [EventCount] (the alarms on DroppedEventCount and FailedInvokeEventCount need it)`,
			`aws_lambda_event_source_mapping.stream["projector"]: metrics_config metrics [], want [EventCount] (the alarms on DroppedEventCount and FailedInvokeEventCount need it)`,
		}},
		{"record age unbounded", "maximum_record_age_in_seconds  = var.stream_maximum_record_age_seconds", "maximum_record_age_in_seconds  = -1", []string{
			`aws_lambda_event_source_mapping.stream["archiver"]: maximum_record_age_in_seconds must be set, 60-86400 (stream records live 24 h)`,
			`aws_lambda_event_source_mapping.stream["projector"]: maximum_record_age_in_seconds must be set, 60-86400 (stream records live 24 h)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := string(files["terraform/streams.tf"])
			if strings.Count(src, tt.from) != 1 {
				t.Fatalf("streams.tf has %d occurrences of %q, want 1", strings.Count(src, tt.from), tt.from)
			}
			got := checkESMs(evaluateFiles(t, replaced(files, "terraform/streams.tf", tt.from, tt.to), evalOptions{}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("checkESMs reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

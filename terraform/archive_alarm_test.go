package terraform

import (
	"testing"

	"github.com/streamfold/streamfold/archiver"
)

// TestArchiveUnavailableAlarm: the alarm watches the metric the archiver's
// handler writes when the archive is gone (same namespace, name and
// Deployment dimension as the function's STREAMFOLD_PREFIX-STREAMFOLD_STAGE),
// firing on the first failed batch.
func TestArchiveUnavailableAlarm(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{})
	n := 0
	for _, in := range ev.instancesOf("resource", "aws_cloudwatch_metric_alarm") {
		if getStr(in.Obj, "metric_name") != archiver.UnavailableMetric {
			continue
		}
		n++
		if ns := getStr(in.Obj, "namespace"); ns != archiver.UnavailableNamespace {
			t.Errorf("%s: namespace %q, want %q", in.Addr, ns, archiver.UnavailableNamespace)
		}
		dims := attr(in.Obj, "dimensions")
		if getStr(dims, "Deployment") != "streamfold-dev" || len(dims.AsValueMap()) != 1 {
			t.Errorf("%s: dimensions %v, want Deployment = local.name only", in.Addr, dims)
		}
		if th, _ := attr(in.Obj, "threshold").AsBigFloat().Float64(); th != 1 || getStr(in.Obj, "statistic") != "Sum" ||
			getStr(in.Obj, "comparison_operator") != "GreaterThanOrEqualToThreshold" {
			t.Errorf("%s: must fire on the first failed batch (Sum >= 1)", in.Addr)
		}
	}
	if n != 1 {
		t.Fatalf("%d alarms on %s, want one", n, archiver.UnavailableMetric)
	}
}

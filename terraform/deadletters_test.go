package terraform

import (
	"testing"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestDeadLetterAlarms: each consumer that writes dead letters in AWS has
// an alarm on the metric the code emits (same namespace, name and
// dimensions), firing on the first one; the table expires them with the
// retention the code writes (the drift test checks the ttl block).
func TestDeadLetterAlarms(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{})
	got := map[string]bool{}
	for _, in := range ev.instancesOf("resource", "aws_cloudwatch_metric_alarm") {
		if getStr(in.Obj, "metric_name") != projector.DeadLetterMetric {
			continue
		}
		got[in.Key] = true
		if ns := getStr(in.Obj, "namespace"); ns != projector.DeadLetterNamespace {
			t.Errorf("%s: namespace %q, want %q", in.Addr, ns, projector.DeadLetterNamespace)
		}
		dims := attr(in.Obj, "dimensions")
		if getStr(dims, "Consumer") != in.Key || getStr(dims, "Table") == "" || len(dims.AsValueMap()) != 2 {
			t.Errorf("%s: dimensions %v, want Table and Consumer %s", in.Addr, dims, in.Key)
		}
		if n, _ := attr(in.Obj, "threshold").AsBigFloat().Float64(); n != 1 || getStr(in.Obj, "statistic") != "Sum" {
			t.Errorf("%s: must fire on the first dead letter (Sum >= 1)", in.Addr)
		}
	}
	for _, c := range []string{"projector", "ingest"} {
		if !got[c] {
			t.Errorf("no dead-letter alarm for %s", c)
		}
	}
	if spec, _ := schema.TableSpec(schema.TableDeadLetters); spec.TTLAttribute == "" || spec.TTLDays != schema.DeadLetterRetentionDays {
		t.Errorf("dead-letters spec: ttl %q %d days", spec.TTLAttribute, spec.TTLDays)
	}
}

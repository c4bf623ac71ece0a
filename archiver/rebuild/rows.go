package rebuild

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Row kind names.
const (
	KindWorkflowMetrics = "workflow-metrics" // seed 001 sf/ldf daily metrics rows (workflows table)
	KindMessageCounts   = "message-counts"   // seed 004 per-stage daily message counts (metrics table)
	KindRunSummaries    = "run-summaries"    // seed 003 run summaries (workflow-runs table)
)

// RowKind is one kind of derived counter row that Verify compares.
type RowKind struct {
	// Name is one of the Kind* constants.
	Name string
	// Table is the logical table holding the rows.
	Table string
	// Population is the counter that counts the aggregates contributing to
	// a row. A row where it is zero or absent is empty: no aggregate
	// contributes any more (e.g. an execution whose creation date moved
	// when an earlier event arrived late). An empty row is equivalent to no
	// row, because every counter of it is zero.
	Population string
	// Derived lists the attributes projector.DeriveRow computes from the
	// counters, with the absolute tolerance their numbers are compared
	// with (0: exactly; strings always exactly).
	Derived map[string]float64

	// With is a second logical table whose items a kind that sums also
	// sums (run summaries: workflow-jobs, whose items are their jobs'
	// shares); empty for the others.
	With string

	match func(map[string]types.AttributeValue) bool
	// summarize, when set, makes the kind's rows from the items of its
	// table that match and the items of With (run summaries:
	// schema.SummarizeRuns); nil: the items are the rows.
	summarize func(items, with []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error)
}

// Matches reports whether an item of the kind's table is one of its rows
// (or, for a kind that sums items into rows, one of the items it sums).
func (k RowKind) Matches(item map[string]types.AttributeValue) bool {
	return k.match == nil || k.match(item)
}

// Rows returns the kind's rows among items of its table: those that match,
// summed with the items of its With table (with) into rows for a kind that
// sums (run summaries).
func (k RowKind) Rows(items, with []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for _, it := range items {
		if k.Matches(it) {
			out = append(out, it)
		}
	}
	if k.summarize == nil {
		return out, nil
	}
	return k.summarize(out, with)
}

func strAttr(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// RowKinds returns the row kinds Verify compares, in report order.
func RowKinds() []RowKind {
	return []RowKind{
		{
			Name: KindWorkflowMetrics, Table: schema.TableWorkflows, Population: "executionCount",
			// avgDurationMs is rounded to whole milliseconds, avgCostPerExecution to micro-dollars.
			Derived: map[string]float64{"avgDurationMs": 1, "avgCostPerExecution": 0.000001},
			match:   func(it map[string]types.AttributeValue) bool { return strAttr(it, "entityType") == "metrics" },
		},
		{
			Name: KindMessageCounts, Table: schema.TableMetrics, Population: "total",
			match: func(it map[string]types.AttributeValue) bool {
				return strings.HasPrefix(strAttr(it, "scope"), schema.MessageScopePrefix)
			},
		},
		{
			// Summed from the jobs' items (and what workflow-runs holds:
			// shares of jobs not in GSI3, an older projector's summary
			// rows) by schema.SummarizeRuns, which also derives status
			// and conclusion: compared as they come.
			Name: KindRunSummaries, Table: schema.TableWorkflowRuns, Population: "total_jobs",
			With: schema.TableWorkflowJobs, summarize: schema.SummarizeRuns,
		},
	}
}

// workflowTypes are the partitions of workflows GSI1 holding metrics rows
// ([workflowType, entityType = "metrics"]); schema.Validate admits no other
// workflow type.
var workflowTypes = []string{schema.WorkflowStepFunctions, schema.WorkflowDurableFunctions}

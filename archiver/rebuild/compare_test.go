package rebuild

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

type row = map[string]types.AttributeValue

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func kindNamed(t *testing.T, name string) RowKind {
	t.Helper()
	for _, k := range RowKinds() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no row kind %q", name)
	return RowKind{}
}

func metricsRow(date string, attrs row) row {
	r := row{"pk": s(date), "sk": s("metrics-step-functions"), "entityType": s("metrics"), "workflowType": s("step-functions"),
		"executionCount": n("4"), "successCount": n("3"), "failureCount": n("1"), "totalCost": n("0.024"),
		"durationSumMs": n("1000"), "durationCount": n("3"), "avgDurationMs": n("333"), "avgCostPerExecution": n("0.006")}
	for k, v := range attrs {
		if v == nil {
			delete(r, k)
			continue
		}
		r[k] = v
	}
	return r
}

func strp(v string) *string { return &v }

func TestCompare(t *testing.T) {
	key := map[string]string{"pk": "2026-01-05", "sk": "metrics-step-functions"}
	diff := func(attr string, a, p *string) Difference {
		return Difference{Kind: KindWorkflowMetrics, Table: schema.TableWorkflows, Key: key, Problem: Differs, Attribute: attr, Archive: a, Projection: p}
	}
	tests := []struct {
		name          string
		archive, live []row
		tol           map[string]float64
		want          []Difference
	}{
		{"equal", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", nil)}, nil, nil},
		{"numbers compare as decimals", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"totalCost": n("0.0240")})}, nil, nil},
		{"counter differs", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"successCount": n("4")})}, nil,
			[]Difference{diff("successCount", strp("3"), strp("4"))}},
		{"absent counter equals zero", []row{metricsRow("2026-01-05", row{"failureCount": nil})}, []row{metricsRow("2026-01-05", row{"failureCount": n("0")})}, nil, nil},
		{"absent counter is not one", []row{metricsRow("2026-01-05", row{"failureCount": nil})}, []row{metricsRow("2026-01-05", nil)}, nil,
			[]Difference{diff("failureCount", nil, strp("1"))}},
		{"average within tolerance", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"avgDurationMs": n("333.9"), "avgCostPerExecution": n("0.0060005")})}, nil, nil},
		{"average beyond tolerance", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"avgDurationMs": n("335")})}, nil,
			[]Difference{diff("avgDurationMs", strp("333"), strp("335"))}},
		{"tolerance overridden", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"avgDurationMs": n("335")})}, map[string]float64{"avgDurationMs": 5}, nil},
		{"counters have no tolerance", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"totalCost": n("0.024000001")})}, nil,
			[]Difference{diff("totalCost", strp("0.024"), strp("0.024000001"))}},
		{"static string differs", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"workflowType": s("durable-functions")})}, nil,
			[]Difference{diff("workflowType", strp("step-functions"), strp("durable-functions"))}},
		{"type differs", []row{metricsRow("2026-01-05", nil)}, []row{metricsRow("2026-01-05", row{"successCount": s("3")})}, nil,
			[]Difference{diff("successCount", strp("3"), strp("3"))}},
		{"row missing from projection", []row{metricsRow("2026-01-05", nil)}, nil, nil,
			[]Difference{{Kind: KindWorkflowMetrics, Table: schema.TableWorkflows, Key: key, Problem: MissingInProjection, Attribute: "executionCount", Archive: strp("4")}}},
		{"row missing from archive", nil, []row{metricsRow("2026-01-05", nil)}, nil,
			[]Difference{{Kind: KindWorkflowMetrics, Table: schema.TableWorkflows, Key: key, Problem: MissingInArchive, Attribute: "executionCount", Projection: strp("4")}}},
		{"empty row equals no row", nil, []row{metricsRow("2026-01-05", row{"executionCount": n("0"), "successCount": n("0")})}, nil, nil},
		{"several differences sorted by key then attribute",
			[]row{metricsRow("2026-01-06", nil), metricsRow("2026-01-05", nil)},
			[]row{metricsRow("2026-01-05", row{"successCount": n("9"), "failureCount": n("7")}), metricsRow("2026-01-06", row{"durationCount": n("2")})}, nil,
			[]Difference{
				diff("failureCount", strp("1"), strp("7")),
				diff("successCount", strp("3"), strp("9")),
				{Kind: KindWorkflowMetrics, Table: schema.TableWorkflows, Key: map[string]string{"pk": "2026-01-06", "sk": "metrics-step-functions"}, Problem: Differs, Attribute: "durationCount", Archive: strp("3"), Projection: strp("2")},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(kindNamed(t, KindWorkflowMetrics), tt.archive, tt.live, tt.tol)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Compare:\n got %s\nwant %s", showDiffs(got), showDiffs(tt.want))
			}
		})
	}
}

func TestCompareRunSummaryStatus(t *testing.T) {
	run := func(status, conclusion string) row {
		r := row{"pk": s("1#2#1"), "sk": s("v"), "total_jobs": n("2"), "completed_jobs": n("2"), "status": s(status)}
		if conclusion != "" {
			r["conclusion"] = s(conclusion)
		}
		return r
	}
	got := Compare(kindNamed(t, KindRunSummaries), []row{run("completed", "success")}, []row{run("in_progress", "")}, nil)
	key := map[string]string{"pk": "1#2#1", "sk": "v"}
	want := []Difference{
		{Kind: KindRunSummaries, Table: schema.TableWorkflowRuns, Key: key, Problem: Differs, Attribute: "conclusion", Archive: strp("success")},
		{Kind: KindRunSummaries, Table: schema.TableWorkflowRuns, Key: key, Problem: Differs, Attribute: "status", Archive: strp("completed"), Projection: strp("in_progress")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Compare:\n got %s\nwant %s", showDiffs(got), showDiffs(want))
	}
}

func showDiffs(ds []Difference) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return "[" + strings.Join(out, "; ") + "]"
}

func TestDifferenceString(t *testing.T) {
	key := map[string]string{"scope": "messages/prod", "date": "2026-01-05"}
	tests := []struct {
		d    Difference
		want string
	}{
		{Difference{Table: "metrics", Key: key, Problem: Differs, Attribute: "total", Archive: strp("3"), Projection: strp("4")},
			"metrics date=2026-01-05 scope=messages/prod: total: archive 3, projection 4"},
		{Difference{Table: "metrics", Key: key, Problem: Differs, Attribute: "failed", Projection: strp("1")},
			"metrics date=2026-01-05 scope=messages/prod: failed: archive (absent), projection 1"},
		{Difference{Table: "metrics", Key: key, Problem: MissingInProjection, Attribute: "total", Archive: strp("3")},
			"metrics date=2026-01-05 scope=messages/prod: row missing from the projection (archive total 3)"},
		{Difference{Table: "metrics", Key: key, Problem: MissingInArchive, Attribute: "total", Projection: strp("2")},
			"metrics date=2026-01-05 scope=messages/prod: row not explained by the archive (projection total 2)"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestReads checks the planned live reads: only the tables and index
// named, consistent scans, metrics rows by GSI1.
func TestReads(t *testing.T) {
	nm := schema.Naming{Prefix: "sf", Stage: "prod"}
	render := func(rs []read) string {
		var out []string
		for _, r := range rs {
			if r.scan != nil {
				f := ""
				if r.scan.FilterExpression != nil {
					f = fmt.Sprintf(" filter %s %v %v", aws.ToString(r.scan.FilterExpression), r.scan.ExpressionAttributeNames, *render(r.scan.ExpressionAttributeValues[":p"]))
				}
				out = append(out, fmt.Sprintf("scan %s consistent=%v%s", aws.ToString(r.scan.TableName), aws.ToBool(r.scan.ConsistentRead), f))
				continue
			}
			q := r.query
			out = append(out, fmt.Sprintf("query %s %s %s %v wt=%s et=%s", aws.ToString(q.TableName), aws.ToString(q.IndexName), aws.ToString(q.KeyConditionExpression),
				q.ExpressionAttributeNames, *render(q.ExpressionAttributeValues[":wt"]), *render(q.ExpressionAttributeValues[":et"])))
		}
		return strings.Join(out, "\n")
	}
	tests := []struct {
		kind string
		want string
	}{
		{KindWorkflowMetrics, "query sf-prod-workflows GSI1 #wt = :wt AND #et = :et map[#et:entityType #wt:workflowType] wt=step-functions et=metrics\n" +
			"query sf-prod-workflows GSI1 #wt = :wt AND #et = :et map[#et:entityType #wt:workflowType] wt=durable-functions et=metrics"},
		{KindMessageCounts, "scan sf-prod-metrics consistent=true filter begins_with(#s, :p) map[#s:scope] messages/"},
		{KindRunSummaries, "scan sf-prod-workflow-runs consistent=true\nscan sf-prod-workflow-jobs consistent=true"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			rs, err := reads(kindNamed(t, tt.kind), nm)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(rs); got != tt.want {
				t.Fatalf("reads:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	if _, err := reads(RowKind{Name: "nope"}, nm); err == nil || !strings.Contains(err.Error(), `unknown row kind "nope"`) {
		t.Fatalf("reads(nope) = %v", err)
	}
}

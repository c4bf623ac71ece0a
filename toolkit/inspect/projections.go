package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// ProjectionsOptions select the metrics rows of Projections.
type ProjectionsOptions struct {
	// Date, when set (YYYY-MM-DD), keeps only that day's metrics rows.
	Date string
}

// Validate checks the options; its errors name the field at fault.
func (o *ProjectionsOptions) Validate() error {
	if o.Date != "" {
		if _, err := time.Parse(time.DateOnly, o.Date); err != nil {
			return toolkit.Invalid("summary", "Date", nil, fmt.Sprintf("want YYYY-MM-DD, got %q", o.Date))
		}
	}
	return nil
}

// MetricsRow is a daily metrics row of the workflows table.
type MetricsRow struct {
	Date                string  `json:"date"`
	WorkflowType        string  `json:"workflowType"`
	ExecutionCount      int64   `json:"executionCount"`
	SuccessCount        int64   `json:"successCount"`
	FailureCount        int64   `json:"failureCount"`
	AvgDurationMs       float64 `json:"avgDurationMs"`
	TotalCost           float64 `json:"totalCost"`
	AvgCostPerExecution float64 `json:"avgCostPerExecution"`
}

// ProjectionsSummary is what was projected: the items of the event
// table, every projection table and the dead-letter table (keyed by
// logical name), and the sf vs ldf daily metrics rows by date.
type ProjectionsSummary struct {
	Items   map[string]int64 `json:"items"`
	Metrics []MetricsRow     `json:"metrics"`

	naming schema.Naming
}

// Projections counts the items of n's tables and reads the daily metrics
// rows through api (scans).
func Projections(ctx context.Context, api dynamodb.ScanAPIClient, n schema.Naming, o ProjectionsOptions) (*ProjectionsSummary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	sum := &ProjectionsSummary{Items: map[string]int64{}, naming: n}
	for _, t := range slices.Concat([]string{schema.TableEvents}, schema.ProjectionTables(), []string{schema.TableDeadLetters}) {
		var count int64
		p := dynamodb.NewScanPaginator(api, &dynamodb.ScanInput{TableName: aws.String(n.Table(t)), Select: types.SelectCount})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("count %s: %w", n.Table(t), err)
			}
			count += int64(page.Count)
		}
		sum.Items[t] = count
	}
	p := dynamodb.NewScanPaginator(api, &dynamodb.ScanInput{
		TableName:                 aws.String(n.Table(schema.TableWorkflows)),
		FilterExpression:          aws.String("entityType = :m"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: "metrics"}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		for _, it := range page.Items {
			if r := MetricsFromItem(it); o.Date == "" || r.Date == o.Date {
				sum.Metrics = append(sum.Metrics, r)
			}
		}
	}
	sortMetrics(sum.Metrics)
	return sum, nil
}

// sortMetrics orders rows by date, then workflow type descending (sf
// before ldf).
func sortMetrics(rows []MetricsRow) {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Date != rows[j].Date {
			return rows[i].Date < rows[j].Date
		}
		return rows[i].WorkflowType > rows[j].WorkflowType
	})
}

// MetricsFromItem reads a daily metrics row (averages are maintained by
// the projector from its exact sums; see projector.DeriveRow). An
// attribute that is absent or not a number reads as 0.
func MetricsFromItem(it map[string]types.AttributeValue) MetricsRow {
	var m schema.WorkflowMetricsItem
	_ = attributevalue.UnmarshalMap(it, &m)
	num := func(n json.Number) float64 {
		f, _ := n.Float64()
		return f
	}
	return MetricsRow{Date: m.Date, WorkflowType: m.WorkflowType,
		ExecutionCount: int64(num(m.ExecutionCount)), SuccessCount: int64(num(m.SuccessCount)), FailureCount: int64(num(m.FailureCount)),
		TotalCost: num(m.TotalCost), AvgDurationMs: num(m.AvgDurationMs), AvgCostPerExecution: num(m.AvgCostPerExecution)}
}

// WriteText prints two tables: the items per table (by full table name),
// then the metrics rows.
func (s *ProjectionsSummary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "projection\titems\t")
	names := make([]string, 0, len(s.Items))
	for k := range s.Items {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(tw, "%s\t%d\t\n", s.naming.Table(k), s.Items[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "date\tworkflow\texecutions\tsucceeded\tfailed\tavg ms\ttotal $\tavg $/exec\t")
	for _, r := range s.Metrics {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f\t%.4f\t%.6f\t\n", r.Date, r.WorkflowType, r.ExecutionCount, r.SuccessCount, r.FailureCount, r.AvgDurationMs, r.TotalCost, r.AvgCostPerExecution)
	}
	return tw.Flush()
}

package query

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// ExecutionWithAlbums is a seed 001 execution and its albums.
type ExecutionWithAlbums struct {
	Execution map[string]any   `json:"execution"`
	Albums    []map[string]any `json:"albums"`
}

// WorkflowExecution returns an sf/ldf execution with its albums, in album
// order: one Query on the workflows table's key (pk = executionId; sk
// "metadata" is the execution, "album-<n>" the albums), every page of it.
func (c *Client) WorkflowExecution(ctx context.Context, executionID string) (ExecutionWithAlbums, error) {
	if err := required("id", executionID); err != nil {
		return ExecutionWithAlbums{}, err
	}
	k := newCond().eq("pk", avS(executionID))
	items, _, err := c.all(ctx, "workflow execution", c.queryInput(schema.TableWorkflows, "", k, nil, true), c.cfg.MaxReadItems)
	if err != nil {
		return ExecutionWithAlbums{}, err
	}
	out := ExecutionWithAlbums{Albums: []map[string]any{}}
	var albums []schema.AlbumItem
	for _, it := range items {
		e, err := decodeItem[schema.WorkflowExecutionItem](it)
		if err != nil {
			return ExecutionWithAlbums{}, fmt.Errorf("query: workflow execution %s: %w", executionID, err)
		}
		switch e.EntityType {
		case schema.EntityExecution:
			out.Execution = Plain(it)
		case schema.EntityAlbum:
			a, err := decodeItem[schema.AlbumItem](it)
			if err != nil {
				return ExecutionWithAlbums{}, fmt.Errorf("query: workflow execution %s: %w", executionID, err)
			}
			albums = append(albums, a)
			out.Albums = append(out.Albums, Plain(it))
		}
	}
	if out.Execution == nil {
		return ExecutionWithAlbums{}, fmt.Errorf("%w: workflow execution %s", ErrNotFound, executionID)
	}
	sorted := make([]map[string]any, len(albums))
	for i, j := range stableOrder(albums, func(a, b schema.AlbumItem) bool { return a.AlbumIndex < b.AlbumIndex }) {
		sorted[i] = out.Albums[j]
	}
	out.Albums = sorted
	return out, nil
}

// gsi1 builds the seed 001 GSI1 query [workflowType, entityType] /
// [status, createdAt] for one or both workflow types, newest first.
func (c *Client) gsi1(pattern, workflowType, entityType, status string, r TimeRange) (paged, error) {
	wt, err := NormalizeWorkflowType("workflowType", workflowType)
	if err != nil {
		return paged{}, err
	}
	if err := r.validate(); err != nil {
		return paged{}, err
	}
	types := WorkflowTypes
	if wt != "" {
		types = []string{wt}
	}
	q := paged{
		fp:       fingerprint{pattern, append([]string{"workflowType=" + wt}, r.params()...)},
		keyAttrs: keyAttrs(schema.TableWorkflows, "GSI1"),
	}
	for _, t := range types {
		k := newCond().eq("workflowType", avS(t)).eq("entityType", avS(entityType)).eq("status", avS(status))
		r.on(k, "createdAt")
		q.phases = append(q.phases, c.queryInput(schema.TableWorkflows, c.indexFor(schema.TableWorkflows, "GSI1"), k, nil, false))
	}
	c.shard(&q, schema.TableWorkflows, "GSI1")
	return q, nil
}

// RunningExecutions lists the running executions of a workflow type, newest
// first (GSI1: [workflowType, "execution"] / ["running", createdAt]). With no
// workflow type it lists step-functions, then durable-functions.
func (c *Client) RunningExecutions(ctx context.Context, workflowType string, p PageRequest) (Page, error) {
	q, err := c.gsi1("running-executions", workflowType, "execution", "running", TimeRange{})
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "running executions", q, p)
}

// PendingTasks lists the pending human validation tasks of a workflow type,
// newest first (GSI1: [workflowType, "task"] / ["pending", createdAt]). With
// no workflow type it lists both types, one query each (docs/decisions.md).
func (c *Client) PendingTasks(ctx context.Context, workflowType string, p PageRequest) (Page, error) {
	q, err := c.gsi1("pending-tasks", workflowType, "task", "pending", TimeRange{})
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "pending tasks", q, p)
}

// MetricsSeries lists the daily metrics rows of a workflow type for the days
// in r (by the row's createdAt, the day's midnight), newest first (GSI1:
// [workflowType, "metrics"] / ["daily", createdAt]).
func (c *Client) MetricsSeries(ctx context.Context, workflowType string, r TimeRange, p PageRequest) (Page, error) {
	if workflowType == "" {
		return Page{}, invalid("workflowType", "is required")
	}
	q, err := c.gsi1("metrics-series", workflowType, "metrics", "daily", r)
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "metrics series", q, p)
}

// Metrics returns the daily metrics row of a date and workflow type (pk =
// date, sk = "metrics-<workflowType>").
func (c *Client) Metrics(ctx context.Context, date, workflowType string) (map[string]any, error) {
	d, err := ParseDate("date", date)
	if err != nil {
		return nil, err
	}
	wt, err := NormalizeWorkflowType("workflowType", workflowType)
	if err != nil {
		return nil, err
	}
	if wt == "" {
		return nil, invalid("workflowType", "is required")
	}
	return c.get(ctx, "metrics "+d+" "+wt, schema.TableWorkflows, map[string]types.AttributeValue{"pk": avS(d), "sk": avS("metrics-" + wt)})
}

// Comparison is seed 001's "compare patterns": both daily metrics rows of a
// date and how durable-functions compares with step-functions.
type Comparison struct {
	Date string `json:"date"`
	// StepFunctions and DurableFunctions are the rows, nil when that type
	// had no execution that day.
	StepFunctions    map[string]any `json:"stepFunctions"`
	DurableFunctions map[string]any `json:"durableFunctions"`
	// SuccessRates are successCount / (successCount + failureCount) per
	// workflow type; nil when none finished.
	SuccessRates map[string]*float64 `json:"successRates"`
	// Ratios are durable-functions / step-functions for executionCount,
	// successRate, avgDurationMs, avgCostPerExecution and totalCost; nil
	// when either side is missing or step-functions' value is 0.
	Ratios map[string]*float64 `json:"ratios"`
}

// ComparedMetrics are the metrics Comparison.Ratios compares.
var ComparedMetrics = []string{"executionCount", "successRate", "avgDurationMs", "avgCostPerExecution", "totalCost"}

// CompareMetrics returns both workflow types' rows of a date: one Query, pk =
// date AND begins_with(sk, "metrics-").
func (c *Client) CompareMetrics(ctx context.Context, date string) (Comparison, error) {
	d, err := ParseDate("date", date)
	if err != nil {
		return Comparison{}, err
	}
	k := newCond().eq("pk", avS(d)).beginsWith("sk", avS("metrics-"))
	in := c.queryInput(schema.TableWorkflows, "", k, nil, true)
	in.Limit = aws.Int32(10)
	items, _, err := c.all(ctx, "compare metrics", in, 10)
	if err != nil {
		return Comparison{}, err
	}
	out := Comparison{Date: d, SuccessRates: map[string]*float64{}, Ratios: map[string]*float64{}}
	var sfRow, ldfRow *schema.WorkflowMetricsItem
	for _, it := range items {
		row, err := decodeItem[schema.WorkflowMetricsItem](it)
		if err != nil {
			return Comparison{}, fmt.Errorf("query: compare metrics %s: %w", d, err)
		}
		switch row.WorkflowType {
		case StepFunctions:
			out.StepFunctions, sfRow = Plain(it), &row
		case DurableFunctions:
			out.DurableFunctions, ldfRow = Plain(it), &row
		}
	}
	value := func(row *schema.WorkflowMetricsItem, metric string) (float64, bool) {
		if row == nil {
			return 0, false
		}
		if metric == "successRate" {
			r := successRate(row)
			if r == nil {
				return 0, false
			}
			return *r, true
		}
		return metricValue(row, metric), true
	}
	out.SuccessRates[StepFunctions] = successRate(sfRow)
	out.SuccessRates[DurableFunctions] = successRate(ldfRow)
	for _, m := range ComparedMetrics {
		sf, ok1 := value(sfRow, m)
		ldf, ok2 := value(ldfRow, m)
		if ok1 && ok2 && sf != 0 {
			r := ldf / sf
			out.Ratios[m] = &r
		} else {
			out.Ratios[m] = nil
		}
	}
	return out, nil
}

// metricValue is one of a metrics row's numbers by name (a ComparedMetrics
// entry other than successRate); a counter never added to is absent: 0.
func metricValue(row *schema.WorkflowMetricsItem, metric string) float64 {
	var n json.Number
	switch metric {
	case "executionCount":
		n = row.ExecutionCount
	case "avgDurationMs":
		n = row.AvgDurationMs
	case "avgCostPerExecution":
		n = row.AvgCostPerExecution
	case "totalCost":
		n = row.TotalCost
	}
	return numberValue(n)
}

// numberValue is n as a float64, 0 when it is absent.
func numberValue(n json.Number) float64 {
	f, err := n.Float64()
	if err != nil {
		return 0
	}
	return f
}

// successRate is successCount / (successCount + failureCount) of a metrics
// row, nil when nothing finished.
func successRate(row *schema.WorkflowMetricsItem) *float64 {
	if row == nil {
		return nil
	}
	s, f := numberValue(row.SuccessCount), numberValue(row.FailureCount)
	if s+f == 0 {
		return nil
	}
	r := s / (s + f)
	return &r
}

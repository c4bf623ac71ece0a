package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "summary", summary: "summarise what was projected: items per projection, sf vs ldf daily metrics", run: runProjectionSummary})
}

const summaryHelp = `Usage: streamfold summary [flags]

Counts the items of every projection table and prints the sf (step-functions)
vs ldf (durable-functions) daily metrics rows. It scans tables: a development
and inspection tool, not a dashboard query.

Flags:
`

type metricsRow struct {
	Date                string  `json:"date"`
	WorkflowType        string  `json:"workflowType"`
	ExecutionCount      int64   `json:"executionCount"`
	SuccessCount        int64   `json:"successCount"`
	FailureCount        int64   `json:"failureCount"`
	AvgDurationMs       float64 `json:"avgDurationMs"`
	TotalCost           float64 `json:"totalCost"`
	AvgCostPerExecution float64 `json:"avgCostPerExecution"`
}

type projectionSummary struct {
	Items   map[string]int64 `json:"items"`
	Metrics []metricsRow     `json:"metrics"`
}

func runProjectionSummary(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	date := fs.String("date", "", "only this day's metrics (YYYY-MM-DD); default every day")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() { fmt.Fprint(env.stderr, summaryHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "summary: %v", err)
	}
	c, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "summary: %v", err)
	}
	sum := projectionSummary{Items: map[string]int64{}}
	for _, t := range slices.Concat([]string{schema.TableEvents}, schema.ProjectionTables(), []string{schema.TableDeadLetters}) {
		var count int64
		p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(n.Table(t)), Select: types.SelectCount})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return errorf(env, exitRuntime, "summary: count %s: %v", n.Table(t), err)
			}
			count += int64(page.Count)
		}
		sum.Items[t] = count
	}
	p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{
		TableName:                 aws.String(n.Table(schema.TableWorkflows)),
		FilterExpression:          aws.String("entityType = :m"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: "metrics"}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return errorf(env, exitRuntime, "summary: metrics: %v", err)
		}
		for _, it := range page.Items {
			r := metricsFromItem(it)
			if *date == "" || r.Date == *date {
				sum.Metrics = append(sum.Metrics, r)
			}
		}
	}
	sort.Slice(sum.Metrics, func(i, j int) bool {
		if sum.Metrics[i].Date != sum.Metrics[j].Date {
			return sum.Metrics[i].Date < sum.Metrics[j].Date
		}
		return sum.Metrics[i].WorkflowType > sum.Metrics[j].WorkflowType
	})
	if *asJSON {
		if err := writeJSON(env.stdout, sum); err != nil {
			return errorf(env, exitRuntime, "summary: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "projection\titems\t")
	names := make([]string, 0, len(sum.Items))
	for k := range sum.Items {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(tw, "%s\t%d\t\n", n.Table(k), sum.Items[k])
	}
	tw.Flush()
	fmt.Fprintln(env.stdout)
	tw = tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "date\tworkflow\texecutions\tsucceeded\tfailed\tavg ms\ttotal $\tavg $/exec\t")
	for _, r := range sum.Metrics {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f\t%.4f\t%.6f\t\n", r.Date, r.WorkflowType, r.ExecutionCount, r.SuccessCount, r.FailureCount, r.AvgDurationMs, r.TotalCost, r.AvgCostPerExecution)
	}
	tw.Flush()
	return exitOK
}

// metricsFromItem reads a daily metrics row (averages are maintained by the
// projector from its exact sums; see projector.DeriveRow). An attribute
// that is absent or not a number reads as 0.
func metricsFromItem(it map[string]types.AttributeValue) metricsRow {
	var m schema.WorkflowMetricsItem
	_ = attributevalue.UnmarshalMap(it, &m)
	num := func(n json.Number) float64 {
		f, _ := n.Float64()
		return f
	}
	return metricsRow{Date: m.Date, WorkflowType: m.WorkflowType,
		ExecutionCount: int64(num(m.ExecutionCount)), SuccessCount: int64(num(m.SuccessCount)), FailureCount: int64(num(m.FailureCount)),
		TotalCost: num(m.TotalCost), AvgDurationMs: num(m.AvgDurationMs), AvgCostPerExecution: num(m.AvgCostPerExecution)}
}

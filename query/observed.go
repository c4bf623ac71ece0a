package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/schema"
)

// ScanAPI is DynamoDB's Scan, which Client.Observed calls twice, for its
// bounded sample of runs. *dynamodb.Client has it; a DynamoAPI without it
// makes Observed fail with ErrNoScan.
type ScanAPI interface {
	ddbapi.Scan
}

// ErrNoScan: the client's DynamoAPI has no Scan (ScanAPI), which
// Client.Observed needs.
var ErrNoScan = errors.New("query: the DynamoDB client cannot Scan")

// ObservedRunSample bounds Observed's sample of the workflow-runs table
// and ObservedJobSample its sample of the workflow-jobs table: one Scan
// request of at most this many items each.
const (
	ObservedRunSample = 1000
	ObservedJobSample = 250
)

// with returns a copy of a with b's entries added.
func with(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// Observed is what the data holds, for a client (the dashboard) to offer
// as choices and to place its default windows on: the installations and
// repositories of a sample of runs, and the time span of the executions,
// messages and daily metrics rows. Every time is an item's own text.
type Observed struct {
	// Installations are the sampled runs' installations: those with the
	// most in-progress runs first, then those with the most runs, then by
	// id.
	Installations []ObservedInstallation `json:"installations"`
	// SampledRuns is how many run summaries the sample read; Truncated says
	// the table holds more, so that Installations may miss some.
	SampledRuns int  `json:"sampledRuns"`
	Truncated   bool `json:"truncated"`
	// Executions spans the agent executions' startDate, Messages the
	// messages' created_date; empty when there are none.
	Executions Span `json:"executions"`
	Messages   Span `json:"messages"`
	// Metrics spans the dates (YYYY-MM-DD) of the sf/ldf daily metrics
	// rows; only Newest is read (the series index is read newest first).
	Metrics Span `json:"metrics"`
}

// ObservedInstallation is one installation of Observed's sample.
type ObservedInstallation struct {
	Installation int64 `json:"installation"`
	// Runs counts the sampled runs, InProgressRuns those whose status is
	// in_progress (some job not completed yet).
	Runs           int `json:"runs"`
	InProgressRuns int `json:"inProgressRuns"`
	// Repositories are the sampled runs' repositories, sorted.
	Repositories []string `json:"repositories"`
}

// Span is the oldest and newest value of a sort key, "" when unknown.
type Span struct {
	Oldest string `json:"oldest,omitempty"`
	Newest string `json:"newest,omitempty"`
}

// widen extends s to v.
func (s *Span) widen(v string) {
	if v == "" {
		return
	}
	if s.Oldest == "" || v < s.Oldest {
		s.Oldest = v
	}
	if s.Newest == "" || v > s.Newest {
		s.Newest = v
	}
}

// Observed reads what the data holds (see Observed). Its cost does not grow
// with the data: one Scan of the workflow-jobs table bounded to
// ObservedJobSample items (a job item is about 1 KB: some 32 read units at
// most) and one of the workflow-runs table bounded to ObservedRunSample
// items (shares of about 200 bytes and older summary rows: some 25 read
// units at most), projecting the keys, the run's ids, repo_full_name and
// what status derives from, summed per run (the only Scans of the
// package: no index lists installations); two Queries of one item (oldest and newest) per execution
// status on StatusDateIndex and per message stage on
// stage-created_date-index (times the shards of a sharded index); one
// Query of one item per workflow type for the newest metrics row.
func (c *Client) Observed(ctx context.Context) (Observed, error) {
	scanner, ok := c.api.(ScanAPI)
	if !ok {
		return Observed{}, ErrNoScan
	}
	out := Observed{Installations: []ObservedInstallation{}}
	if err := c.sampleRuns(ctx, scanner, &out); err != nil {
		return Observed{}, err
	}
	for _, status := range ExecutionStatuses {
		if err := c.span(ctx, &out.Executions, schema.TableExecutions, "StatusDateIndex", "status", status, "startDate"); err != nil {
			return Observed{}, err
		}
	}
	for _, stage := range schema.Stages {
		if err := c.span(ctx, &out.Messages, schema.TableMessages, "stage-created_date-index", "stage", stage, "created_date"); err != nil {
			return Observed{}, err
		}
	}
	for _, wt := range WorkflowTypes {
		p, err := c.MetricsSeries(ctx, wt, TimeRange{}, PageRequest{Limit: 1})
		if err != nil {
			return Observed{}, fmt.Errorf("query: observed: %w", err)
		}
		for _, row := range p.Items {
			if d, ok := row["date"].(string); ok && d > out.Metrics.Newest {
				out.Metrics.Newest = d
			}
		}
	}
	return out, nil
}

// sampleRuns fills the installations from two bounded Scans: of the
// workflow-jobs table (its items are their jobs' shares of their runs'
// summaries) and of the workflow-runs table (shares of jobs not in GSI3
// and an older projector's summary rows), summed per run.
func (c *Client) sampleRuns(ctx context.Context, scanner ScanAPI, out *Observed) error {
	names := map[string]string{"#pk": "pk", "#sk": "sk", "#i": "installation_id", "#ru": "run_id", "#a": "run_attempt", "#r": "repo_full_name"}
	jobs, err := scanner.Scan(ctx, &dynamodb.ScanInput{
		TableName:                aws.String(c.naming.Table(schema.TableWorkflowJobs)),
		Limit:                    aws.Int32(ObservedJobSample),
		ProjectionExpression:     aws.String("#pk, #sk, #i, #ru, #a, #r, #j, #s, #c, #m"),
		ExpressionAttributeNames: with(names, map[string]string{"#j": "job_id", "#s": "status", "#c": "conclusion", "#m": schema.AttrCountsInRun}),
	})
	if err != nil {
		return fmt.Errorf("query: observed: sample jobs: %w", err)
	}
	rows, err := scanner.Scan(ctx, &dynamodb.ScanInput{
		TableName:                aws.String(c.naming.Table(schema.TableWorkflowRuns)),
		Limit:                    aws.Int32(ObservedRunSample),
		ProjectionExpression:     aws.String("#pk, #sk, #i, #ru, #a, #r, #t, #c, #w"),
		ExpressionAttributeNames: with(names, map[string]string{"#t": "total_jobs", "#c": "completed_jobs", "#w": "waiting_jobs"}),
	})
	if err != nil {
		return fmt.Errorf("query: observed: sample runs: %w", err)
	}
	// A run's status is the one its jobs in the sample sum to.
	sums, err := schema.SummarizeRuns(rows.Items, jobs.Items)
	if err != nil {
		return fmt.Errorf("query: observed: sample runs: %w", err)
	}
	runs, err := decodeItems[schema.RunItem](sums)
	if err != nil {
		return fmt.Errorf("query: observed: sample runs: %w", err)
	}
	byID := map[int64]*ObservedInstallation{}
	repos := map[int64]map[string]bool{}
	for _, r := range runs {
		inst := byID[r.InstallationID]
		if inst == nil {
			inst = &ObservedInstallation{Installation: r.InstallationID, Repositories: []string{}}
			byID[r.InstallationID], repos[r.InstallationID] = inst, map[string]bool{}
		}
		inst.Runs++
		if r.Status == "in_progress" {
			inst.InProgressRuns++
		}
		if r.RepoFullName != "" && !repos[r.InstallationID][r.RepoFullName] {
			repos[r.InstallationID][r.RepoFullName] = true
			inst.Repositories = append(inst.Repositories, r.RepoFullName)
		}
	}
	for _, inst := range byID {
		slices.Sort(inst.Repositories)
		out.Installations = append(out.Installations, *inst)
	}
	slices.SortFunc(out.Installations, func(a, b ObservedInstallation) int {
		return cmp.Or(cmp.Compare(b.InProgressRuns, a.InProgressRuns), cmp.Compare(b.Runs, a.Runs), cmp.Compare(a.Installation, b.Installation))
	})
	out.SampledRuns = len(runs)
	out.Truncated = len(rows.LastEvaluatedKey) > 0 || len(jobs.LastEvaluatedKey) > 0
	return nil
}

// span widens s to the oldest and newest rangeAttr of one partition
// (hashAttr = value) of a seed index, every shard of a sharded one: one
// Query of one item per end and shard.
func (c *Client) span(ctx context.Context, s *Span, table, seedIndex, hashAttr, value, rangeAttr string) error {
	index, sharded := schema.IndexFor(table, seedIndex, c.cfg.GSIShards)
	ins := []*dynamodb.QueryInput{}
	for _, forward := range []bool{true, false} {
		in := c.queryInput(table, index, newCond().eq(hashAttr, avS(value)), nil, forward)
		in.Limit = aws.Int32(1)
		in.ExpressionAttributeNames["#end"] = rangeAttr
		in.ProjectionExpression = aws.String("#end")
		if !sharded {
			ins = append(ins, in)
			continue
		}
		for sh := range c.cfg.GSIShards {
			ins = append(ins, shardInput(in, sh))
		}
	}
	for _, in := range ins {
		out, err := c.doQuery(ctx, in)
		if err != nil {
			return fmt.Errorf("query: observed: %s %s: %w", table, value, err)
		}
		for _, it := range out.Items {
			if v, ok := Plain(it)[rangeAttr].(string); ok {
				s.widen(v)
			}
		}
	}
	return nil
}

package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/schema"
)

// ScanAPI is DynamoDB's Scan, which Client.Observed calls once, for its
// bounded sample of runs. *dynamodb.Client has it; a DynamoAPI without it
// makes Observed fail with ErrNoScan.
type ScanAPI interface {
	ddbapi.Scan
}

// ErrNoScan: the client's DynamoAPI has no Scan (ScanAPI), which
// Client.Observed needs.
var ErrNoScan = errors.New("query: the DynamoDB client cannot Scan")

// ObservedRunSample bounds Observed's sample of the workflow-runs table:
// one Scan request of at most this many items.
const ObservedRunSample = 1000

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
// with the data: one Scan of the workflow-runs table (the jobs' shares of
// their runs' summaries, summed per run), bounded to ObservedRunSample
// items and projecting the keys, installation_id, repo_full_name and the
// counters status derives from (the only Scan of the package: no index
// lists installations; a share is about 200 bytes, so the sample is some
// 25 read units at most); two Queries of one item (oldest and newest) per execution
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

// sampleRuns fills the installations from one bounded Scan of the runs.
func (c *Client) sampleRuns(ctx context.Context, scanner ScanAPI, out *Observed) error {
	res, err := scanner.Scan(ctx, &dynamodb.ScanInput{
		TableName:                aws.String(c.naming.Table(schema.TableWorkflowRuns)),
		Limit:                    aws.Int32(ObservedRunSample),
		ProjectionExpression:     aws.String("#pk, #sk, #i, #r, #t, #c, #w"),
		ExpressionAttributeNames: map[string]string{"#pk": "pk", "#sk": "sk", "#i": "installation_id", "#r": "repo_full_name", "#t": "total_jobs", "#c": "completed_jobs", "#w": "waiting_jobs"},
	})
	if err != nil {
		return fmt.Errorf("query: observed: sample runs: %w", err)
	}
	// The items are jobs' shares of their runs' summaries: a run's status
	// is the one its shares in the sample sum to.
	sums, err := schema.SummarizeRuns(res.Items)
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
	out.Truncated = len(res.LastEvaluatedKey) > 0
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

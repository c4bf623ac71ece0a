package query

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// JobStatuses are seed 003's job statuses (schema.JobStatuses).
var JobStatuses = schema.JobStatuses()

// FailedConclusions are the conclusions counted as failures, as the run
// summaries count them (schema.FailedConclusions).
var FailedConclusions = schema.FailedConclusions()

func checkJobKey(installation, id int64, idParam string) error {
	if installation < 0 {
		return invalid("installation", "must be a non-negative integer")
	}
	if id <= 0 {
		return invalid(idParam, "must be a positive integer")
	}
	return nil
}

// Job returns a job by installation and id (seed 003: pk
// "<installation>#<job>", sk "v").
func (c *Client) Job(ctx context.Context, installation, jobID int64) (map[string]any, error) {
	if err := checkJobKey(installation, jobID, "id"); err != nil {
		return nil, err
	}
	return c.get(ctx, "job "+schema.JobKey(installation, jobID), schema.TableWorkflowJobs,
		map[string]types.AttributeValue{"pk": avS(schema.JobKey(installation, jobID)), "sk": avS("v")})
}

// JobsByStatus lists an installation's jobs of a status, newest first by
// created_at (GSI1: [installation_id, status] / created_at). A non-zero
// createdBefore keeps jobs created before it (created_at < createdBefore on
// the same index): with status in_progress, the stuck jobs.
func (c *Client) JobsByStatus(ctx context.Context, installation int64, status string, createdBefore time.Time, p PageRequest) (Page, error) {
	q, err := c.jobsByStatus(installation, status, createdBefore)
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "jobs by status", q, p)
}

// StuckJobs lists jobs still in_progress that were created more than
// olderThan before now (seed 003: created_at < now - N hours).
func (c *Client) StuckJobs(ctx context.Context, installation int64, olderThan time.Duration, now time.Time, p PageRequest) (Page, error) {
	if olderThan <= 0 {
		return Page{}, invalid("stuckHours", "must be positive")
	}
	return c.jobsOlderThan(ctx, installation, "in_progress", olderThan, now, p)
}

// jobsOlderThan is JobsByStatus with createdBefore = now - olderThan, whose
// cursor is the window's, not the instant's: the next page, asked for
// later on a clock that moved (the API's, the CLI's), continues the list
// below the previous page's last job (newest first: the moved bound only
// admits jobs newer than that), where a cursor bound to the instant
// would be refused.
func (c *Client) jobsOlderThan(ctx context.Context, installation int64, status string, olderThan time.Duration, now time.Time, p PageRequest) (Page, error) {
	q, err := c.jobsByStatus(installation, status, now.Add(-olderThan))
	if err != nil {
		return Page{}, err
	}
	q.fp.params[2] = "olderThan=" + olderThan.String()
	return c.run(ctx, "jobs by status", q, p)
}

func (c *Client) jobsByStatus(installation int64, status string, before time.Time) (paged, error) {
	if installation < 0 {
		return paged{}, invalid("installation", "must be a non-negative integer")
	}
	if err := required("status", status); err != nil {
		return paged{}, err
	}
	if err := oneOf("status", status, JobStatuses...); err != nil {
		return paged{}, err
	}
	k := newCond().eq("installation_id", avN(installation)).eq("status", avS(status))
	b := ""
	if !before.IsZero() {
		b = schema.FormatItemTime(before)
		k.op("created_at", "<", avS(b))
	}
	return paged{
		fp:       fingerprint{"jobs-by-status", []string{"installation=" + strconv.FormatInt(installation, 10), "status=" + status, "before=" + b}},
		phases:   []*dynamodb.QueryInput{c.queryInput(schema.TableWorkflowJobs, "GSI1", k, nil, false)},
		keyAttrs: keyAttrs(schema.TableWorkflowJobs, "GSI1"),
	}, nil
}

// RepoStats summarises a repository's jobs over a whole range, every page
// of it.
type RepoStats struct {
	// Jobs is how many jobs the range holds (the items read).
	Jobs int `json:"jobs"`
	// Completed counts completed jobs; Succeeded those that concluded
	// success, Failed those that concluded failure, timed_out or
	// startup_failure (cancelled and skipped jobs are neither).
	Completed int `json:"completed"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// SuccessRate is Succeeded / (Succeeded + Failed), nil when both are 0.
	SuccessRate *float64 `json:"successRate"`
	// AvgDurationMs is the mean of completed_at - started_at over completed
	// jobs that have both, nil when none has.
	AvgDurationMs *float64 `json:"avgDurationMs"`
	// Requests is how many Query requests the statistics took.
	Requests int `json:"requests"`
	// Truncated is true when the range held more than Config.MaxReadItems
	// jobs: the figures cover the newest MaxReadItems.
	Truncated bool `json:"truncated"`
}

// RepoJobsPage is a page of a repository's jobs; Stats is set on the first
// page (no cursor) only.
type RepoJobsPage struct {
	Page
	Stats *RepoStats `json:"stats,omitempty"`
}

// RepoJobs lists the jobs of a repository created at or after since, newest
// first (GSI2: [installation_id, repo_full_name] / created_at). The first
// page also carries RepoStats over every job of the range, read with a
// projection of the four attributes they need.
func (c *Client) RepoJobs(ctx context.Context, installation int64, repo string, since time.Time, p PageRequest) (RepoJobsPage, error) {
	if installation < 0 {
		return RepoJobsPage{}, invalid("installation", "must be a non-negative integer")
	}
	if err := required("repo", repo); err != nil {
		return RepoJobsPage{}, err
	}
	r := TimeRange{From: since}
	k := newCond().eq("installation_id", avN(installation)).eq("repo_full_name", avS(repo))
	r.on(k, "created_at")
	in := c.queryInput(schema.TableWorkflowJobs, "GSI2", k, nil, false)
	q := paged{
		fp:       fingerprint{"repo-jobs", append([]string{"installation=" + strconv.FormatInt(installation, 10), "repo=" + repo}, r.params()...)},
		phases:   []*dynamodb.QueryInput{in},
		keyAttrs: keyAttrs(schema.TableWorkflowJobs, "GSI2"),
	}
	page, err := c.run(ctx, "repository jobs", q, p)
	if err != nil {
		return RepoJobsPage{}, err
	}
	out := RepoJobsPage{Page: page}
	if p.Cursor == "" {
		st, err := c.repoStats(ctx, in)
		if err != nil {
			return RepoJobsPage{}, err
		}
		out.Stats = &st
	}
	return out, nil
}

func (c *Client) repoStats(ctx context.Context, base *dynamodb.QueryInput) (RepoStats, error) {
	in := *base
	names := map[string]string{}
	for k, v := range base.ExpressionAttributeNames {
		names[k] = v
	}
	names["#pst"], names["#pcn"], names["#pss"], names["#pcs"] = "status", "conclusion", "started_at", "completed_at"
	in.ExpressionAttributeNames = names
	in.ProjectionExpression = aws.String("#pst, #pcn, #pss, #pcs")
	in.Limit = aws.Int32(1000)
	var st RepoStats
	items, truncated, requests, err := c.allCounted(ctx, "repository statistics", &in, c.cfg.MaxReadItems)
	st.Requests = requests
	if err != nil {
		return st, err
	}
	st.Jobs, st.Truncated = len(items), truncated
	jobs, err := decodeItems[schema.JobItem](items)
	if err != nil {
		return st, fmt.Errorf("query: repository statistics: %w", err)
	}
	var durSum float64
	var durN int
	for _, j := range jobs {
		if j.Status != "completed" {
			continue
		}
		st.Completed++
		switch {
		case j.Conclusion == "success":
			st.Succeeded++
		case slices.Contains(FailedConclusions, j.Conclusion):
			st.Failed++
		}
		s, err1 := time.Parse(time.RFC3339Nano, j.StartedAt)
		e, err2 := time.Parse(time.RFC3339Nano, j.CompletedAt)
		if err1 == nil && err2 == nil && !e.Before(s) {
			durSum += float64(e.Sub(s).Milliseconds())
			durN++
		}
	}
	if st.Succeeded+st.Failed > 0 {
		r := float64(st.Succeeded) / float64(st.Succeeded+st.Failed)
		st.SuccessRate = &r
	}
	if durN > 0 {
		a := durSum / float64(durN)
		st.AvgDurationMs = &a
	}
	return st, nil
}

// RunView is a workflow run: its summary row, its jobs and whether it is
// complete.
type RunView struct {
	// Run is the run's summary (total_jobs, completed_jobs, failed_jobs,
	// success_jobs, waiting_jobs, status, conclusion), summed from its
	// jobs' items (GSI3) and what the workflow-runs table still holds of
	// the run (schema.SummarizeRun); nil when no job of the run has been
	// projected with its run.
	Run map[string]any `json:"run"`
	// Jobs are the run's jobs in created_at order (GSI3).
	Jobs []map[string]any `json:"jobs"`
	// Complete is true when the run has jobs, every one is completed, and
	// the summary row (when present) counts as many completed jobs as jobs.
	Complete bool `json:"complete"`
	// Truncated is true when the run had more than Config.MaxReadItems jobs
	// (then the summary too counts only the jobs read).
	Truncated bool `json:"truncated,omitempty"`
}

// Run returns a run's jobs (GSI3: [installation_id, run_id, run_attempt] /
// created_at, every page) and its summary (those jobs' shares, summed with
// what one Query of the run's partition of workflow-runs returns, every
// page: shares of jobs not in GSI3 and an older projector's rows), and
// says whether it is complete (seed 003's "check if workflow run
// complete").
func (c *Client) Run(ctx context.Context, installation, runID, attempt int64) (RunView, error) {
	switch {
	case installation < 0:
		return RunView{}, invalid("installation", "must be a non-negative integer")
	case runID <= 0:
		return RunView{}, invalid("runId", "must be a positive integer")
	case attempt <= 0:
		return RunView{}, invalid("attempt", "must be a positive integer")
	}
	key := schema.RunKey(installation, runID, attempt)
	shares, sharesTruncated, err := c.all(ctx, "run "+key, c.queryInput(schema.TableWorkflowRuns, "", newCond().eq("pk", avS(key)), nil, true), c.cfg.MaxReadItems)
	if err != nil {
		return RunView{}, err
	}
	k := newCond().eq("installation_id", avN(installation)).eq("run_id", avN(runID)).eq("run_attempt", avN(attempt))
	items, truncated, err := c.all(ctx, "run jobs", c.queryInput(schema.TableWorkflowJobs, "GSI3", k, nil, true), c.cfg.MaxReadItems)
	if err != nil {
		return RunView{}, err
	}
	run, err := schema.SummarizeRun(shares, items)
	if err != nil {
		return RunView{}, fmt.Errorf("query: run %s: %w", key, err)
	}
	if run == nil && len(items) == 0 {
		return RunView{}, fmt.Errorf("%w: run %s", ErrNotFound, key)
	}
	jobs, err := decodeItems[schema.JobItem](items)
	if err != nil {
		return RunView{}, fmt.Errorf("query: run %s: %w", key, err)
	}
	order := stableOrder(jobs, func(a, b schema.JobItem) bool { return a.CreatedAt < b.CreatedAt })
	truncated = truncated || sharesTruncated
	out := RunView{Run: Plain(run), Jobs: make([]map[string]any, len(order)), Truncated: truncated}
	out.Complete = len(jobs) > 0 && !truncated
	for i, j := range order {
		out.Jobs[i] = Plain(items[j])
		if jobs[j].Status != "completed" {
			out.Complete = false
		}
	}
	if run != nil {
		r, err := decodeItem[schema.RunItem](run)
		if err != nil {
			return RunView{}, fmt.Errorf("query: run %s: %w", key, err)
		}
		if r.TotalJobs != r.CompletedJobs {
			out.Complete = false
		}
	}
	return out, nil
}

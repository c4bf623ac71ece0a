package query

import (
	"context"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// Parameters several patterns share.
var (
	pWorkflowType = Param{Name: "workflowType", Flag: "workflow-type", Doc: "step-functions (sf) or durable-functions (ldf); default both"}
	pInstallation = Param{Name: "installation", Flag: "installation", Kind: KindInt, Default: "-1", Doc: "GitHub App installation id"}
	pInstGHES     = Param{Name: "installation", Flag: "installation", Kind: KindInt, Default: "-1", Doc: "GitHub App installation id (0 for GHES without one)"}
	pJob          = Param{Name: "id", Flag: "job", Kind: KindInt, Default: "0", Doc: "workflow job id"}
	pDate         = Param{Name: "date", Flag: "date", Doc: "the day, YYYY-MM-DD"}
)

// patterns is the table of access patterns; see Patterns.
var patterns = []Pattern{
	// executions: agent, or status, or neither: the recent executions of
	// every agent (each status's partition of StatusDateIndex, merged).
	{Name: "executions", Doc: "Agent executions of an agent or a status in a time range, or every agent's, newest first (seeds 000, 002).", Route: "/api/executions", Paged: true, Params: []Param{
		{Name: "agent", Flag: "agent", Doc: "agent name (AgentDateIndex)"},
		{Name: "status", Flag: "status", Doc: orList(schema.Statuses(schema.AggregateAgentExecution)) + " (StatusDateIndex); without agent or status: every agent's, newest first"},
		{Name: "from", Flag: "from", Doc: "earliest startDate (RFC 3339)"},
		{Name: "to", Flag: "to", Doc: "latest startDate (RFC 3339)"},
	}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		agent, status := text(in, "agent"), text(in, "status")
		if agent != "" && status != "" {
			return nil, invalid("agent", "give at most one of %s or %s", in.Spell("agent"), in.Spell("status"))
		}
		r, err := timeRange(in)
		if err != nil {
			return nil, err
		}
		return pagedRun(in, func(p PageRequest) (any, error) {
			switch {
			case agent != "":
				return c.ExecutionsByAgent(ctx, agent, r, p)
			case status != "":
				return c.ExecutionsByStatus(ctx, status, r, p)
			}
			return c.RecentExecutions(ctx, r, p)
		})
	}},
	{Name: "execution", Doc: "One agent execution (seed 000).", Route: "/api/executions/{arn}", Arg: "arn", ArgDoc: "The execution's ARN.", Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		return c.Execution(ctx, text(in, "arn"))
	}},
	{Name: "workflow", Doc: "An sf or ldf workflow execution with its albums (seed 001).", Route: "/api/workflows/executions/{id}", Arg: "id", ArgDoc: "The workflow execution's id.", Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		return c.WorkflowExecution(ctx, text(in, "id"))
	}},
	{Name: "running", Doc: "Running sf and ldf executions (seed 001).", Route: "/api/workflows/running", Paged: true, Params: []Param{pWorkflowType}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		return pagedRun(in, func(p PageRequest) (any, error) { return c.RunningExecutions(ctx, text(in, "workflowType"), p) })
	}},
	{Name: "tasks", Doc: "Pending human validation tasks (seed 001).", Route: "/api/workflows/tasks/pending", Paged: true, Params: []Param{pWorkflowType}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		return pagedRun(in, func(p PageRequest) (any, error) { return c.PendingTasks(ctx, text(in, "workflowType"), p) })
	}},
	// metrics: date and workflowType -> the row; date -> both rows of the
	// day; workflowType [from, to] -> the type's rows, newest first.
	{Name: "metrics", Doc: "One daily metrics row (a date and a workflow type), a day's rows (a date), or a workflow type's daily rows over days (seed 001).", Route: "/api/metrics", Paged: true, Params: []Param{
		pDate,
		{Name: "workflowType", Flag: "workflow-type", Doc: "step-functions (sf) or durable-functions (ldf)"},
		{Name: "from", Flag: "from", Doc: "first day of a series, YYYY-MM-DD"},
		{Name: "to", Flag: "to", Doc: "last day of a series, YYYY-MM-DD"},
	}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		date, wt := text(in, "date"), text(in, "workflowType")
		if date != "" && (text(in, "from") != "" || text(in, "to") != "") {
			return nil, invalid("from", "is only for a series (no %s)", in.Spell("date"))
		}
		switch {
		case date != "" && wt != "":
			return c.Metrics(ctx, date, wt)
		case date != "":
			cmp, err := c.CompareMetrics(ctx, date)
			if err != nil {
				return nil, err
			}
			items := []map[string]any{}
			for _, row := range []map[string]any{cmp.StepFunctions, cmp.DurableFunctions} {
				if row != nil {
					items = append(items, row)
				}
			}
			return Page{Items: items}, nil
		case wt != "":
			r, err := dateRange(in)
			if err != nil {
				return nil, err
			}
			return pagedRun(in, func(p PageRequest) (any, error) { return c.MetricsSeries(ctx, wt, r, p) })
		}
		return nil, invalid("date", "give %s, %s or both", in.Spell("date"), in.Spell("workflowType"))
	}},
	{Name: "compare", Doc: "The sf and ldf metrics of a day side by side, with ratios (seed 001).", Route: "/api/metrics/compare", Params: []Param{pDate}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		return c.CompareMetrics(ctx, text(in, "date"))
	}},
	{Name: "job", Doc: "One GitHub workflow job (seed 003).", Route: "/api/jobs/{installation}/{id}", Params: []Param{pInstGHES, pJob}, Run: jobKeyRun((*Client).Job)},
	// jobs: installation and status [stuckHours], or installation and repo
	// [since].
	{Name: "jobs", Doc: "An installation's jobs by status, its stuck jobs, or a repository's jobs with success rate and average duration (seed 003).", Route: "/api/jobs", Paged: true, Params: []Param{
		pInstGHES,
		{Name: "status", Flag: "status", Doc: orList(schema.Statuses(schema.AggregateJob)) + " (GSI1)"},
		{Name: "stuckHours", Flag: "stuck-hours", Kind: KindFloat, Doc: "only jobs created more than N hours before --now (default status in_progress)"},
		{Name: "repo", Flag: "repo", Doc: "owner/name: the repository's jobs (GSI2), with statistics"},
		{Name: "since", Flag: "since", Doc: "with --repo: jobs created at or after this time (RFC 3339)"},
	}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		inst, err := installation(in)
		if err != nil {
			return nil, err
		}
		p, err := in.Page()
		if err != nil {
			return nil, err
		}
		status, repo, stuck := text(in, "status"), text(in, "repo"), text(in, "stuckHours")
		switch {
		case repo != "" && (status != "" || stuck != ""):
			return nil, invalid("repo", "cannot be combined with %s or %s", in.Spell("status"), in.Spell("stuckHours"))
		case repo != "":
			since, err := ParseTime("since", text(in, "since"))
			if err != nil {
				return nil, err
			}
			return c.RepoJobs(ctx, inst, repo, since, p)
		case text(in, "since") != "":
			return nil, invalid("since", "is only for %s", in.Spell("repo"))
		case status == "" && stuck == "":
			return nil, invalid("status", "give %s (optionally with %s) or %s", in.Spell("status"), in.Spell("stuckHours"), in.Spell("repo"))
		}
		if d, ok, err := hours(in, "stuckHours", 24*90); err != nil {
			return nil, err
		} else if ok {
			if status == "" {
				status = "in_progress"
			}
			return c.jobsOlderThan(ctx, inst, status, d, in.Now(), p)
		}
		return c.JobsByStatus(ctx, inst, status, time.Time{}, p)
	}},
	{Name: "run", Doc: "A workflow run's jobs and whether it is complete (seed 003).", Route: "/api/runs/{installation}/{runId}/{attempt}", Params: []Param{
		pInstallation,
		{Name: "runId", Flag: "run", Kind: KindInt, Default: "0", Doc: "workflow run id"},
		{Name: "attempt", Flag: "attempt", Kind: KindInt, Default: "1", Doc: "run attempt"},
	}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		k, err := ints(in, "runId", "attempt")
		if err != nil {
			return nil, err
		}
		return c.Run(ctx, k[0], k[1], k[2])
	}},
	{Name: "timeline", Doc: "A job's events with the fields each changed (seed 003).", Route: "/api/jobs/{installation}/{id}/timeline", Params: []Param{pInstallation, pJob}, Run: jobKeyRun((*Client).Timeline)},
	{Name: "duplicates", Doc: "The webhooks a job received more than once (seed 003).", Route: "/api/jobs/{installation}/{id}/duplicates", Params: []Param{pInstallation, pJob}, Run: jobKeyRun((*Client).Duplicates)},
	{Name: "message", Doc: "One rez_agent message (seed 004).", Route: "/api/messages/{id}", Arg: "id", ArgDoc: "The message id.", Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		return c.Message(ctx, text(in, "id"))
	}},
	{Name: "messages", Doc: "Messages by stage, status or type in a time range, newest first (seed 004).", Route: "/api/messages", Paged: true, Params: []Param{
		{Name: "stage", Flag: "stage", Doc: orList(schema.Stages)},
		{Name: "status", Flag: "status", Doc: orList(schema.Statuses(schema.AggregateMessage))},
		{Name: "type", Flag: "type", Doc: "message type, e.g. scheduled_hello"},
		{Name: "from", Flag: "from", Doc: "earliest created_date (RFC 3339)"},
		{Name: "to", Flag: "to", Doc: "latest created_date (RFC 3339)"},
	}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		r, err := timeRange(in)
		if err != nil {
			return nil, err
		}
		f := MessageFilter{Stage: text(in, "stage"), Status: text(in, "status"), Type: text(in, "type"), Created: r}
		return pagedRun(in, func(p PageRequest) (any, error) { return c.Messages(ctx, f, p) })
	}},
	{Name: "message-stats", Doc: "Message counts by status and success rate over the hours up to a time (seed 004).", Route: "/api/messages/stats", Params: []Param{
		{Name: "stage", Flag: "stage", Doc: orList(schema.Stages) + "; default each"},
		{Name: "hours", Flag: "hours", Kind: KindFloat, Default: "24", Doc: "the window: the last N hours before --to"},
		{Name: "to", Flag: "to", Doc: "the window's end (RFC 3339), e.g. the newest message's created_date; default --now"},
	}, Run: func(ctx context.Context, c *Client, in Input) (any, error) {
		d, ok, err := hours(in, "hours", int(MaxStatsWindow.Hours()))
		if err != nil {
			return nil, err
		}
		if !ok {
			d = 24 * time.Hour
		}
		to, err := ParseTime("to", text(in, "to"))
		if err != nil {
			return nil, err
		}
		if to.IsZero() {
			to = in.Now()
		}
		to = to.UTC()
		return c.MessageStats(ctx, text(in, "stage"), to.Add(-d), to)
	}},
}

// orList spells a vocabulary for a flag's help: "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streamfold/streamfold/query"
)

func init() {
	register(command{name: "query", summary: "read the projections as dashboards do: every access pattern, key and index queries only", run: runQuery})
}

const queryHelp = `Usage: streamfold query PATTERN [flags] [ARG]

Answers the seeds' access patterns from the projection tables (and, for a
job's timeline and duplicate webhooks, from the event table) with GetItem
and Query on keys and indexes, never a scan. Lists come newest first, one
page at a time; the footer says how to ask for the next page.

Patterns:
  executions     --agent A | --status S [--from T] [--to T]   agent executions (seed 000/002)
  execution      ARN                                          one execution
  workflow       ID                                           an sf/ldf execution with its albums (seed 001)
  running        [--workflow-type sf|ldf]                     running sf/ldf executions
  tasks          [--workflow-type sf|ldf]                     pending human validation tasks
  metrics        --date D --workflow-type W                   one daily metrics row
                 --workflow-type W [--from D] [--to D]        a workflow type's daily rows
  compare        --date D                                     sf vs ldf metrics of a day, with ratios
  job            --installation I --job J                     one GitHub job (seed 003)
  jobs           --installation I --status S [--stuck-hours N]
                 --installation I --repo R [--since T]        a repository's jobs, success rate, avg duration
  run            --installation I --run R [--attempt A]       a run's jobs and whether it is complete
  timeline       --installation I --job J                     a job's events with the fields each changed
  duplicates     --installation I --job J                     webhooks a job received more than once
  message        ID                                           one rez_agent message (seed 004)
  messages       --stage S | --status S | --type T [--from T] [--to T]
  message-stats  [--stage S] [--hours 24]                     counts by status and success rate

In messages and message-stats, --stage is the messages' stage; the stage of
the tables (the global --stage, env STREAMFOLD_STAGE) is --table-stage there.

Times (--from, --to, --since, --now) are RFC 3339 (2030-01-15T00:00:00Z);
dates (--date, and --from/--to of metrics) are YYYY-MM-DD. --now sets the
clock of relative windows (--stuck-hours, --hours), default the real time.

Paging: --limit N (default 50, at most 200) and --cursor C, where C is the
"next" of the previous page (with the same other flags). Cursors are signed
with the cursor key: --cursor-key or STREAMFOLD_CURSOR_KEY (16 bytes or
more). Against a local endpoint (127.0.0.1, localhost) the key defaults to a
fixed development key, so cursors work across invocations; against AWS with
no key a one-off random key is used, and its cursors only work within the
same invocation (set the key to page from the command line).

Output is a table; --json prints the result as the HTTP API returns it.

Examples:
  streamfold query executions --agent my-agent --from 2030-01-15T00:00:00Z --to 2030-01-15T23:59:59Z
  streamfold query execution arn:aws:states:us-west-2:123456789012:execution:my-agent-prod:abc123
  streamfold query jobs --installation 12345 --status in_progress --stuck-hours 6
  streamfold query timeline --installation 12345 --job 67890
  streamfold query messages --stage dev --status completed --json
  streamfold query message-stats --stage dev
  streamfold query compare --date 2030-01-15

Exit status: 0 ok; 1 not found; 2 usage error, bad parameter or bad cursor;
3 DynamoDB could not be reached or failed.

Flags:
`

// devCursorKey signs cursors against local endpoints when no key is given.
// It is public (it is in the source): never use it in front of real data.
const devCursorKey = "streamfold-local-development-cursor-key"

// queryOpts are the flags every pattern shares.
type queryOpts struct {
	g         globals
	asJSON    bool
	limit     int
	cursor    string
	cursorKey string
	now       string
}

// querySub is one pattern: its flags, then what it does with them.
type querySub struct {
	name string
	// args is the number of positional arguments (0 or 1) and their name.
	args  string
	paged bool
	// stageFlag: the pattern's --stage is a message's stage, so the table
	// naming stage (the global --stage) is --table-stage instead.
	stageFlag bool
	// setup registers the pattern's flags and returns its action.
	setup func(fs *flag.FlagSet) queryAction
}

// queryAction runs a pattern and returns its result and a table renderer.
type queryAction func(ctx context.Context, c *query.Client, arg string, now time.Time, p query.PageRequest) (any, func(io.Writer), error)

var querySubs = []querySub{
	{name: "executions", paged: true, setup: func(fs *flag.FlagSet) queryAction {
		agent := fs.String("agent", "", "agent name (AgentDateIndex)")
		status := fs.String("status", "", "RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED (StatusDateIndex)")
		from, to := fs.String("from", "", "earliest startDate (RFC 3339)"), fs.String("to", "", "latest startDate (RFC 3339)")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, p query.PageRequest) (any, func(io.Writer), error) {
			r, err := qRange("from", *from, "to", *to)
			if err != nil {
				return nil, nil, err
			}
			var page query.Page
			switch {
			case (*agent == "") == (*status == ""):
				return nil, nil, &query.ParamError{Param: "agent", Reason: "give exactly one of --agent or --status"}
			case *agent != "":
				page, err = c.ExecutionsByAgent(ctx, *agent, r, p)
			default:
				page, err = c.ExecutionsByStatus(ctx, *status, r, p)
			}
			return page, qPageTable(page, []string{"STARTED", "STATUS", "AGENT", "SECONDS", "EXECUTION"},
				"startDate", "status", "agentName", "durationSeconds", "executionArn"), err
		}
	}},
	{name: "execution", args: "ARN", setup: func(*flag.FlagSet) queryAction {
		return func(ctx context.Context, c *query.Client, arn string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			it, err := c.Execution(ctx, arn)
			return it, qItemTable(it), err
		}
	}},
	{name: "workflow", args: "ID", setup: func(*flag.FlagSet) queryAction {
		return func(ctx context.Context, c *query.Client, id string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			ex, err := c.WorkflowExecution(ctx, id)
			return ex, func(w io.Writer) {
				qItemTable(ex.Execution)(w)
				fmt.Fprintln(w)
				qRowsTable(ex.Albums, []string{"ALBUM", "NAME", "ARTIST", "YEAR", "VALIDATED", "PRICE", "CONFIDENCE"},
					"albumIndex", "albumName", "artist", "year", "yearValidated", "priceEstimate", "priceConfidence")(w)
			}, err
		}
	}},
	{name: "running", paged: true, setup: func(fs *flag.FlagSet) queryAction {
		wt := fs.String("workflow-type", "", "step-functions (sf) or durable-functions (ldf); default both")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, p query.PageRequest) (any, func(io.Writer), error) {
			page, err := c.RunningExecutions(ctx, *wt, p)
			return page, qPageTable(page, []string{"CREATED", "TYPE", "STATUS", "STEP", "EXECUTION"},
				"createdAt", "workflowType", "status", "currentStep", "executionId"), err
		}
	}},
	{name: "tasks", paged: true, setup: func(fs *flag.FlagSet) queryAction {
		wt := fs.String("workflow-type", "", "step-functions (sf) or durable-functions (ldf); default both")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, p query.PageRequest) (any, func(io.Writer), error) {
			page, err := c.PendingTasks(ctx, *wt, p)
			return page, qPageTable(page, []string{"CREATED", "TYPE", "TASK", "EXECUTION", "EXPIRES"},
				"createdAt", "workflowType", "taskId", "executionId", "expiresAt"), err
		}
	}},
	{name: "metrics", paged: true, setup: func(fs *flag.FlagSet) queryAction {
		date := fs.String("date", "", "the day, YYYY-MM-DD")
		wt := fs.String("workflow-type", "", "step-functions (sf) or durable-functions (ldf)")
		from, to := fs.String("from", "", "first day of a series, YYYY-MM-DD"), fs.String("to", "", "last day of a series, YYYY-MM-DD")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, p query.PageRequest) (any, func(io.Writer), error) {
			if *date != "" {
				if *from != "" || *to != "" {
					return nil, nil, &query.ParamError{Param: "from", Reason: "--from and --to are for a series, without --date"}
				}
				it, err := c.Metrics(ctx, *date, *wt)
				return it, qItemTable(it), err
			}
			if *wt == "" {
				return nil, nil, &query.ParamError{Param: "workflowType", Reason: "give --date and --workflow-type, or --workflow-type for a series (see also: query compare)"}
			}
			var r query.TimeRange
			for _, d := range []struct {
				name, v string
				dst     *time.Time
			}{{"from", *from, &r.From}, {"to", *to, &r.To}} {
				if d.v == "" {
					continue
				}
				if _, err := query.ParseDate(d.name, d.v); err != nil {
					return nil, nil, err
				}
				*d.dst, _ = time.Parse("2006-01-02", d.v)
			}
			page, err := c.MetricsSeries(ctx, *wt, r, p)
			return page, qPageTable(page, []string{"DATE", "TYPE", "EXECUTIONS", "SUCCEEDED", "FAILED", "AVG MS", "TOTAL $", "AVG $/EXEC"},
				"date", "workflowType", "executionCount", "successCount", "failureCount", "avgDurationMs", "totalCost", "avgCostPerExecution"), err
		}
	}},
	{name: "compare", setup: func(fs *flag.FlagSet) queryAction {
		date := fs.String("date", "", "the day, YYYY-MM-DD")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			cmp, err := c.CompareMetrics(ctx, *date)
			return cmp, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "%s\tSTEP-FUNCTIONS\tDURABLE-FUNCTIONS\tLDF/SF\n", cmp.Date)
				for _, m := range []string{"executionCount", "successCount", "failureCount", "successRate", "avgDurationMs", "totalCost", "avgCostPerExecution"} {
					sf, ldf := qMetricCell(cmp.StepFunctions, cmp.SuccessRates[query.StepFunctions], m), qMetricCell(cmp.DurableFunctions, cmp.SuccessRates[query.DurableFunctions], m)
					ratio := "-"
					if r, ok := cmp.Ratios[m]; ok && r != nil {
						ratio = fmt.Sprintf("%.3f", *r)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m, sf, ldf, ratio)
				}
				tw.Flush()
			}, err
		}
	}},
	{name: "job", setup: func(fs *flag.FlagSet) queryAction {
		inst, job := fs.Int64("installation", -1, "GitHub App installation id (0 for GHES without one)"), fs.Int64("job", 0, "workflow job id")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			if *inst < 0 {
				return nil, nil, &query.ParamError{Param: "installation", Reason: "is required"}
			}
			it, err := c.Job(ctx, *inst, *job)
			return it, qItemTable(it), err
		}
	}},
	{name: "jobs", paged: true, setup: func(fs *flag.FlagSet) queryAction {
		inst := fs.Int64("installation", -1, "GitHub App installation id (0 for GHES without one)")
		status := fs.String("status", "", "queued, waiting, scheduled, in_progress or completed (GSI1)")
		stuck := fs.Float64("stuck-hours", 0, "only jobs created more than N hours before --now (default status in_progress)")
		repo := fs.String("repo", "", "owner/name: the repository's jobs (GSI2), with statistics")
		since := fs.String("since", "", "with --repo: jobs created at or after this time (RFC 3339)")
		return func(ctx context.Context, c *query.Client, _ string, now time.Time, p query.PageRequest) (any, func(io.Writer), error) {
			cols := []string{"CREATED", "STATUS", "CONCLUSION", "JOB", "REPO", "NAME"}
			attrs := []string{"created_at", "status", "conclusion", "job_id", "repo_full_name", "job_name"}
			switch {
			case *inst < 0:
				return nil, nil, &query.ParamError{Param: "installation", Reason: "is required"}
			case *repo != "" && (*status != "" || *stuck != 0):
				return nil, nil, &query.ParamError{Param: "repo", Reason: "cannot be combined with --status or --stuck-hours"}
			case *repo != "":
				t, err := query.ParseTime("since", *since)
				if err != nil {
					return nil, nil, err
				}
				rp, err := c.RepoJobs(ctx, *inst, *repo, t, p)
				return rp, func(w io.Writer) {
					if st := rp.Stats; st != nil {
						fmt.Fprintf(w, "%d jobs (%d completed: %d succeeded, %d failed), success rate %s, average duration %s; %d requests\n\n",
							st.Jobs, st.Completed, st.Succeeded, st.Failed, qPercent(st.SuccessRate), qMillis(st.AvgDurationMs), st.Requests)
					}
					qPageTable(rp.Page, cols, attrs...)(w)
				}, err
			case *since != "":
				return nil, nil, &query.ParamError{Param: "since", Reason: "is only for --repo"}
			case *stuck < 0:
				return nil, nil, &query.ParamError{Param: "stuckHours", Reason: "must be positive"}
			case *stuck > 0:
				st := *status
				if st == "" {
					st = "in_progress"
				}
				page, err := c.JobsByStatus(ctx, *inst, st, now.Add(-time.Duration(*stuck*float64(time.Hour))), p)
				return page, qPageTable(page, cols, attrs...), err
			}
			page, err := c.JobsByStatus(ctx, *inst, *status, time.Time{}, p)
			return page, qPageTable(page, cols, attrs...), err
		}
	}},
	{name: "run", setup: func(fs *flag.FlagSet) queryAction {
		inst := fs.Int64("installation", -1, "GitHub App installation id")
		run, attempt := fs.Int64("run", 0, "workflow run id"), fs.Int64("attempt", 1, "run attempt")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			if *inst < 0 {
				return nil, nil, &query.ParamError{Param: "installation", Reason: "is required"}
			}
			v, err := c.Run(ctx, *inst, *run, *attempt)
			return v, func(w io.Writer) {
				fmt.Fprintf(w, "run %d/%d attempt %d: complete %v", *inst, *run, *attempt, v.Complete)
				if v.Run != nil {
					fmt.Fprintf(w, "; summary: %s of %s jobs completed, %s failed, status %s, conclusion %s",
						qCell(v.Run["completed_jobs"]), qCell(v.Run["total_jobs"]), qCell(v.Run["failed_jobs"]), qCell(v.Run["status"]), qCell(v.Run["conclusion"]))
				}
				fmt.Fprint(w, "\n\n")
				qRowsTable(v.Jobs, []string{"CREATED", "STATUS", "CONCLUSION", "JOB", "NAME"}, "created_at", "status", "conclusion", "job_id", "job_name")(w)
			}, err
		}
	}},
	{name: "timeline", setup: func(fs *flag.FlagSet) queryAction {
		inst, job := fs.Int64("installation", -1, "GitHub App installation id"), fs.Int64("job", 0, "workflow job id")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			if *inst < 0 {
				return nil, nil, &query.ParamError{Param: "installation", Reason: "is required"}
			}
			tl, err := c.Timeline(ctx, *inst, *job)
			return tl, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tTYPE\tID\tCHANGES")
				for _, e := range tl.Events {
					changes := []string{"(no change)"}
					if len(e.Changes) > 0 {
						changes = changes[:0]
						for _, ch := range e.Changes {
							changes = append(changes, fmt.Sprintf("%s: %s -> %s", ch.Path, qCell(ch.Old), qCell(ch.New)))
						}
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.Format(time.RFC3339), e.Type, e.ID, changes[0])
					for _, ch := range changes[1:] {
						fmt.Fprintf(tw, "\t\t\t%s\n", ch)
					}
				}
				tw.Flush()
			}, err
		}
	}},
	{name: "duplicates", setup: func(fs *flag.FlagSet) queryAction {
		inst, job := fs.Int64("installation", -1, "GitHub App installation id"), fs.Int64("job", 0, "workflow job id")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			if *inst < 0 {
				return nil, nil, &query.ParamError{Param: "installation", Reason: "is required"}
			}
			d, err := c.Duplicates(ctx, *inst, *job)
			return d, func(w io.Writer) {
				fmt.Fprintf(w, "%s: %d webhook deliveries, %d actions received more than once\n", d.Subject, d.Webhooks, len(d.Groups))
				if len(d.Groups) == 0 {
					return
				}
				fmt.Fprintln(w)
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ACTION\tDELIVERY\tTIME\tSAME PAYLOAD")
				for _, g := range d.Groups {
					for _, dl := range g.Deliveries {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", g.Action, dl.ID, dl.Time.Format(time.RFC3339), dl.SameAsFirst)
					}
				}
				tw.Flush()
			}, err
		}
	}},
	{name: "message", args: "ID", setup: func(*flag.FlagSet) queryAction {
		return func(ctx context.Context, c *query.Client, id string, _ time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			it, err := c.Message(ctx, id)
			return it, qItemTable(it), err
		}
	}},
	{name: "messages", paged: true, stageFlag: true, setup: func(fs *flag.FlagSet) queryAction {
		stage := fs.String("stage", "", "dev, stage or prod")
		status := fs.String("status", "", "created, queued, processing, completed or failed")
		typ := fs.String("type", "", "message type, e.g. scheduled_hello")
		from, to := fs.String("from", "", "earliest created_date (RFC 3339)"), fs.String("to", "", "latest created_date (RFC 3339)")
		return func(ctx context.Context, c *query.Client, _ string, _ time.Time, p query.PageRequest) (any, func(io.Writer), error) {
			r, err := qRange("from", *from, "to", *to)
			if err != nil {
				return nil, nil, err
			}
			page, err := c.Messages(ctx, query.MessageFilter{Stage: *stage, Status: *status, Type: *typ, Created: r}, p)
			return page, qPageTable(page, []string{"CREATED", "STAGE", "STATUS", "TYPE", "MESSAGE"},
				"created_date", "stage", "status", "message_type", "message_id"), err
		}
	}},
	{name: "message-stats", stageFlag: true, setup: func(fs *flag.FlagSet) queryAction {
		stage := fs.String("stage", "", "dev, stage or prod; default each")
		hours := fs.Float64("hours", 24, "the window: the last N hours before --now")
		return func(ctx context.Context, c *query.Client, _ string, now time.Time, _ query.PageRequest) (any, func(io.Writer), error) {
			if *hours <= 0 {
				return nil, nil, &query.ParamError{Param: "hours", Reason: "must be positive"}
			}
			ms, err := c.MessageStats(ctx, *stage, now.Add(-time.Duration(*hours*float64(time.Hour))), now)
			return ms, func(w io.Writer) {
				fmt.Fprintf(w, "messages created %s .. %s\n\n", ms.From.Format(time.RFC3339), ms.To.Format(time.RFC3339))
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "STAGE\t"+strings.ToUpper(strings.Join(query.MessageStatuses, "\t"))+"\tTOTAL\tSUCCESS\t")
				for _, s := range ms.Stages {
					fmt.Fprintf(tw, "%s\t", s.Stage)
					for _, st := range query.MessageStatuses {
						fmt.Fprintf(tw, "%d\t", s.Counts[st])
					}
					fmt.Fprintf(tw, "%d\t%s\t\n", s.Total, qPercent(s.SuccessRate))
				}
				tw.Flush()
			}, err
		}
	}},
}

func runQuery(ctx context.Context, env *cliEnv, args []string) int {
	names := make([]string, len(querySubs))
	for i, s := range querySubs {
		names[i] = s.name
	}
	subName, code, ok := subcommand(env, "query", args, queryHelp, names...)
	if !ok {
		return code
	}
	var sub querySub
	for _, s := range querySubs {
		if s.name == subName {
			sub = s
		}
	}
	fs := flag.NewFlagSet("query "+subName, flag.ContinueOnError)
	var o queryOpts
	if sub.stageFlag {
		tmp := flag.NewFlagSet("", flag.ContinueOnError)
		o.g.register(tmp, env)
		tmp.VisitAll(func(f *flag.Flag) {
			name := f.Name
			if name == "stage" {
				name = "table-stage"
			}
			fs.Var(f.Value, name, f.Usage)
		})
	} else {
		o.g.register(fs, env)
	}
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (as the HTTP API answers)")
	if sub.paged {
		fs.IntVar(&o.limit, "limit", 0, "page size (default 50, at most 200)")
		fs.StringVar(&o.cursor, "cursor", "", "continue after the page whose \"next\" this is")
	}
	fs.StringVar(&o.cursorKey, "cursor-key", env.getenv("STREAMFOLD_CURSOR_KEY"), "key signing cursors, 16 bytes or more (env STREAMFOLD_CURSOR_KEY; local endpoints default to a fixed development key)")
	fs.StringVar(&o.now, "now", "", "the clock of relative windows, RFC 3339 (default: now)")
	action := sub.setup(fs)
	fs.Usage = func() { fmt.Fprint(env.stderr, queryHelp); fs.PrintDefaults() }
	// Flags may come before or after the positional argument.
	var positional []string
	for rest := args[1:]; ; {
		if code, ok := parse(fs, env, rest); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	arg := ""
	switch {
	case sub.args == "" && len(positional) > 0:
		return errorf(env, exitUsage, "query %s: unexpected argument %q", subName, positional[0])
	case sub.args != "" && len(positional) != 1:
		return errorf(env, exitUsage, "query %s: want exactly one %s", subName, sub.args)
	case sub.args != "":
		arg = positional[0]
	}
	now := time.Now().UTC()
	if o.now != "" {
		t, err := query.ParseTime("now", o.now)
		if err != nil {
			return errorf(env, exitUsage, "query %s: --%v", subName, strings.TrimPrefix(err.Error(), "query: "))
		}
		now = t
	}
	n, err := o.g.naming()
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	key, oneOff, err := qCursorKey(o.cursorKey, o.g.ddbEndpoint)
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	if oneOff && o.cursor != "" {
		return errorf(env, exitUsage, "query %s: --cursor needs the key that signed it: set --cursor-key or STREAMFOLD_CURSOR_KEY", subName)
	}
	clients, err := o.g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "query: %v", err)
	}
	qc, err := query.New(clients.DynamoDB, n, query.Config{CursorKey: key})
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	res, table, err := action(ctx, qc, arg, now, query.PageRequest{Limit: o.limit, Cursor: o.cursor})
	if err != nil {
		return qError(env, subName, err)
	}
	if o.asJSON {
		if err := writeJSON(env.stdout, res); err != nil {
			return errorf(env, exitRuntime, "query: %v", err)
		}
	} else {
		table(env.stdout)
	}
	if next := qNextOf(res); next != "" {
		if !o.asJSON {
			fmt.Fprintf(env.stdout, "\nmore: add --cursor %s\n", next)
		}
		if oneOff {
			fmt.Fprintln(env.stderr, "streamfold: query: the next cursor is signed with a one-off key and is valid in this invocation only; set STREAMFOLD_CURSOR_KEY to page from the command line")
		}
	}
	return exitOK
}

// qError maps a query error to its message and exit code.
func qError(env *cliEnv, sub string, err error) int {
	var pe *query.ParamError
	switch {
	case errors.As(err, &pe):
		switch {
		case (sub == "execution" && pe.Param == "arn") || ((sub == "workflow" || sub == "message") && pe.Param == "id"):
			return errorf(env, exitUsage, "query %s: %s: %s", sub, strings.ToUpper(pe.Param), pe.Reason)
		case pe.Param == "id":
			pe = &query.ParamError{Param: "job", Reason: pe.Reason}
		case pe.Param == "runId":
			pe = &query.ParamError{Param: "run", Reason: pe.Reason}
		}
		return errorf(env, exitUsage, "query %s: --%s: %s", sub, qFlagName(pe.Param), pe.Reason)
	case errors.Is(err, query.ErrBadCursor):
		return errorf(env, exitUsage, "query %s: --cursor: not valid for this query (modified, truncated, signed with another key or issued for other flags)", sub)
	case errors.Is(err, query.ErrNotFound):
		return errorf(env, exitFailed, "query %s: %s", sub, strings.TrimPrefix(err.Error(), "query: "))
	}
	return errorf(env, exitRuntime, "query %s: %v", sub, err)
}

// qFlagName turns an API parameter name into the CLI flag (workflowType ->
// workflow-type).
func qFlagName(param string) string {
	var b strings.Builder
	for _, r := range param {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// qCursorKey picks the cursor key: the given one; else, for a local
// endpoint, the development key; else a random one-off key (oneOff).
func qCursorKey(given, endpoint string) (key []byte, oneOff bool, err error) {
	switch {
	case given != "":
		if len(given) < query.MinCursorKeyBytes {
			return nil, false, fmt.Errorf("--cursor-key: must be at least %d bytes", query.MinCursorKeyBytes)
		}
		return []byte(given), false, nil
	case qIsLocal(endpoint):
		return []byte(devCursorKey), false, nil
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, false, err
	}
	return key, true, nil
}

func qIsLocal(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func qRange(fromName, from, toName, to string) (query.TimeRange, error) {
	f, err := query.ParseTime(fromName, from)
	if err != nil {
		return query.TimeRange{}, err
	}
	t, err := query.ParseTime(toName, to)
	return query.TimeRange{From: f, To: t}, err
}

func qNextOf(res any) string {
	switch v := res.(type) {
	case query.Page:
		return v.Next
	case query.RepoJobsPage:
		return v.Next
	}
	return ""
}

// qCell renders a plain value for a table: "-" when absent.
func qCell(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case string:
		if t == "" {
			return "-"
		}
		return t
	case json.Number:
		return t.String()
	case bool:
		return fmt.Sprint(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func qPercent(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *r*100)
}

func qMillis(ms *float64) string {
	if ms == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", *ms)
}

func qMetricCell(row map[string]any, rate *float64, metric string) string {
	if row == nil {
		return "-"
	}
	if metric == "successRate" {
		return qPercent(rate)
	}
	if row[metric] == nil {
		return "0" // counters never added to are absent
	}
	return qCell(row[metric])
}

// qRowsTable renders items as columns of the given attributes.
func qRowsTable(items []map[string]any, header []string, attrs ...string) func(io.Writer) {
	return func(w io.Writer) {
		if len(items) == 0 {
			fmt.Fprintln(w, "(none)")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, it := range items {
			cells := make([]string, len(attrs))
			for i, a := range attrs {
				cells[i] = qCell(it[a])
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
}

func qPageTable(p query.Page, header []string, attrs ...string) func(io.Writer) {
	return qRowsTable(p.Items, header, attrs...)
}

// qItemTable renders one item as "attribute  value" lines, sorted.
func qItemTable(it map[string]any) func(io.Writer) {
	return func(w io.Writer) {
		names := make([]string, 0, len(it))
		for k := range it {
			names = append(names, k)
		}
		sort.Strings(names)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, k := range names {
			fmt.Fprintf(tw, "%s\t%s\n", k, qCell(it[k]))
		}
		tw.Flush()
	}
}

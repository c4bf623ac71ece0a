package queryview

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streamfold/streamfold/query"
)

// render prints a pattern's result as a table; in is the input it
// answered.
type render func(w io.Writer, res any, in query.Input)

// renders are the tables of query.Patterns, by pattern name.
var renders = map[string]render{
	"executions": qPageRender([]string{"STARTED", "STATUS", "AGENT", "SECONDS", "EXECUTION"},
		"startDate", "status", "agentName", "durationSeconds", "executionArn"),
	"execution": qItemRender,
	"workflow": func(w io.Writer, res any, _ query.Input) {
		ex := res.(query.ExecutionWithAlbums)
		qItemTable(ex.Execution)(w)
		fmt.Fprintln(w)
		qRowsTable(ex.Albums, []string{"ALBUM", "NAME", "ARTIST", "YEAR", "VALIDATED", "PRICE", "CONFIDENCE"},
			"albumIndex", "albumName", "artist", "year", "yearValidated", "priceEstimate", "priceConfidence")(w)
	},
	"running": qPageRender([]string{"CREATED", "TYPE", "STATUS", "STEP", "EXECUTION"},
		"createdAt", "workflowType", "status", "currentStep", "executionId"),
	"tasks": qPageRender([]string{"CREATED", "TYPE", "TASK", "EXECUTION", "EXPIRES"},
		"createdAt", "workflowType", "taskId", "executionId", "expiresAt"),
	"metrics": func(w io.Writer, res any, in query.Input) {
		if it, ok := res.(map[string]any); ok {
			qItemTable(it)(w)
			return
		}
		qPageRender([]string{"DATE", "TYPE", "EXECUTIONS", "SUCCEEDED", "FAILED", "AVG MS", "TOTAL $", "AVG $/EXEC"},
			"date", "workflowType", "executionCount", "successCount", "failureCount", "avgDurationMs", "totalCost", "avgCostPerExecution")(w, res, in)
	},
	"compare": func(w io.Writer, res any, _ query.Input) {
		cmp := res.(query.Comparison)
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
	},
	"job": qItemRender,
	"jobs": func(w io.Writer, res any, in query.Input) {
		jobs := qPageRender([]string{"CREATED", "STATUS", "CONCLUSION", "JOB", "REPO", "NAME"},
			"created_at", "status", "conclusion", "job_id", "repo_full_name", "job_name")
		rp, ok := res.(query.RepoJobsPage)
		if !ok {
			jobs(w, res, in)
			return
		}
		if st := rp.Stats; st != nil {
			fmt.Fprintf(w, "%d jobs (%d completed: %d succeeded, %d failed), success rate %s, average duration %s; %d requests\n\n",
				st.Jobs, st.Completed, st.Succeeded, st.Failed, qPercent(st.SuccessRate), qMillis(st.AvgDurationMs), st.Requests)
		}
		jobs(w, rp.Page, in)
	},
	"run": func(w io.Writer, res any, in query.Input) {
		v := res.(query.RunView)
		inst, _ := in.Value("installation")
		run, _ := in.Value("runId")
		attempt, _ := in.Value("attempt")
		fmt.Fprintf(w, "run %s/%s attempt %s: complete %v", inst, run, attempt, v.Complete)
		if v.Run != nil {
			fmt.Fprintf(w, "; summary: %s of %s jobs completed, %s failed, status %s, conclusion %s",
				qCell(v.Run["completed_jobs"]), qCell(v.Run["total_jobs"]), qCell(v.Run["failed_jobs"]), qCell(v.Run["status"]), qCell(v.Run["conclusion"]))
		}
		fmt.Fprint(w, "\n\n")
		qRowsTable(v.Jobs, []string{"CREATED", "STATUS", "CONCLUSION", "JOB", "NAME"}, "created_at", "status", "conclusion", "job_id", "job_name")(w)
	},
	"timeline": func(w io.Writer, res any, _ query.Input) {
		tl := res.(query.Timeline)
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
	},
	"duplicates": func(w io.Writer, res any, _ query.Input) {
		d := res.(query.Duplicates)
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
	},
	"message": qItemRender,
	"messages": qPageRender([]string{"CREATED", "STAGE", "STATUS", "TYPE", "MESSAGE"},
		"created_date", "stage", "status", "message_type", "message_id"),
	"message-stats": func(w io.Writer, res any, _ query.Input) {
		ms := res.(query.MessageStats)
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
	},
}

// qPageRender renders a query.Page as columns of the given attributes.
func qPageRender(header []string, attrs ...string) render {
	return func(w io.Writer, res any, _ query.Input) {
		qRowsTable(res.(query.Page).Items, header, attrs...)(w)
	}
}

// qItemRender renders one item.
func qItemRender(w io.Writer, res any, _ query.Input) { qItemTable(res.(map[string]any))(w) }

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

package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/streamfold/streamfold/query"
)

// GET /api/executions?agent=A|status=S&from=&to=&limit=&cursor=
func (s *server) executions(r *http.Request) (any, error) {
	q := r.URL.Query()
	agent, status := q.Get("agent"), q.Get("status")
	if (agent == "") == (status == "") {
		return nil, paramError("agent", "give exactly one of agent or status")
	}
	rg, err := timeRange(r)
	if err != nil {
		return nil, err
	}
	p, err := s.page(r)
	if err != nil {
		return nil, err
	}
	if agent != "" {
		return s.q.ExecutionsByAgent(r.Context(), agent, rg, p)
	}
	return s.q.ExecutionsByStatus(r.Context(), status, rg, p)
}

// GET /api/executions/{arn}
func (s *server) execution(r *http.Request) (any, error) {
	return s.q.Execution(r.Context(), r.PathValue("arn"))
}

// GET /api/workflows/executions/{id}
func (s *server) workflowExecution(r *http.Request) (any, error) {
	return s.q.WorkflowExecution(r.Context(), r.PathValue("id"))
}

// GET /api/workflows/running?workflowType=
func (s *server) running(r *http.Request) (any, error) {
	p, err := s.page(r)
	if err != nil {
		return nil, err
	}
	return s.q.RunningExecutions(r.Context(), r.URL.Query().Get("workflowType"), p)
}

// GET /api/workflows/tasks/pending?workflowType=
func (s *server) pendingTasks(r *http.Request) (any, error) {
	p, err := s.page(r)
	if err != nil {
		return nil, err
	}
	return s.q.PendingTasks(r.Context(), r.URL.Query().Get("workflowType"), p)
}

// GET /api/metrics?date=D&workflowType=T  -> the row
// GET /api/metrics?workflowType=T&from=D&to=D -> rows of a type, newest first
// GET /api/metrics?date=D -> both rows of the day
func (s *server) metrics(r *http.Request) (any, error) {
	q := r.URL.Query()
	date, wt := q.Get("date"), q.Get("workflowType")
	if date != "" && (q.Get("from") != "" || q.Get("to") != "") {
		return nil, paramError("from", "is only for a series (no date)")
	}
	switch {
	case date != "" && wt != "":
		return s.q.Metrics(r.Context(), date, wt)
	case date != "":
		c, err := s.q.CompareMetrics(r.Context(), date)
		if err != nil {
			return nil, err
		}
		items := []map[string]any{}
		for _, row := range []map[string]any{c.StepFunctions, c.DurableFunctions} {
			if row != nil {
				items = append(items, row)
			}
		}
		return query.Page{Items: items}, nil
	case wt != "":
		var rg query.TimeRange
		for _, b := range []struct {
			name string
			dst  *time.Time
		}{{"from", &rg.From}, {"to", &rg.To}} {
			if v := q.Get(b.name); v != "" {
				d, err := query.ParseDate(b.name, v)
				if err != nil {
					return nil, err
				}
				*b.dst, _ = time.Parse("2006-01-02", d)
			}
		}
		p, err := s.page(r)
		if err != nil {
			return nil, err
		}
		return s.q.MetricsSeries(r.Context(), wt, rg, p)
	}
	return nil, paramError("date", "give date, workflowType or both")
}

// GET /api/metrics/compare?date=D
func (s *server) compare(r *http.Request) (any, error) {
	return s.q.CompareMetrics(r.Context(), r.URL.Query().Get("date"))
}

// GET /api/jobs?installation=I&status=S[&stuckHours=N]
// GET /api/jobs?installation=I&repo=R[&since=T]
func (s *server) jobs(r *http.Request) (any, error) {
	q := r.URL.Query()
	iv := q.Get("installation")
	if iv == "" {
		return nil, paramError("installation", "is required")
	}
	inst, err := query.ParseInt("installation", iv)
	if err != nil {
		return nil, err
	}
	p, err := s.page(r)
	if err != nil {
		return nil, err
	}
	status, repo, stuck := q.Get("status"), q.Get("repo"), q.Get("stuckHours")
	switch {
	case repo != "" && (status != "" || stuck != ""):
		return nil, paramError("repo", "cannot be combined with status or stuckHours")
	case repo != "":
		since, err := query.ParseTime("since", q.Get("since"))
		if err != nil {
			return nil, err
		}
		return s.q.RepoJobs(r.Context(), inst, repo, since, p)
	case q.Get("since") != "":
		return nil, paramError("since", "is only for repo")
	case status == "" && stuck == "":
		return nil, paramError("status", "give status (optionally with stuckHours) or repo")
	}
	var before time.Time
	if stuck != "" {
		h, err := strconv.ParseFloat(stuck, 64)
		if err != nil || h <= 0 || h > 24*90 {
			return nil, paramError("stuckHours", "must be a number of hours between 0 and 2160, got %q", stuck)
		}
		before = s.cfg.Now().Add(-time.Duration(h * float64(time.Hour)))
		if status == "" {
			status = "in_progress"
		}
	}
	return s.q.JobsByStatus(r.Context(), inst, status, before, p)
}

func jobKey(r *http.Request) (int64, int64, error) {
	inst, err := pathInt(r, "installation")
	if err != nil {
		return 0, 0, err
	}
	id, err := pathInt(r, "id")
	return inst, id, err
}

// GET /api/jobs/{installation}/{id}
func (s *server) job(r *http.Request) (any, error) {
	inst, id, err := jobKey(r)
	if err != nil {
		return nil, err
	}
	return s.q.Job(r.Context(), inst, id)
}

// GET /api/jobs/{installation}/{id}/timeline
func (s *server) timeline(r *http.Request) (any, error) {
	inst, id, err := jobKey(r)
	if err != nil {
		return nil, err
	}
	return s.q.Timeline(r.Context(), inst, id)
}

// GET /api/jobs/{installation}/{id}/duplicates
func (s *server) duplicates(r *http.Request) (any, error) {
	inst, id, err := jobKey(r)
	if err != nil {
		return nil, err
	}
	return s.q.Duplicates(r.Context(), inst, id)
}

// GET /api/runs/{installation}/{runId}/{attempt}
func (s *server) run(r *http.Request) (any, error) {
	inst, err := pathInt(r, "installation")
	if err != nil {
		return nil, err
	}
	run, err := pathInt(r, "runId")
	if err != nil {
		return nil, err
	}
	attempt, err := pathInt(r, "attempt")
	if err != nil {
		return nil, err
	}
	return s.q.Run(r.Context(), inst, run, attempt)
}

// GET /api/messages/{id}
func (s *server) message(r *http.Request) (any, error) {
	return s.q.Message(r.Context(), r.PathValue("id"))
}

// GET /api/messages?stage=|status=|type=&from=&to=
func (s *server) messages(r *http.Request) (any, error) {
	q := r.URL.Query()
	rg, err := timeRange(r)
	if err != nil {
		return nil, err
	}
	p, err := s.page(r)
	if err != nil {
		return nil, err
	}
	return s.q.Messages(r.Context(), query.MessageFilter{Stage: q.Get("stage"), Status: q.Get("status"), Type: q.Get("type"), Created: rg}, p)
}

// GET /api/messages/stats?stage=&hours=24
func (s *server) messageStats(r *http.Request) (any, error) {
	q := r.URL.Query()
	hours := 24.0
	if v := q.Get("hours"); v != "" {
		h, err := strconv.ParseFloat(v, 64)
		if err != nil || h <= 0 || h > query.MaxStatsWindow.Hours() {
			return nil, paramError("hours", "must be a number of hours between 0 and %d, got %q", int(query.MaxStatsWindow.Hours()), v)
		}
		hours = h
	}
	to := s.cfg.Now().UTC()
	return s.q.MessageStats(r.Context(), q.Get("stage"), to.Add(-time.Duration(hours*float64(time.Hour))), to)
}

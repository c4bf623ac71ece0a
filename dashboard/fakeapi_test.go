package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
)

// fakeAPI is a tiny stand-in for the HTTP API with its routes and response
// shapes ({"items","next"} lists, {"error":{code,message,param}} errors,
// bearer auth), serving fixed data. It lets the page's states (token form,
// errors, empty lists, paging links) be tested without DynamoDB; the end-to-
// end test uses the real api and query packages.
type fakeAPI struct {
	mu    sync.Mutex // guards fail against the server's goroutines
	token string
	// executions are served by /api/executions, filtered by agent or status,
	// paged by offset cursors "o<N>".
	executions []map[string]any
	// fail maps a route path (e.g. "/api/messages/stats") to the error it
	// answers.
	fail map[string]fakeError
	// jobs are served by /api/jobs (status filter); stuck lists jobs of
	// /api/jobs?stuckHours=.
	jobs, stuck []map[string]any
	// now is the fake's clock, sent on every response as api.NowHeader
	// (fakeNow: years away from any browser's clock, so that a page
	// computing "now" on its own clock is caught).
	now time.Time
	// executionQueries are the query strings /api/executions was called
	// with, in order.
	executionQueries []url.Values
}

// fakeNow is the fake API's clock.
var fakeNow = time.Date(2031, time.March, 4, 20, 0, 0, 0, time.UTC)

type fakeError struct {
	status               int
	code, message, param string
}

func newFakeAPI() *fakeAPI {
	f := &fakeAPI{token: "fake-token", fail: map[string]fakeError{}, now: fakeNow}
	for i := range 7 {
		status := "SUCCEEDED"
		if i == 2 {
			status = "FAILED"
		}
		f.executions = append(f.executions, map[string]any{
			"executionArn":    "arn:aws:states:us-west-2:1:execution:sql-agent-prod:run-" + strconv.Itoa(i),
			"agentName":       "sql-agent",
			"executionName":   "run-" + strconv.Itoa(i),
			"status":          status,
			"startDate":       "2026-01-05T10:0" + strconv.Itoa(i) + ":00.000Z",
			"stopDate":        "2026-01-05T10:0" + strconv.Itoa(i) + ":30.000Z",
			"durationSeconds": json.Number(strconv.Itoa(30 + i)),
		})
	}
	for i, age := range []time.Duration{30 * time.Minute, 9 * time.Hour, 30 * time.Hour} {
		id := strconv.Itoa(100 + i)
		j := map[string]any{
			"pk": "12345#" + id, "sk": "v", "installation_id": json.Number("12345"), "job_id": json.Number(id),
			"run_id": json.Number("777"), "run_attempt": json.Number("1"), "status": "in_progress",
			"repo_full_name": "acme-corp/api", "workflow_name": "CI", "job_name": "build-" + id,
			"created_at": f.now.Add(-age).UTC().Format("2006-01-02T15:04:05.000Z"),
		}
		f.jobs = append(f.jobs, j)
		if age > 6*time.Hour {
			f.stuck = append(f.stuck, j)
		}
	}
	return f
}

// setFail makes a route answer an error (a zero fakeError: answer again).
func (f *fakeAPI) setFail(route string, e fakeError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.status == 0 {
		delete(f.fail, route)
	} else {
		f.fail[route] = e
	}
}

// server serves the dashboard and the fake API.
func (f *fakeAPI) server(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", dashboard.Handler())
	mux.HandleFunc("/api/", f.serveAPI)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, e fakeError) {
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"code": e.code, "message": e.message, "param": e.param}})
}

func (f *fakeAPI) serveAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(api.NowHeader, f.now.Format(api.NowFormat))
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		writeErr(w, fakeError{http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token", ""})
		return
	}
	f.mu.Lock()
	e, ok := f.fail[r.URL.Path]
	f.mu.Unlock()
	if ok {
		writeErr(w, e)
		return
	}
	q := r.URL.Query()
	switch r.URL.Path {
	case "/api/executions":
		f.mu.Lock()
		f.executionQueries = append(f.executionQueries, q)
		f.mu.Unlock()
		var match []map[string]any
		for _, e := range f.executions {
			if (q.Get("agent") == "" || e["agentName"] == q.Get("agent")) && (q.Get("status") == "" || e["status"] == q.Get("status")) {
				match = append(match, e)
			}
		}
		page(w, q, match)
	case "/api/jobs":
		if q.Get("stuckHours") != "" {
			page(w, q, f.stuck)
			return
		}
		var match []map[string]any
		for _, j := range f.jobs {
			if j["status"] == q.Get("status") {
				match = append(match, j)
			}
		}
		page(w, q, match)
	case "/api/metrics":
		if q.Get("workflowType") == "" {
			writeErr(w, fakeError{http.StatusBadRequest, "invalid_parameter", "give date, workflowType or both", "date"})
			return
		}
		page(w, q, nil)
	case "/api/vocabulary":
		writeJSON(w, http.StatusOK, api.NewVocabulary())
	case "/api/metrics/compare":
		writeJSON(w, http.StatusOK, map[string]any{"date": q.Get("date"), "stepFunctions": nil, "durableFunctions": nil,
			"successRates": map[string]any{}, "ratios": map[string]any{}})
	case "/api/workflows/running", "/api/workflows/tasks/pending":
		page(w, q, nil)
	case "/api/messages/stats":
		var stages []map[string]any
		for i, st := range []string{"dev", "stage", "prod"} {
			stages = append(stages, map[string]any{"stage": st, "total": 4 + i, "successRate": 3.0 / float64(3+1+i),
				"counts": map[string]int{"created": 0, "queued": 0, "processing": 0, "completed": 3, "failed": 1 + i}})
		}
		writeJSON(w, http.StatusOK, map[string]any{"stages": stages})
	case "/api/operations":
		// A deployment where nothing ran yet: no heartbeats, no reconcile.
		writeJSON(w, http.StatusOK, map[string]any{"now": f.now, "staleAfterSeconds": 600, "gapsSince": f.now.Add(-7 * 24 * time.Hour), "gaps": []any{},
			"lastReconcile": nil, "consumers": []map[string]any{
				{"consumer": "projector", "state": "none", "heartbeatAgeSeconds": nil, "shards": []any{}},
				{"consumer": "archiver", "state": "none", "heartbeatAgeSeconds": nil, "shards": []any{}}}})
	case "/api/operations/deadletters":
		writeJSON(w, http.StatusOK, map[string]any{"since": f.now.Add(-7 * 24 * time.Hour), "consumer": q.Get("consumer"), "status": "all",
			"consumers": []map[string]any{{"consumer": "projector", "quarantined": 0, "replayed": 0}}, "items": []any{}, "total": 0})
	default:
		writeErr(w, fakeError{http.StatusNotFound, "not_found", "no route " + r.URL.Path, ""})
	}
}

// page serves one page of items by offset cursor.
func page(w http.ResponseWriter, q map[string][]string, items []map[string]any) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	limit, _ := strconv.Atoi(get("limit"))
	if limit <= 0 {
		limit = 50
	}
	off := 0
	if c := get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "o"))
		if err != nil || !strings.HasPrefix(c, "o") {
			writeErr(w, fakeError{http.StatusBadRequest, "bad_cursor", "cursor is not valid", "cursor"})
			return
		}
		off = n
	}
	end := min(off+limit, len(items))
	next := ""
	if end < len(items) {
		next = "o" + strconv.Itoa(end)
	}
	out := items[min(off, len(items)):end]
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out, "next": next})
}

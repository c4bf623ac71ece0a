package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/query"
)

const e2eToken = "e2e-dashboard-token-7f3a"

// TestDashboardEndToEnd loads the dashboard in headless Chromium, served by
// the real HTTP API over DynamoDB Local holding a projected simulated
// workload, and checks that every figure the page shows equals what the
// API answers for the same filters: executions and their pages, sf/ldf
// daily metrics (table, totals and chart), running executions and pending
// tasks, jobs with the stuck ones highlighted, a repository's statistics, a
// run, and message counts per stage. It checks that the first load, with
// nothing typed, shows rows in every section. It saves screenshots.
func TestDashboardEndToEnd(t *testing.T) {
	t.Parallel()       // its Chromium runs overlap the other browser test's waits
	b := newBrowser(t) // skips (or fails under STREAMFOLD_REQUIRE_SERVICES=1) without Chromium
	c := testenv.Clients(t)
	n, tables := testenv.Tables(t, c)
	w := loadWorkload(t, c, n, tables, 800, 600)
	inst := strconv.FormatInt(w.Installation, 10)

	qc, err := query.New(c.DynamoDB, n, query.Config{CursorKey: []byte("dashboard-e2e-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	// The API's clock is the test clock the workload was planned at, and
	// stands still, so that the page and the checks below see the same
	// "last 24 hours" and "older than 6 hours" windows whatever the day
	// (STREAMFOLD_TEST_NOW) and the browser's clock.
	h, err := api.New(api.Config{Queries: qc, Token: e2eToken, Dashboard: dashboard.Handler(), MaxPageSize: 200,
		Logger: quietLogger(), Now: func() time.Time { return w.Now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := &apiClient{t: t, base: srv.URL, token: e2eToken}

	// The data lies from the workload's first day to now.
	first, today := w.First.Format("2006-01-02"), w.Today.Format("2006-01-02")
	var days []string
	for d := w.First; !d.After(w.Today); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format("2006-01-02"))
	}
	agent := busiestAgent(t, a, first, today)
	main := url.Values{
		"e.agent": {agent}, "e.from": {first}, "e.to": {today}, "e.limit": {"10"},
		"m.from": {first}, "m.to": {today},
		"j.inst": {inst}, "j.status": {"in_progress"}, "j.stuck": {"6"},
		"s.hours": {"24"},
	}
	page := func(v url.Values) string { return srv.URL + "/#token=" + e2eToken + "&" + v.Encode() }

	doc := b.dom(t, page(main))
	stats := a.messageStats()
	stuck := a.allItems("jobs", url.Values{"installation": {inst}, "status": {"in_progress"}, "stuckHours": {"6"}})
	ready(t, doc)

	t.Run("executions", func(t *testing.T) {
		want := a.list("executions", url.Values{"agent": {agent}, "from": {first + "T00:00:00Z"}, "to": {today + "T23:59:59.999Z"}, "limit": {"10"}})
		checkExecutions(t, doc, want, "1")
		if want.Next == "" {
			t.Fatalf("agent %s has a single page of executions; the workload is too small to test paging", agent)
		}
		if doc.one(t, "exec-next").has("hidden") {
			t.Fatal("Next link hidden, but the API has a next page")
		}
	})

	t.Run("metrics", func(t *testing.T) {
		total := map[string]float64{}
		for _, date := range days {
			cmp := a.object("metrics/compare", url.Values{"date": {date}})
			rates, _ := cmp["successRates"].(map[string]any)
			for _, wt := range []struct{ key, short, wt string }{{"stepFunctions", "sf", "step-functions"}, {"durableFunctions", "ldf", "durable-functions"}} {
				row, _ := cmp[wt.key].(map[string]any)
				for _, fig := range []string{"executionCount", "successCount", "failureCount", "avgDurationMs", "avgCostPerExecution"} {
					checkValue(t, doc, fmt.Sprintf("m-%s-%s-%s", date, wt.short, fig), field(row, fig))
				}
				checkValue(t, doc, fmt.Sprintf("m-%s-%s-successRate", date, wt.short), rates[wt.wt])
				bars := doc.byTestID(fmt.Sprintf("chart-bar-%s-%s", date, wt.short))
				if row == nil {
					if len(bars) != 0 {
						t.Errorf("chart: a bar for %s %s, which has no metrics row", date, wt.short)
					}
					continue
				}
				if len(bars) != 1 || !sameNumber(bars[0].attrs["data-value"], row["executionCount"]) {
					t.Errorf("chart bar %s %s = %v, want executionCount %v", date, wt.short, bars, row["executionCount"])
				}
				total[wt.short] += number(t, row["executionCount"])
			}
		}
		for _, s := range []string{"sf", "ldf"} {
			if total[s] == 0 {
				t.Errorf("no %s executions in the workload's days", s)
			}
			checkValue(t, doc, "m-total-"+s+"-executionCount", total[s])
		}
		for _, wt := range []string{"step-functions", "durable-functions"} {
			running := a.allItems("workflows/running", url.Values{"workflowType": {wt}})
			pending := a.allItems("workflows/tasks/pending", url.Values{"workflowType": {wt}})
			if len(running) == 0 || len(pending) == 0 {
				t.Errorf("%s: %d running executions, %d pending tasks; the workload has some of each", wt, len(running), len(pending))
			}
			checkValue(t, doc, "running-"+wt, len(running))
			checkValue(t, doc, "pending-"+wt, len(pending))
		}
	})

	t.Run("jobs", func(t *testing.T) {
		want := a.list("jobs", url.Values{"installation": {inst}, "status": {"in_progress"}})
		if len(stuck) == 0 {
			t.Fatalf("the workload has no stuck in_progress job of installation %s", inst)
		}
		checkValue(t, doc, "jobs-stuck-count", len(stuck))
		stuckKeys := map[string]bool{}
		for _, j := range stuck {
			stuckKeys[fmt.Sprint(j["pk"])] = true
		}
		rows := doc.byTestID("job-row")
		if got, exp := attrList(rows, "data-key"), itemList(want.Items, "pk"); !slices.Equal(got, exp) {
			t.Errorf("job rows %v, want %v", got, exp)
		}
		highlighted := 0
		for _, r := range rows {
			isStuck := r.attrs["data-stuck"] == "true"
			if isStuck != stuckKeys[r.attrs["data-key"]] {
				t.Errorf("job %s: highlighted %v, API stuck %v", r.attrs["data-key"], isStuck, stuckKeys[r.attrs["data-key"]])
			}
			if isStuck {
				highlighted++
			}
		}
		if highlighted == 0 {
			t.Error("no job row highlighted as stuck")
		}
		checkValue(t, doc, "jobs-count", len(want.Items))
	})

	t.Run("messages", func(t *testing.T) {
		sum := 0.0
		for _, stage := range []string{"dev", "stage", "prod"} {
			st := stats[stage]
			counts, _ := st["counts"].(map[string]any)
			for _, status := range []string{"created", "queued", "processing", "completed", "failed"} {
				checkValue(t, doc, "msg-"+stage+"-"+status, counts[status])
			}
			checkValue(t, doc, "msg-"+stage+"-total", st["total"])
			checkValue(t, doc, "msg-"+stage+"-rate", st["successRate"])
			sum += number(t, st["total"])
		}
		if sum == 0 {
			t.Error("no message in the last 24 hours: the workload misses the window")
		}
	})

	// The other views load in parallel (each Chromium mostly waits).
	t.Run("executions page 2", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		next := doc.one(t, "exec-next")
		if next.has("hidden") {
			t.Fatal("Next link hidden")
		}
		doc2 := b.dom(t, srv.URL+"/"+next.attrs["href"]+"&token="+e2eToken)
		page1 := a.list("executions", url.Values{"agent": {agent}, "from": {first + "T00:00:00Z"}, "to": {today + "T23:59:59.999Z"}, "limit": {"10"}})
		want := a.list("executions", url.Values{"agent": {agent}, "from": {first + "T00:00:00Z"}, "to": {today + "T23:59:59.999Z"}, "limit": {"10"}, "cursor": {page1.Next}})
		checkExecutions(t, doc2, want, "2")
		if prev := doc2.one(t, "exec-prev"); prev.has("hidden") || strings.Contains(prev.attrs["href"], "e.cursor") {
			t.Errorf("page 2: Previous link %v, want a link to page 1", prev.attrs)
		}
	})

	// A run and a repository: the run of the first stuck job (incomplete),
	// the repository of that job since the first day.
	t.Run("run and repository", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		if len(stuck) == 0 {
			t.Fatal("no stuck job")
		}
		job := stuck[0]
		runID, attempt, repo := fmt.Sprint(job["run_id"]), fmt.Sprint(job["run_attempt"]), fmt.Sprint(job["repo_full_name"])
		v := url.Values{"j.inst": {inst}, "j.repo": {repo}, "j.since": {first}, "j.run": {runID + "/" + attempt}}
		doc := b.dom(t, page(v))
		ready(t, doc)
		run := a.object("runs/"+inst+"/"+runID+"/"+attempt, nil)
		complete, _ := run["complete"].(bool)
		checkValue(t, doc, "run-complete", strconv.FormatBool(complete))
		summary, _ := run["run"].(map[string]any)
		for _, k := range []string{"total_jobs", "completed_jobs", "failed_jobs"} {
			want := field(summary, k)
			if summary != nil && want == nil {
				want = 0 // a counter the row lacks has not counted yet
			}
			checkValue(t, doc, "run-"+strings.ReplaceAll(k, "_", "-"), want)
		}
		jobs, _ := run["jobs"].([]any)
		var wantKeys []string
		for _, j := range jobs {
			wantKeys = append(wantKeys, fmt.Sprint(j.(map[string]any)["pk"]))
		}
		if got := attrList(doc.byTestID("run-job-row"), "data-key"); !slices.Equal(got, wantKeys) || len(got) == 0 {
			t.Errorf("run %s/%s jobs %v, want %v", runID, attempt, got, wantKeys)
		}
		repoPage := a.object("jobs", url.Values{"installation": {inst}, "repo": {repo}, "since": {first + "T00:00:00Z"}})
		st, _ := repoPage["stats"].(map[string]any)
		if st == nil {
			t.Fatalf("GET /api/jobs?repo=%s: no stats", repo)
		}
		checkValue(t, doc, "repo-success-rate", st["successRate"])
		checkValue(t, doc, "repo-avg-duration", st["avgDurationMs"])
		items, _ := repoPage["items"].([]any)
		var repoKeys []string
		for _, j := range items {
			repoKeys = append(repoKeys, fmt.Sprint(j.(map[string]any)["pk"]))
		}
		if got := attrList(doc.byTestID("job-row"), "data-key"); !slices.Equal(got, repoKeys) || len(got) == 0 {
			t.Errorf("repository %s jobs %v, want %v", repo, got, repoKeys)
		}
		checkValue(t, doc, "jobs-count", len(items))
	})

	// The first load: nothing in the state but the token. Every section
	// shows rows, on defaults the API's observed data gives.
	t.Run("first load", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		doc := b.dom(t, srv.URL+"/#token="+e2eToken)
		ready(t, doc)
		checkFirstLoad(t, doc, a)
		dir, keep := artifactDir(t)
		shot := filepath.Join(dir, "dashboard-first-load.png")
		b.screenshotSized(t, srv.URL+"/#token="+e2eToken, shot, "1400,3800") // every section of the data page
		keep(shot)
	})

	t.Run("screenshot", func(t *testing.T) {
		t.Parallel()
		dir, keep := artifactDir(t)
		shot := filepath.Join(dir, "dashboard.png")
		b.screenshot(t, page(main), shot)
		keep(shot)
	})
}

// busiestAgent picks the agent with the most SUCCEEDED executions in the
// range (among the first 200): one with several pages of 10.
func busiestAgent(t *testing.T, a *apiClient, from, to string) string {
	t.Helper()
	count := map[string]int{}
	for _, it := range a.list("executions", url.Values{"status": {"SUCCEEDED"}, "from": {from + "T00:00:00Z"}, "to": {to + "T23:59:59.999Z"}, "limit": {"200"}}).Items {
		count[fmt.Sprint(it["agentName"])]++
	}
	best := ""
	for name, n := range count {
		if best == "" || n > count[best] || (n == count[best] && name < best) {
			best = name
		}
	}
	if best == "" {
		t.Fatal("the workload has no agent executions")
	}
	return best
}

func checkExecutions(t *testing.T, doc *node, want apiPage, page string) {
	t.Helper()
	rows := doc.byTestID("exec-row")
	if got, exp := attrList(rows, "data-key"), itemList(want.Items, "executionArn"); !slices.Equal(got, exp) {
		t.Fatalf("page %s: execution rows %v, want %v", page, got, exp)
	}
	for i, r := range rows {
		it := want.Items[i]
		if r.attrs["data-status"] != fmt.Sprint(it["status"]) {
			t.Errorf("page %s row %d: status %q, want %v", page, i, r.attrs["data-status"], it["status"])
		}
		d := r.byTestID("exec-duration")
		if len(d) != 1 || !sameNumber(d[0].attrs["data-value"], it["durationSeconds"]) {
			t.Errorf("page %s row %d: duration %v, want %v", page, i, d, it["durationSeconds"])
		}
	}
	checkValue(t, doc, "exec-count", len(want.Items))
	if got := doc.one(t, "exec-page").textContent(); got != page {
		t.Errorf("exec-page = %q, want %s", got, page)
	}
	if hidden := doc.one(t, "exec-next").has("hidden"); hidden != (want.Next == "") {
		t.Errorf("page %s: Next hidden %v, API next %q", page, hidden, want.Next)
	}
}

// checkValue compares the data-value of the element with data-testid id
// with the API's value (a number, a JSON number, a bool or nil), and, for
// counts, its text too.
func checkValue(t *testing.T, doc *node, id string, want any) {
	t.Helper()
	el := doc.one(t, id)
	got := el.attrs["data-value"]
	switch w := want.(type) {
	case nil:
		if got != "" {
			t.Errorf("%s = %q, want no value", id, got)
		}
	case string:
		if got != w {
			t.Errorf("%s = %q, want %q", id, got, w)
		}
	case int:
		if got != strconv.Itoa(w) || el.textContent() != strconv.Itoa(w) {
			t.Errorf("%s = %q (text %q), want %d", id, got, el.textContent(), w)
		}
	default:
		if !sameNumber(got, want) {
			t.Errorf("%s = %q, want %v", id, got, want)
		}
	}
}

// sameNumber reports whether the page's number text equals the API's value.
func sameNumber(got string, want any) bool {
	if want == nil {
		return got == ""
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(fmt.Sprint(want), 64)
	return err1 == nil && err2 == nil && g == w
}

func number(t *testing.T, v any) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	if err != nil {
		t.Fatalf("not a number: %v", v)
	}
	return f
}

// field returns row[k], nil for a nil row.
func field(row map[string]any, k string) any {
	if row == nil {
		return nil
	}
	return row[k]
}

func attrList(nodes []*node, attr string) []string {
	out := []string{}
	for _, n := range nodes {
		out = append(out, n.attrs[attr])
	}
	return out
}

func itemList(items []map[string]any, k string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, fmt.Sprint(it[k]))
	}
	return out
}

// apiClient calls the JSON API as the page does, with the bearer token.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

type apiPage struct {
	Items []map[string]any `json:"items"`
	Next  string           `json:"next"`
}

func (a *apiClient) get(path string, q url.Values, out any) {
	a.t.Helper()
	u := a.base + "/api/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		a.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		a.t.Fatalf("GET %s: %d %s", u, res.StatusCode, buf.String())
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		a.t.Fatalf("GET %s: %v", u, err)
	}
}

// with returns the client reporting to t (a subtest's own).
func (a *apiClient) with(t *testing.T) *apiClient {
	return &apiClient{t: t, base: a.base, token: a.token}
}

func (a *apiClient) list(path string, q url.Values) apiPage {
	a.t.Helper()
	var p apiPage
	a.get(path, q, &p)
	return p
}

func (a *apiClient) object(path string, q url.Values) map[string]any {
	a.t.Helper()
	var m map[string]any
	a.get(path, q, &m)
	return m
}

// allItems follows the cursors to the end of a list.
func (a *apiClient) allItems(path string, q url.Values) []map[string]any {
	a.t.Helper()
	out := []map[string]any{}
	cursor := ""
	for range 100 {
		v := url.Values{}
		for k, x := range q {
			v[k] = x
		}
		if cursor != "" {
			v.Set("cursor", cursor)
		}
		p := a.list(path, v)
		out = append(out, p.Items...)
		if cursor = p.Next; cursor == "" {
			return out
		}
	}
	a.t.Fatalf("GET /api/%s: more than 100 pages", path)
	return nil
}

// messageStats returns the last 24 hours' stats by stage, without the
// window's ends (which move with the clock).
func (a *apiClient) messageStats() map[string]map[string]any {
	a.t.Helper()
	var resp struct {
		Stages []map[string]any `json:"stages"`
	}
	a.get("messages/stats", url.Values{"hours": {"24"}}, &resp)
	out := map[string]map[string]any{}
	for _, st := range resp.Stages {
		delete(st, "daily")
		out[fmt.Sprint(st["stage"])] = st
	}
	if len(out) != 3 {
		a.t.Fatalf("GET /api/messages/stats: %d stages, want dev, stage and prod", len(out))
	}
	return out
}

// checkFirstLoad checks the page loaded without any state: every agent's
// executions of the 7 days ending on the newest one's day, the metrics of
// the 7 days ending on the newest metrics row, the jobs of the installation
// the API's observed sample puts first (with its repositories offered), and
// the messages of the window from the oldest to the newest message; each
// with rows, each equal to what the API answers for those parameters.
func checkFirstLoad(t *testing.T, doc *node, a *apiClient) {
	t.Helper()
	var obs query.Observed
	a.get("vocabulary/data", nil, &obs)
	if len(obs.Installations) == 0 || obs.Executions.Newest == "" || obs.Messages.Newest == "" || obs.Metrics.Newest == "" {
		t.Fatalf("GET /api/vocabulary/data: %+v: the workload's data is missing", obs)
	}
	days := func(newest string) (string, string) {
		to, err := time.Parse("2006-01-02", newest[:10])
		if err != nil {
			t.Fatal(err)
		}
		return to.AddDate(0, 0, -6).Format("2006-01-02"), to.Format("2006-01-02")
	}

	from, to := days(obs.Executions.Newest)
	want := a.list("executions", url.Values{"from": {from + "T00:00:00Z"}, "to": {to + "T23:59:59.999Z"}, "limit": {"25"}})
	if len(want.Items) == 0 {
		t.Errorf("the API has no execution from %s to %s", from, to)
	}
	agents := map[string]bool{}
	for _, it := range want.Items {
		agents[fmt.Sprint(it["agentName"])] = true
	}
	t.Logf("executions: %d rows of %d agents from %s to %s", len(want.Items), len(agents), from, to)
	checkExecutions(t, doc, want, "1")

	from, to = days(obs.Metrics.Newest)
	if got := attrList(doc.byTestID("metrics-row"), "data-key"); len(got) != 7 || got[0] != from || got[6] != to {
		t.Errorf("metrics rows %v, want the 7 days %s to %s", got, from, to)
	}
	bars := doc.all(func(n *node) bool { return strings.HasPrefix(n.attrs["data-testid"], "chart-bar-") })
	if len(bars) == 0 {
		t.Error("no chart bar: the metrics of the data's last 7 days are not shown")
	}

	inst := obs.Installations[0]
	inst0 := strconv.FormatInt(inst.Installation, 10)
	q := url.Values{"installation": {inst0}, "status": {"in_progress"}}
	if inst.InProgressRuns == 0 {
		q = url.Values{"installation": {inst0}, "repo": {inst.Repositories[0]}}
	}
	jobs := a.list("jobs", q)
	if got, exp := attrList(doc.byTestID("job-row"), "data-key"), itemList(jobs.Items, "pk"); !slices.Equal(got, exp) || len(got) == 0 {
		t.Errorf("job rows %v, want %v (installation %s, %v)", got, exp, inst0, q)
	}
	options := doc.all(func(n *node) bool {
		return n.tag == "option" && n.parent != nil && n.parent.attrs["id"] == "repo-choices"
	})
	if len(options) != len(inst.Repositories) || len(options) == 0 {
		t.Errorf("%d repositories offered, want installation %s's %d", len(options), inst0, len(inst.Repositories))
	}

	oldest, err1 := time.Parse(time.RFC3339Nano, obs.Messages.Oldest)
	newest, err2 := time.Parse(time.RFC3339Nano, obs.Messages.Newest)
	if err1 != nil || err2 != nil {
		t.Fatalf("message span %+v", obs.Messages)
	}
	hours := min(720, max(24, int(math.Ceil(newest.Sub(oldest).Hours()))))
	var resp struct {
		Stages []map[string]any `json:"stages"`
	}
	a.get("messages/stats", url.Values{"hours": {strconv.Itoa(hours)}, "to": {obs.Messages.Newest}}, &resp)
	sum := 0.0
	for _, st := range resp.Stages {
		stage := fmt.Sprint(st["stage"])
		checkValue(t, doc, "msg-"+stage+"-total", st["total"])
		sum += number(t, st["total"])
	}
	if rows := doc.byTestID("messages-row"); len(rows) != len(resp.Stages) || sum == 0 {
		t.Errorf("%d message rows, %v messages in the %d hours up to %s", len(rows), sum, hours, obs.Messages.Newest)
	}
}

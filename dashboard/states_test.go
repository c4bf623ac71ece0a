package dashboard_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPageStates loads the page in headless Chromium against the fake API:
// the token form (no token, a refused token), the paging links, the stuck
// highlight, every agent's executions without a filter, the installation
// prompt (without the API's observed data) and the API's error messages
// shown in place.
func TestPageStates(t *testing.T) {
	t.Parallel() // its Chromium runs overlap the other browser test's waits
	b := newBrowser(t)

	// Each group has its own fake API (its own injected failures) and runs
	// in parallel with the others: a Chromium run mostly waits.
	t.Run("no token asks for one", func(t *testing.T) {
		t.Parallel()
		srv := newFakeAPI().server(t)
		doc := b.dom(t, srv.URL+"/")
		if st := doc.one(t, "app-state").attrs["data-state"]; st != "token" {
			t.Errorf("app-state = %q, want token", st)
		}
		if doc.byID("token-form").has("hidden") || !doc.byID("main").has("hidden") {
			t.Error("want the token form shown and the dashboard hidden")
		}
	})

	t.Run("refused token shows the API's message", func(t *testing.T) {
		t.Parallel()
		srv := newFakeAPI().server(t)
		doc := b.dom(t, srv.URL+"/#token=wrong&e.agent=sql-agent")
		errEl := doc.one(t, "token-error")
		if errEl.has("hidden") || !strings.Contains(errEl.textContent(), "HTTP 401: missing or wrong bearer token") {
			t.Errorf("token-error = %q (hidden %v), want the 401 message", errEl.textContent(), errEl.has("hidden"))
		}
		if doc.byID("token-form").has("hidden") {
			t.Error("token form hidden after a 401")
		}
	})

	t.Run("prompts and parameter errors", func(t *testing.T) {
		t.Parallel()
		f := newFakeAPI()
		srv := f.server(t)
		f.setFail("/api/messages/stats", fakeError{http.StatusBadRequest, "invalid_parameter", "must be at most 744 hours", "hours"})
		doc := b.dom(t, srv.URL+"/#token=fake-token&s.hours=10000")
		ready(t, doc)
		// Without agent or status: every agent's executions, newest first.
		checkExecRows(t, doc, "1", []string{"run-0", "run-1", "run-2", "run-3", "run-4", "run-5", "run-6"})
		// The fake API has no /api/vocabulary/data: no installation to
		// default to, so the section asks for one.
		if st := doc.one(t, "jobs-state"); st.attrs["data-state"] != "empty" || !strings.Contains(st.textContent(), "installation id") {
			t.Errorf("jobs-state = %q %q, want the prompt", st.attrs["data-state"], st.textContent())
		}
		if st := doc.one(t, "messages-state"); st.attrs["data-state"] != "error" || st.textContent() != "HTTP 400: must be at most 744 hours (hours)" {
			t.Errorf("messages-state = %q %q, want the API's error naming the parameter", st.attrs["data-state"], st.textContent())
		}
	})

	// Page 1 of sql-agent's executions, 3 per page; jobs of installation
	// 12345 with the stuck ones highlighted; messages per stage; then Next
	// twice, with the metrics series route failing.
	t.Run("paging", func(t *testing.T) {
		t.Parallel()
		f := newFakeAPI()
		srv := f.server(t)
		first := b.dom(t, srv.URL+"/#token=fake-token&e.agent=sql-agent&e.limit=3&j.inst=12345")
		ready(t, first)
		checkExecRows(t, first, "1", []string{"run-0", "run-1", "run-2"})
		if !first.one(t, "exec-prev").has("hidden") {
			t.Error("Previous shown on page 1")
		}
		next := first.one(t, "exec-next")
		if next.has("hidden") || !strings.Contains(next.attrs["href"], "e.cursor=o3") {
			t.Fatalf("Next link %v: want a link to cursor o3", next.attrs)
		}
		if st := first.one(t, "exec-state").attrs["data-state"]; st != "ready" {
			t.Errorf("exec-state = %q, want ready", st)
		}
		checkFakeJobs(t, first)
		checkFakeMessages(t, first)
		if st := first.one(t, "metrics-state"); st.attrs["data-state"] != "empty" {
			t.Errorf("metrics-state = %q %q, want empty", st.attrs["data-state"], st.textContent())
		}
		if bars := first.all(func(n *node) bool { return strings.HasPrefix(n.attrs["data-testid"], "chart-bar-") }); len(bars) != 0 {
			t.Errorf("%d chart bars without data", len(bars))
		}

		f.setFail("/api/metrics", fakeError{http.StatusServiceUnavailable, "unavailable", "DynamoDB is throttling", ""})
		second := b.dom(t, srv.URL+"/"+next.attrs["href"]+"&token=fake-token")
		ready(t, second)
		checkExecRows(t, second, "2", []string{"run-3", "run-4", "run-5"})
		prev := second.one(t, "exec-prev")
		if prev.has("hidden") || strings.Contains(prev.attrs["href"], "e.cursor") || strings.Contains(prev.attrs["href"], "e.prev") {
			t.Errorf("Previous link %v: want a link to the first page", prev.attrs)
		}
		if st := second.one(t, "metrics-state"); st.attrs["data-state"] != "error" || st.textContent() != "HTTP 503: DynamoDB is throttling" {
			t.Errorf("metrics-state = %q %q, want the API's error", st.attrs["data-state"], st.textContent())
		}

		third := b.dom(t, srv.URL+"/"+second.one(t, "exec-next").attrs["href"]+"&token=fake-token")
		checkExecRows(t, third, "3", []string{"run-6"})
		if !third.one(t, "exec-next").has("hidden") {
			t.Error("Next shown on the last page")
		}
		if third.one(t, "exec-prev").has("hidden") {
			t.Error("Previous hidden on page 3")
		}
	})
}

// TestPageUsesTheAPIsClock loads the page against the fake API, whose
// clock (X-Streamfold-Now) is years away from the browser's: on the first
// load, the default date ranges of executions and metrics are the last 7
// days on the API's clock, job ages are measured on it, and the header's
// "up to date" time is the API's.
func TestPageUsesTheAPIsClock(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	f := newFakeAPI()
	srv := f.server(t)
	doc := b.dom(t, srv.URL+"/#token=fake-token&e.agent=sql-agent&j.inst=12345")
	ready(t, doc)

	var days []string
	for d := -6; d <= 0; d++ {
		days = append(days, fakeNow.AddDate(0, 0, d).Format("2006-01-02"))
	}
	if got := attrList(doc.byTestID("metrics-row"), "data-key"); !slices.Equal(got, days) {
		t.Errorf("metrics rows %v, want the API's last 7 days %v", got, days)
	}
	f.mu.Lock()
	queries := slices.Clone(f.executionQueries)
	f.mu.Unlock()
	wantFrom, wantTo := days[0]+"T00:00:00Z", days[6]+"T23:59:59.999Z"
	if len(queries) == 0 || queries[0].Get("from") != wantFrom || queries[0].Get("to") != wantTo {
		t.Errorf("executions requested with %v, want from=%s to=%s on the first request", queries, wantFrom, wantTo)
	}
	ages := map[string]float64{"12345#100": 30 * 60, "12345#101": 9 * 3600, "12345#102": 30 * 3600}
	for _, r := range doc.byTestID("job-row") {
		age := r.byTestID("job-age")
		want, ok := ages[r.attrs["data-key"]]
		if len(age) != 1 || !ok {
			t.Errorf("job %s: %d ages", r.attrs["data-key"], len(age))
			continue
		}
		got, err := strconv.ParseFloat(age[0].attrs["data-value"], 64)
		if err != nil || got < want || got > want+120 {
			t.Errorf("job %s: age %q s, want %v s (created that long before the API's now) or up to 2 minutes more", r.attrs["data-key"], age[0].attrs["data-value"], want)
		}
	}
	if got, want := doc.one(t, "app-state").textContent(), "up to date "+fakeNow.Format("15:04"); !strings.HasPrefix(got, want) {
		t.Errorf("app-state %q, want %q… (the API's time)", got, want)
	}
}

// checkFakeJobs: the fake's two jobs older than 6 hours are highlighted.
func checkFakeJobs(t *testing.T, doc *node) {
	t.Helper()
	rows := doc.byTestID("job-row")
	if len(rows) != 3 {
		t.Fatalf("%d job rows, want 3", len(rows))
	}
	for _, r := range rows {
		want := r.attrs["data-key"] != "12345#100" // the 30-minute-old job is not stuck
		if got := r.attrs["data-stuck"] == "true" && strings.Contains(r.attrs["class"], "stuck"); got != want {
			t.Errorf("job %s: stuck highlight %v, want %v", r.attrs["data-key"], got, want)
		}
	}
	if got := doc.one(t, "jobs-stuck-count").textContent(); got != "2" {
		t.Errorf("jobs-stuck-count = %q, want 2", got)
	}
	if links := doc.byTestID("job-run-link"); len(links) != 3 || !strings.Contains(links[0].attrs["href"], "j.run=777%2F1") {
		t.Errorf("run links: %d, first %v", len(links), links)
	}
}

// checkFakeMessages: counts, totals and rates per stage as the fake sends.
func checkFakeMessages(t *testing.T, doc *node) {
	t.Helper()
	for stage, want := range map[string][3]string{"dev": {"1", "4", "75.0%"}, "stage": {"2", "5", "60.0%"}, "prod": {"3", "6", "50.0%"}} {
		got := [3]string{doc.one(t, "msg-"+stage+"-failed").textContent(), doc.one(t, "msg-"+stage+"-total").textContent(), doc.one(t, "msg-"+stage+"-rate").textContent()}
		if got != want {
			t.Errorf("%s: failed, total, rate = %q, want %q", stage, got, want)
		}
	}
}

// ready fails unless every section finished loading.
func ready(t *testing.T, doc *node) {
	t.Helper()
	if st := doc.one(t, "app-state"); st.attrs["data-state"] != "ready" {
		t.Fatalf("app-state = %q (%q): the page did not finish loading within the virtual time budget", st.attrs["data-state"], st.textContent())
	}
}

func checkExecRows(t *testing.T, doc *node, page string, names []string) {
	t.Helper()
	rows := doc.byTestID("exec-row")
	var got []string
	for _, r := range rows {
		got = append(got, strings.TrimPrefix(r.attrs["data-key"], "arn:aws:states:us-west-2:1:execution:sql-agent-prod:"))
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("page %s rows %v, want %v", page, got, names)
	}
	if p := doc.one(t, "exec-page").textContent(); p != page {
		t.Errorf("exec-page = %q, want %q", p, page)
	}
	if c := doc.one(t, "exec-count").textContent(); c != strconv.Itoa(len(names)) {
		t.Errorf("exec-count = %q, want %d", c, len(names))
	}
}

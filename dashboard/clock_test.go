package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/dashboard"
)

// clockPage runs clockScript; clockScript calls dom.js's clock functions
// and writes what they return into #out as JSON (a file of its own: the
// dumped DOM is parsed as XML, which an inline script's "<" would break).
const clockPage = `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><pre id="out">pending</pre>
<script type="module" src="/clock-test.js"></script></body></html>`

const clockScript = `import { clockOffset, now, observeServerTime, today } from "/static/dom.js";
const out = {};
out.midpoint = clockOffset("2031-03-04T20:00:00.000Z", 1000, 1200) === Date.parse("2031-03-04T20:00:00.000Z") - 1100;
out.missing = [clockOffset(null, 0, 0), clockOffset("", 0, 0), clockOffset("yesterday", 0, 0)];
out.before = Math.abs(now() - Date.now()) < 1000;
const t0 = Date.now();
observeServerTime("2031-03-04T23:00:00.000Z", t0, t0);
out.sinceServer = now() - Date.parse("2031-03-04T23:00:00.000Z");
out.days = [today(-6), today(), today(1)];
observeServerTime(null, Date.now(), Date.now());
out.kept = today();
document.getElementById("out").textContent = JSON.stringify(out);
`

// TestClockIsTheAPIs runs the page's clock (dom.js) in headless Chromium,
// without any API: the offset of a response's X-Streamfold-Now is taken at
// the request's midpoint; a missing or malformed header gives none; before
// any response now() is the browser's clock; after one, now() and today()
// are on the server's clock (years away from the browser's here), and a
// response without the header keeps the last offset.
func TestClockIsTheAPIs(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	mux := http.NewServeMux()
	mux.Handle("/", dashboard.Handler())
	mux.HandleFunc("/clock-test.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, clockPage)
	})
	mux.HandleFunc("/clock-test.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		io.WriteString(w, clockScript)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	doc := b.dom(t, srv.URL+"/clock-test.html")
	out := doc.byID("out")
	if out == nil {
		t.Fatal("no #out in the page")
	}
	var got struct {
		Midpoint    bool     `json:"midpoint"`
		Missing     []any    `json:"missing"`
		Before      bool     `json:"before"`
		SinceServer float64  `json:"sinceServer"`
		Days        []string `json:"days"`
		Kept        string   `json:"kept"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out.textContent())), &got); err != nil {
		t.Fatalf("the page's results %q: %v", out.textContent(), err)
	}
	if !got.Midpoint {
		t.Error("clockOffset: the offset is not the server's time minus the request's midpoint")
	}
	if !slices.Equal(got.Missing, []any{nil, nil, nil}) {
		t.Errorf("clockOffset of a missing, empty or malformed header = %v, want null each", got.Missing)
	}
	if !got.Before {
		t.Error("before any response, now() is not the browser's clock")
	}
	if got.SinceServer < 0 || got.SinceServer > float64(5*time.Second/time.Millisecond) {
		t.Errorf("now() after the server said 23:00:00 is %v ms past it, want 0 to 5 s", got.SinceServer)
	}
	if want := []string{"2031-02-26", "2031-03-04", "2031-03-05"}; !slices.Equal(got.Days, want) {
		t.Errorf("today(-6), today(), today(1) = %v, want %v (the server's days)", got.Days, want)
	}
	if got.Kept != "2031-03-04" {
		t.Errorf("today() after a response without the header = %q, want the last server day 2031-03-04", got.Kept)
	}
}

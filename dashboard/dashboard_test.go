package dashboard_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/dashboard"
)

func TestHandlerServesFiles(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	files := embedded(t)
	if !slices.Contains(files, "index.html") || !slices.Contains(files, "app.js") || !slices.Contains(files, "style.css") {
		t.Fatalf("embedded files %v: want index.html, app.js and style.css among them", files)
	}
	type want struct {
		path, contentType string
		status            int
	}
	cases := []want{
		{"/", "text/html; charset=utf-8", 200},
		{"/index.html", "text/html; charset=utf-8", 200},
		{"/static/index.html", "", 404},
		{"/static/", "", 404},
		{"/static/nope.js", "", 404},
		{"/static/../dashboard.go", "", 404},
		{"/favicon.ico", "", 404},
		{"/api/executions", "", 404},
		{"/index.htm", "", 404},
	}
	for _, f := range files {
		if f == "index.html" {
			continue
		}
		ct := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[path.Ext(f)]
		if ct == "" {
			t.Fatalf("embedded file %s has an unexpected type", f)
		}
		cases = append(cases, want{"/static/" + f, ct, 200})
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			res, err := http.Get(srv.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status {
				t.Fatalf("GET %s: status %d, want %d", c.path, res.StatusCode, c.status)
			}
			if c.status != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != c.contentType {
				t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.contentType)
			}
			if got := res.Header.Get("Content-Security-Policy"); got != dashboard.ContentSecurityPolicy {
				t.Errorf("GET %s: Content-Security-Policy %q", c.path, got)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", c.path, got)
			}
			name := strings.TrimPrefix(c.path, "/static/")
			if c.path == "/" || c.path == "/index.html" {
				name = "index.html"
			}
			want, err := fs.ReadFile(dashboard.Files(), name)
			if err != nil || string(body) != string(want) {
				t.Errorf("GET %s: body is not the embedded %s (%d bytes, want %d; %v)", c.path, name, len(body), len(want), err)
			}
		})
	}
}

func TestHandlerMethods(t *testing.T) {
	h := dashboard.Handler()
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodHead, "/", 200},
		{http.MethodPost, "/", 405},
		{http.MethodDelete, "/static/app.js", 405},
		{http.MethodPost, "/nope", 404},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, rec.Code, c.status)
		}
		if c.status == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q, want \"GET, HEAD\"", c.method, c.path, rec.Header().Get("Allow"))
		}
	}
}

var (
	// anyURL finds absolute and protocol-relative URLs.
	anyURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	// The only absolute URL allowed: the SVG namespace, an identifier that
	// is never fetched.
	allowedURL = "http://www.w3.org/2000/svg"
	// References from HTML (src, href), JS (import ... from "x", import("x"))
	// and CSS (url(x), @import).
	htmlRef   = regexp.MustCompile(`(?i)\b(?:src|href)="([^"#]+)"`)
	jsImport  = regexp.MustCompile(`(?m)^\s*import\s+(?:[^"']*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']`)
	cssRef    = regexp.MustCompile(`(?i)url\(|@import`)
	jsComment = regexp.MustCompile(`(?m)^\s*//.*$`)
)

// TestPageHasNoExternalURLs: the page must work offline, so nothing it
// loads may come from another origin; every module it imports and every
// file it references must be embedded.
func TestPageHasNoExternalURLs(t *testing.T) {
	files := embedded(t)
	for _, f := range files {
		b, err := fs.ReadFile(dashboard.Files(), f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range anyURL.FindAllString(text, -1) {
			if !strings.HasPrefix(allowedURL, m) {
				t.Errorf("%s: external URL %q (the page must work offline)", f, m)
			}
		}
		switch path.Ext(f) {
		case ".html":
			for _, m := range htmlRef.FindAllStringSubmatch(text, -1) {
				ref := m[1]
				if strings.HasPrefix(ref, "data:") {
					continue
				}
				name, ok := strings.CutPrefix(ref, "static/")
				if !ok || !slices.Contains(files, name) {
					t.Errorf("%s: reference %q is not an embedded file under static/", f, ref)
				}
			}
		case ".js":
			imports := jsImport.FindAllStringSubmatch(jsComment.ReplaceAllString(text, ""), -1)
			for _, m := range imports {
				ref := m[1] + m[2]
				name, ok := strings.CutPrefix(ref, "./")
				if !ok || !slices.Contains(files, name) {
					t.Errorf("%s: import %q is not a relative import of an embedded module", f, ref)
				}
			}
			if f == "app.js" && len(imports) < 4 {
				t.Errorf("app.js imports %d modules; the import scan is broken", len(imports))
			}
		case ".css":
			if cssRef.MatchString(text) {
				t.Errorf("%s: url() or @import: the style sheet must not load anything", f)
			}
		}
	}
}

// TestHiddenWins: the page shows and hides its parts with the hidden
// attribute; an author display rule (main is a grid, buttons are
// inline-blocks) would override the browser's own [hidden] rule.
func TestHiddenWins(t *testing.T) {
	css, err := fs.ReadFile(dashboard.Files(), "style.css")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\[hidden\]\s*\{\s*display:\s*none\s*!important;?\s*\}`).Match(css) {
		t.Error("style.css: want [hidden] { display: none !important; }")
	}
}

func TestIndexIsWellFormed(t *testing.T) {
	b, err := fs.ReadFile(dashboard.Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	root := parseHTML(t, string(b))
	seen := map[string]bool{}
	root.walk(func(n *node) {
		if id := n.attrs["id"]; id != "" {
			if seen[id] {
				t.Errorf("index.html: duplicate id %q", id)
			}
			seen[id] = true
		}
	})
	// The figures the end-to-end test reads exist in the static page.
	for _, id := range []string{"app-state", "exec-state", "exec-count", "exec-page", "exec-next", "exec-prev", "metrics-state", "metrics-chart",
		"jobs-state", "jobs-stuck-count", "jobs-count", "run-complete", "run-total-jobs", "messages-state",
		"running-step-functions", "running-durable-functions", "pending-step-functions", "pending-durable-functions"} {
		root.one(t, id)
	}
	if s := root.all(func(n *node) bool { return n.tag == "script" }); len(s) != 1 || s[0].attrs["type"] != "module" {
		t.Errorf("index.html: want exactly one <script type=module>, got %d", len(s))
	}
}

func embedded(t *testing.T) []string {
	t.Helper()
	var files []string
	err := fs.WalkDir(dashboard.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

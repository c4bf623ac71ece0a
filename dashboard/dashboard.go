package dashboard

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is sent with every response: scripts, styles,
// images and API requests from the page's own origin only, no plugins, no
// framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// contentTypes maps the extensions of the embedded files to their media
// types. It does not consult the system's mime tables, which differ between
// machines (".js" is application/javascript on some).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// Files returns the embedded files, rooted at the page's directory
// (index.html, app.js, ...).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil { // cannot happen: "static" is a valid, embedded directory
		panic(err)
	}
	return sub
}

// Handler returns the http.Handler of the page: "/" and "/index.html" serve
// index.html, "/static/NAME" the embedded file NAME. The handler expects the
// paths as they are at the root of the site; mount it at "/" (the api
// package routes "/api/" itself and everything else here).
func Handler() http.Handler {
	return &handler{files: Files(), modTime: time.Now()}
}

type handler struct {
	files   fs.FS
	modTime time.Time
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := h.fileFor(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", contentTypes[path.Ext(name)])
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	// The files change only with the binary: revalidate (by Last-Modified,
	// the process start) rather than cache blindly.
	hd.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, h.modTime, bytes.NewReader(body))
}

// fileFor maps a request path to an embedded file name.
func (h *handler) fileFor(p string) (string, bool) {
	switch p {
	case "/", "/index.html":
		return "index.html", true
	}
	name, ok := strings.CutPrefix(p, "/static/")
	if !ok || name == "" || name == "index.html" || !fs.ValidPath(name) {
		return "", false
	}
	if _, known := contentTypes[path.Ext(name)]; !known {
		return "", false
	}
	return name, true
}

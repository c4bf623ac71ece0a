// Package dashboard serves streamfold's dashboard page: one HTML page, plain
// ES modules and a style sheet, embedded in the binary (no build step, no
// external URL: the page works offline). The page reads everything through
// the HTTP JSON API under api/ (package api) and draws its chart as inline
// SVG.
//
// Handler serves the page at "/" (and "/index.html") and its files under
// "/static/"; it needs no authentication, since the page holds no data: it
// takes the API's bearer token from the URL fragment (#token=..., never sent
// to a server), keeps it in sessionStorage and removes it from the address
// bar, or asks for it in a form. Every other path is 404, every method but
// GET and HEAD 405. Responses carry a Content-Security-Policy that allows
// only same-origin scripts, styles and requests.
//
// The page's clock is the API's: every API response carries it
// (X-Streamfold-Now, api.NowHeader), and the page's "now" (default date
// ranges, job ages) is the browser's clock corrected by the last offset
// seen, the browser's own before the first response.
//
// The page's filter state (agent, status, dates, cursors, installation,
// run, ...) lives in the URL fragment, so a view can be bookmarked and the
// Next/Previous links are real links. Every figure that tests compare with
// the API carries a stable data-testid and its raw value in data-value; see
// docs/dashboard.md.
//
// Handler is safe for concurrent use; its files are immutable.
package dashboard

package api

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/streamfold/streamfold/query"
)

type server struct {
	cfg       Config
	q         *query.Client
	tokenHash [32]byte
}

// New returns the API handler.
func New(cfg Config) (http.Handler, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, q: cfg.Queries, tokenHash: sha256.Sum256([]byte(cfg.Token))}
	mux := http.NewServeMux()
	mux.Handle("/api/health", s.endpoint(false, nil, s.health))
	mux.Handle("/api/vocabulary", s.endpoint(true, nil, s.vocabulary))
	mux.Handle("/api/vocabulary/data", s.endpoint(true, nil, s.observed))
	s.routes(mux)
	s.operationRoutes(mux)
	// Anything else under /api/ is an unknown route (after the token check,
	// so that probing reveals nothing).
	mux.Handle("/api/", s.endpoint(true, nil, func(r *http.Request) (any, error) {
		return nil, &httpError{status: http.StatusNotFound, detail: ErrorDetail{Code: CodeNotFound, Message: "no such endpoint: " + r.URL.Path}}
	}))
	if cfg.Dashboard != nil {
		mux.Handle("/", cfg.Dashboard)
	} else {
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, ErrorDetail{Code: CodeNotFound, Message: "no dashboard is served here; the API is under /api/"})
		})
	}
	return s.logged(s.clocked(mux)), nil
}

// NowHeader is the response header that carries the API's clock
// (Config.Now) on every response, in NowFormat: the dashboard computes
// "now" (default date ranges, ages) on it instead of the browser's clock.
const NowHeader = "X-Streamfold-Now"

// NowFormat is NowHeader's format: RFC 3339 in UTC with milliseconds,
// e.g. 2026-11-26T09:30:00.000Z.
const NowFormat = "2006-01-02T15:04:05.000Z07:00"

// clocked stamps every response with the API's clock (NowHeader), errors
// and the dashboard's files included.
func (s *server) clocked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(NowHeader, s.cfg.Now().UTC().Format(NowFormat))
		h.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status a handler wrote, for the log line.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = cmp.Or(r.status, code)
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.status = cmp.Or(r.status, http.StatusOK)
	return r.ResponseWriter.Write(b)
}

func (s *server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		s.cfg.Logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "ms", time.Since(start).Milliseconds())
	})
}

// handlerFunc answers a request with a value to encode or an error.
type handlerFunc func(r *http.Request) (any, error)

// endpoint wraps a handler: token check, GET only, known parameters only,
// JSON encoding of the answer or of the error.
func (s *server) endpoint(auth bool, params []string, h handlerFunc) http.Handler {
	allowed := map[string]bool{}
	for _, p := range params {
		allowed[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth && !s.cfg.AllowUnauthenticated {
			if d, ok := s.authorize(r); !ok {
				w.Header().Set("WWW-Authenticate", d)
				writeError(w, http.StatusUnauthorized, ErrorDetail{Code: CodeUnauthorized, Message: "a valid bearer token is required: Authorization: Bearer <token>"})
				return
			}
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeError(w, http.StatusMethodNotAllowed, ErrorDetail{Code: CodeMethodNotAllowed, Message: "method " + r.Method + " not allowed; use GET"})
			return
		}
		for name, vs := range r.URL.Query() {
			if !allowed[name] {
				writeError(w, http.StatusBadRequest, ErrorDetail{Code: CodeInvalidParameter, Param: name, Message: name + ": is not a parameter of " + r.URL.Path})
				return
			}
			if len(vs) > 1 {
				writeError(w, http.StatusBadRequest, ErrorDetail{Code: CodeInvalidParameter, Param: name, Message: name + ": must be given once"})
				return
			}
		}
		v, err := h(r)
		if err != nil {
			status, d := classify(err)
			if status == http.StatusInternalServerError {
				s.cfg.Logger.Error("request failed", "path", r.URL.Path, "err", err)
			}
			writeError(w, status, d)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

// authorize checks the bearer token in constant time (over hashes, so the
// length does not leak either). On failure it returns the WWW-Authenticate
// challenge.
func (s *server) authorize(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return `Bearer realm="streamfold"`, false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(sum[:], s.tokenHash[:]) != 1 {
		return `Bearer realm="streamfold", error="invalid_token"`, false
	}
	return "", true
}

func (s *server) health(*http.Request) (any, error) {
	return map[string]string{"status": "ok"}, nil
}

package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/streamfold/streamfold/internal/opsview"
)

// Operations answers the operations routes; *opsview.View satisfies it.
// Both methods compute on the clock they are given (Config.Now).
type Operations interface {
	Overview(ctx context.Context, now time.Time) (opsview.Overview, error)
	DeadLetters(ctx context.Context, now time.Time, f opsview.Filter) (opsview.DeadLetterList, error)
}

// operationRoutes registers GET /api/operations (the consumers' progress,
// the last reconcile result, the recent gaps) and GET
// /api/operations/deadletters (?consumer=&since=&status=&limit=).
func (s *server) operationRoutes(mux *http.ServeMux) {
	mux.Handle("/api/operations", s.endpoint(true, nil, func(r *http.Request) (any, error) {
		if s.cfg.Operations == nil {
			return nil, errNoOperations
		}
		return s.cfg.Operations.Overview(r.Context(), s.cfg.Now())
	}))
	mux.Handle("/api/operations/deadletters", s.endpoint(true, []string{"consumer", "since", "status", "limit"}, func(r *http.Request) (any, error) {
		if s.cfg.Operations == nil {
			return nil, errNoOperations
		}
		f, err := deadLetterFilter(r)
		if err != nil {
			return nil, err
		}
		l, err := s.cfg.Operations.DeadLetters(r.Context(), s.cfg.Now(), f)
		var fe *opsview.FilterError
		if errors.As(err, &fe) {
			return nil, paramError(fe.Field, "%s", fe.Reason)
		}
		return l, err
	}))
}

var errNoOperations = &httpError{status: http.StatusNotFound, detail: ErrorDetail{Code: CodeNotFound,
	Message: "operations are not served here (api.Config.Operations is not set)"}}

// deadLetterFilter reads the dead-letter list's parameters.
func deadLetterFilter(r *http.Request) (opsview.Filter, error) {
	q := r.URL.Query()
	f := opsview.Filter{Consumer: q.Get("consumer"), Status: q.Get("status")}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, paramError("since", "must be RFC3339, e.g. 2026-01-05T00:00:00Z, got %q", v)
		}
		f.Since = t
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return f, paramError("limit", "must be a positive integer, got %q", v)
		}
		f.Limit = n
	}
	return f, nil
}

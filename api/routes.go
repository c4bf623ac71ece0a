package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/streamfold/streamfold/query"
)

// routes registers every access pattern of query.Patterns at its route,
// allowing the pattern's query parameters (its path parameters are not
// query parameters) and, for a list, limit and cursor.
func (s *server) routes(mux *http.ServeMux) {
	for _, p := range query.Patterns() {
		var allowed []string
		for _, pr := range p.Params {
			if !strings.Contains(p.Route, "{"+pr.Name+"}") {
				allowed = append(allowed, pr.Name)
			}
		}
		if p.Paged {
			allowed = append(allowed, "limit", "cursor")
		}
		mux.Handle(p.Route, s.endpoint(true, allowed, func(r *http.Request) (any, error) {
			return p.Run(r.Context(), s.q, &input{s: s, r: r, q: r.URL.Query()})
		}))
	}
}

// input is a request as a pattern's query.Input: path parameters, then
// query parameters; an empty value is not given.
type input struct {
	s *server
	r *http.Request
	q url.Values // the request's query, parsed once
}

func (in *input) Value(name string) (string, bool) {
	v := in.r.PathValue(name)
	if v == "" {
		v = in.q.Get(name)
	}
	return v, v != ""
}

func (in *input) Spell(name string) string { return name }

func (in *input) Now() time.Time { return in.s.cfg.Now() }

// Page reads ?limit= (at most Config.MaxPageSize) and ?cursor=.
func (in *input) Page() (query.PageRequest, error) {
	q := in.q
	p := query.PageRequest{Cursor: q.Get("cursor")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, paramError("limit", "must be a positive integer, got %q", v)
		}
		if n > in.s.cfg.MaxPageSize {
			return p, paramError("limit", "must be at most %d", in.s.cfg.MaxPageSize)
		}
		p.Limit = n
	}
	return p, nil
}

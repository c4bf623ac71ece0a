package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/streamfold/streamfold/query"
)

// Error codes of the error body.
const (
	CodeBadCursor        = "bad_cursor"
	CodeInvalidParameter = "invalid_parameter"
	CodeNotFound         = "not_found"
	CodeUnauthorized     = "unauthorized"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInternal         = "internal"
)

// ErrorBody is what every error answers: {"error":{...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Param names the query parameter at fault, when there is one.
	Param string `json:"param,omitempty"`
}

// httpError is an error with its status and body.
type httpError struct {
	status int
	detail ErrorDetail
}

func (e *httpError) Error() string { return e.detail.Message }

func paramError(param, format string, args ...any) error {
	return &query.ParamError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// classify maps an error to its status and body; internal errors keep
// their detail out of the body.
func classify(err error) (int, ErrorDetail) {
	var he *httpError
	var pe *query.ParamError
	switch {
	case errors.As(err, &he):
		return he.status, he.detail
	case errors.Is(err, query.ErrBadCursor):
		return http.StatusBadRequest, ErrorDetail{Code: CodeBadCursor, Param: "cursor",
			Message: "cursor: not valid for this query (modified, truncated, signed with another key or issued for other parameters); start again without it"}
	case errors.As(err, &pe):
		return http.StatusBadRequest, ErrorDetail{Code: CodeInvalidParameter, Param: pe.Param, Message: pe.Param + ": " + pe.Reason}
	case errors.Is(err, query.ErrNotFound):
		return http.StatusNotFound, ErrorDetail{Code: CodeNotFound, Message: strings.TrimPrefix(err.Error(), "query: ")}
	}
	return http.StatusInternalServerError, ErrorDetail{Code: CodeInternal, Message: "internal error; the server log has the details"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, d ErrorDetail) {
	writeJSON(w, status, ErrorBody{Error: d})
}

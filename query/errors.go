package query

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrNotFound: the item (an execution, a job, a message, a metrics row,
	// a run) does not exist.
	ErrNotFound = errors.New("query: not found")
	// ErrInvalid: a parameter is missing or malformed. The error is a
	// *ParamError naming the parameter.
	ErrInvalid = errors.New("query: invalid parameter")
	// ErrBadCursor: a cursor was modified, truncated, signed with another
	// key or issued for another query. It was not used.
	ErrBadCursor = errors.New("query: bad cursor")
	// ErrNoJobFold: a job timeline was asked of a Client whose
	// Config.JobFold is nil.
	ErrNoJobFold = errors.New("query: no job fold configured (Config.JobFold)")
)

// ParamError says which parameter is wrong and why. It wraps ErrInvalid.
type ParamError struct {
	// Param is the parameter's name as the HTTP API and the CLI spell it
	// (e.g. "from", "workflowType", "limit").
	Param string
	// Reason says what is wrong, e.g. "must be RFC3339".
	Reason string
}

func (e *ParamError) Error() string { return "query: " + e.Param + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ParamError) Unwrap() error { return ErrInvalid }

func invalid(param, format string, args ...any) error {
	return &ParamError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// cursorError wraps ErrBadCursor with the reason, for logs; the reason is
// never needed to match it.
func cursorError(reason string) error { return fmt.Errorf("%w: %s", ErrBadCursor, reason) }

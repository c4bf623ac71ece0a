package query

import (
	"strconv"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// TimeRange bounds a date-sorted list; both ends are inclusive and a zero
// end is open.
type TimeRange struct {
	From, To time.Time
}

func (r TimeRange) validate() error {
	if !r.From.IsZero() && !r.To.IsZero() && r.From.After(r.To) {
		return invalid("from", "must not be after to")
	}
	return nil
}

// on adds the range to a key condition on a date sort key stored as
// schema.FormatItemTime text.
func (r TimeRange) on(k *cond, attr string) {
	switch {
	case !r.From.IsZero() && !r.To.IsZero():
		k.between(attr, avS(schema.FormatItemTime(r.From)), avS(schema.FormatItemTime(r.To)))
	case !r.From.IsZero():
		k.op(attr, ">=", avS(schema.FormatItemTime(r.From)))
	case !r.To.IsZero():
		k.op(attr, "<=", avS(schema.FormatItemTime(r.To)))
	}
}

func (r TimeRange) params() []string {
	f := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return schema.FormatItemTime(t)
	}
	return []string{"from=" + f(r.From), "to=" + f(r.To)}
}

// Workflow types of seed 001 (schema.WorkflowStepFunctions and
// schema.WorkflowDurableFunctions).
const (
	StepFunctions    = schema.WorkflowStepFunctions
	DurableFunctions = schema.WorkflowDurableFunctions
)

// WorkflowTypes lists the workflow types in the order multi-type lists
// return them.
var WorkflowTypes = []string{StepFunctions, DurableFunctions}

// NormalizeWorkflowType accepts "step-functions" and "durable-functions"
// and their short forms "sf" and "ldf"; "" stays "".
func NormalizeWorkflowType(param, v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return "", nil
	case StepFunctions, "sf":
		return StepFunctions, nil
	case DurableFunctions, "ldf":
		return DurableFunctions, nil
	}
	return "", invalid(param, "must be step-functions or durable-functions (or sf, ldf), got %q", v)
}

// ParseDate checks a YYYY-MM-DD date.
func ParseDate(param, v string) (string, error) {
	if v == "" {
		return "", invalid(param, "is required (YYYY-MM-DD)")
	}
	if _, err := time.Parse("2006-01-02", v); err != nil {
		return "", invalid(param, "must be a date YYYY-MM-DD, got %q", v)
	}
	return v, nil
}

// ParseTime parses an RFC 3339 time parameter; "" is the zero time.
func ParseTime(param, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, invalid(param, "must be RFC3339, e.g. 2026-01-05T00:00:00Z, got %q", v)
	}
	return t.UTC(), nil
}

// ParseInt parses a non-negative integer parameter.
func ParseInt(param, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, invalid(param, "must be a non-negative integer, got %q", v)
	}
	return n, nil
}

func oneOf(param, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid(param, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

func required(param, v string) error {
	switch {
	case v == "":
		return invalid(param, "is required")
	case len(v) > 2048:
		return invalid(param, "must be at most 2048 characters")
	}
	return nil
}

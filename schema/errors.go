package schema

import (
	"errors"
	"strings"
)

// ErrUnknownType is wrapped by a FieldError on "type" when an event's type is not
// one streamfold knows. Match it with errors.Is.
var ErrUnknownType = errors.New("schema: unknown event type")

// ErrMalformedItem is wrapped by errors returned when a DynamoDB item (or stream
// image) does not hold a well-formed event envelope.
var ErrMalformedItem = errors.New("schema: malformed event item")

// FieldError says which field of an event is wrong and which rule it breaks.
// Field is a dotted JSON path from the envelope, e.g. "data.year" or
// "data.workflow_job.id"; Rule is a short human sentence, e.g.
// "must be between 1900 and 2100".
type FieldError struct {
	Field string
	Rule  string
	// Err optionally carries a sentinel (such as ErrUnknownType) for errors.Is.
	Err error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Rule }

// Unwrap returns the sentinel the error carries, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError lists every rule an event breaks. It is permanent: retrying
// the same input fails the same way.
type ValidationError struct {
	Errors []*FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		parts[i] = fe.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap exposes the individual field errors to errors.Is and errors.As.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		out[i] = fe
	}
	return out
}

// Permanent reports that a validation failure is never worth retrying.
func (e *ValidationError) Permanent() bool { return true }

// checker accumulates field errors under a path prefix.
type checker struct {
	prefix string
	errs   []*FieldError
}

func (c *checker) fail(field, rule string) {
	c.errs = append(c.errs, &FieldError{Field: c.path(field), Rule: rule})
}

func (c *checker) path(field string) string {
	if c.prefix == "" {
		return field
	}
	if field == "" {
		return c.prefix
	}
	return c.prefix + "." + field
}

func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &ValidationError{Errors: c.errs}
}

func (c *checker) required(field, v string) bool {
	if strings.TrimSpace(v) == "" {
		c.fail(field, "is required")
		return false
	}
	return true
}

func (c *checker) maxLen(field, v string, n int) {
	if len([]rune(v)) > n {
		c.fail(field, "must be at most "+itoa(n)+" characters")
	}
}

func (c *checker) oneOf(field, v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	if v == "" {
		c.fail(field, "is required (one of "+strings.Join(allowed, ", ")+")")
	} else {
		c.fail(field, "must be one of "+strings.Join(allowed, ", ")+`, got "`+v+`"`)
	}
	return false
}

package ingest

import "fmt"

// WriteError says which event could not be written and why. It is transient
// (the caller may retry the same event; the write is idempotent) unless the
// cause says otherwise.
type WriteError struct {
	Subject, ID string
	Attempts    int
	Err         error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("ingest: append %s/%s: %v", e.Subject, e.ID, e.Err)
}

// Unwrap returns the cause.
func (e *WriteError) Unwrap() error { return e.Err }

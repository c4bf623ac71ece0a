package ingest

import (
	"errors"
	"fmt"
)

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

// RefusedError is the error of an event DynamoDB refused to store as
// invalid (a ValidationException). Append reports the event as Rejected:
// the same write can never succeed, so it is a 400, never a 503.
type RefusedError struct {
	Subject, ID string
	Err         error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("ingest: event %s/%s refused by DynamoDB: %v", e.Subject, e.ID, e.Err)
}

// Unwrap returns DynamoDB's error.
func (e *RefusedError) Unwrap() error { return e.Err }

// Permanent reports that the same event is never worth retrying.
func (e *RefusedError) Permanent() bool { return true }

// ErrTooLarge is matched (errors.Is) by the error of an event that can never
// be stored: its event-table item, with data compressed when that pays (see
// schema.ItemEncoded), is larger than DynamoDB's item limit,
// schema.MaxItemBytes (400 KB). Append reports such an event as Rejected
// with a *TooLargeError and never sends it to DynamoDB; retrying it cannot
// succeed. The webhook handler answers 413, `streamfold emit` rejects the
// line (exit status 1).
var ErrTooLarge = errors.New("ingest: event too large to store")

// TooLargeError is the error of an event whose item exceeds Limit.
type TooLargeError struct {
	Subject, ID string
	// ItemBytes is the size of the item as it would be written
	// (schema.ItemSize), DataBytes the size of the payload's JSON text.
	ItemBytes, DataBytes int
	// Compressed says whether ItemBytes holds data compressed; when false
	// the data was kept as text (compressing did not make it smaller, or
	// the encoding is schema.DataPlain).
	Compressed bool
	// Limit is schema.MaxItemBytes.
	Limit int
}

func (e *TooLargeError) Error() string {
	how := "as text"
	if e.Compressed {
		how = "compressed"
	}
	return fmt.Sprintf("ingest: event %s/%s is too large to store: its item would be %d bytes (data %d bytes, stored %s) and DynamoDB's item limit is %d bytes (400 KB)",
		e.Subject, e.ID, e.ItemBytes, e.DataBytes, how, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Permanent reports that the same event is never worth retrying.
func (e *TooLargeError) Permanent() bool { return true }

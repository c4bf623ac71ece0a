package ingest

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamfold/streamfold/schema"
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

// ErrConflict is matched (errors.Is) by the error of an event whose
// (subject, id) is already in the event table with different content
// (schema.ContentHash): a conflict, not a duplicate. Append reports it as
// Conflict with a *ConflictError and writes nothing: the stored event stays,
// and both versions are kept as a dead letter (consumer
// DeadLetterConsumer, reason ReasonConflict) for a person to decide.
// Retrying the same event cannot succeed. POST /events, POST /eventbridge
// and the webhook answer 409; `streamfold emit` counts it under
// "conflicts" and exits 4.
var ErrConflict = errors.New("ingest: event id already stored with different content")

// ConflictError is the error of a conflicting event.
type ConflictError struct {
	Subject, ID string
	// StoredHash and NewHash are the content hashes (schema.ContentHash)
	// of the stored event and of the one refused.
	StoredHash, NewHash string
	// Stored and New are the two versions: the stored one as the table
	// holds it (RecordedAt set), the new one as it would have been
	// written.
	Stored, New schema.Event
	// Legacy says that the stored item has no schema.AttrContentHash (it
	// was appended before content hashes existed) and StoredHash was
	// computed from it.
	Legacy bool
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("ingest: event %s/%s conflicts with the stored event of the same subject and id: its content hash is %s, the stored one's %s; the stored event is kept and this one was not written",
		e.Subject, e.ID, e.NewHash, e.StoredHash)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Permanent reports that the same event is never worth retrying.
func (e *ConflictError) Permanent() bool { return true }

// ErrTimeAhead is matched (errors.Is) by the error of an event whose time is
// more than AppenderConfig.MaxFutureSkew ahead of its recordedat (the time
// the Appender writes it). Append reports it as Rejected with a
// *TimeAheadError, whose Unwrap gives the *schema.ValidationError naming
// the field "time", and never writes it.
var ErrTimeAhead = errors.New("ingest: event time too far ahead of recordedat")

// TimeAheadError is the error of an event dated too far in the future.
type TimeAheadError struct {
	Subject, ID string
	Time        time.Time // the event's time
	RecordedAt  time.Time // when it was to be written
	Limit       time.Duration
	err         *schema.ValidationError
}

func newTimeAheadError(e schema.Event, recordedAt time.Time, limit time.Duration) *TimeAheadError {
	rule := fmt.Sprintf("is %s ahead of recordedat %s; at most %s ahead is accepted (max future skew)",
		e.Time.Sub(recordedAt).Round(time.Second), recordedAt.UTC().Format(time.RFC3339), limit)
	return &TimeAheadError{Subject: e.Subject, ID: e.ID, Time: e.Time, RecordedAt: recordedAt, Limit: limit,
		err: &schema.ValidationError{Errors: []*schema.FieldError{{Field: "time", Rule: rule}}}}
}

func (e *TimeAheadError) Error() string { return e.err.Error() }

// Unwrap returns the *schema.ValidationError naming "time".
func (e *TimeAheadError) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrTimeAhead) true.
func (e *TimeAheadError) Is(target error) bool { return target == ErrTimeAhead }

// Permanent reports that the same event is never worth retrying.
func (e *TimeAheadError) Permanent() bool { return true }

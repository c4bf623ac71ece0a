package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
)

// DeadLetterConsumer is the dead-letter consumer name (the dead-letters
// table's partition key) of the EventBridge events that the ingest function
// can never append. `streamfold deadletter list|replay --consumer ingest`
// reads them.
const DeadLetterConsumer = "ingest"

// Dead-letter reasons of the ingest consumer (DeadLetterReason).
const (
	// ReasonMalformed: the invocation payload does not decode as an
	// EventBridge event (such as a time that is not RFC 3339).
	ReasonMalformed = "malformed"
	// ReasonNotStepFunctions: an EventBridge event of another source or
	// detail-type (ErrNotStepFunctionsEvent): the rule sends the wrong events.
	ReasonNotStepFunctions = "not-step-functions"
	// ReasonStateMachineNotFound: the state machine was deleted before its
	// tags could be read (ErrStateMachineNotFound).
	ReasonStateMachineNotFound = "state-machine-not-found"
	// ReasonTooLarge: the event's item is above DynamoDB's 400 KB even
	// compressed (ErrTooLarge).
	ReasonTooLarge = "too-large"
	// ReasonInvalid: an agent's event that fails validation
	// (*schema.ValidationError), such as a status this version does not
	// know.
	ReasonInvalid = "invalid"
	// ReasonConflict: an event whose (subject, id) is already stored with
	// different content (ErrConflict). Written by the Appender on every
	// route, with both versions (ConflictDeadLetter); replay leaves it
	// quarantined: a person decides which version is right.
	ReasonConflict = "conflict"
	// ReasonTimeAhead: an event dated more than the Appender's
	// MaxFutureSkew ahead of its recordedat (ErrTimeAhead).
	ReasonTimeAhead = "time-ahead"
)

// DeadLetterReason names why a permanent error of StepFunctionsAdapter.Handle
// can never succeed, as the dead letter's reason.
func DeadLetterReason(err error) string {
	switch {
	case errors.Is(err, ErrNotStepFunctionsEvent):
		return ReasonNotStepFunctions
	case errors.Is(err, ErrStateMachineNotFound):
		return ReasonStateMachineNotFound
	case errors.Is(err, ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, ErrConflict):
		return ReasonConflict
	case errors.Is(err, ErrTimeAhead):
		return ReasonTimeAhead
	}
	return ReasonInvalid
}

// StepFunctionsDeadLetter is what the ingest function keeps of an
// EventBridge event that it can never append, as the JSON Record of a
// dead letter of consumer DeadLetterConsumer: the event exactly as it was
// delivered, and the state machine's tags as they were found (so that a
// replay decides as the function did, even where the state machine's tags
// cannot be read).
type StepFunctionsDeadLetter struct {
	// Event is the invocation payload, byte for byte.
	Event json.RawMessage `json:"event"`
	// Tags are the state machine's tags as the function found them; absent
	// when the lookup did not run (the event failed before it) or failed.
	Tags map[string]string `json:"stateMachineTags,omitempty"`
}

// Record renders the dead letter as the JSON Record of a dead-letter entry,
// with the event byte for byte (json.Marshal would compact it).
func (d StepFunctionsDeadLetter) Record() (string, error) {
	ev := bytes.TrimSpace(d.Event)
	if !json.Valid(ev) {
		return "", errors.New("ingest: dead letter record: event: is not JSON")
	}
	var b strings.Builder
	b.WriteString(`{"event":`)
	b.Write(ev)
	if d.Tags != nil {
		tags, err := marshalNoEscape(d.Tags)
		if err != nil {
			return "", err
		}
		b.WriteString(`,"stateMachineTags":`)
		b.Write(tags)
	}
	b.WriteString("}")
	return b.String(), nil
}

// ParseStepFunctionsDeadLetter decodes the Record of an ingest dead letter.
func ParseStepFunctionsDeadLetter(record string) (StepFunctionsDeadLetter, error) {
	var d StepFunctionsDeadLetter
	if err := json.Unmarshal([]byte(record), &d); err != nil {
		return d, fmt.Errorf("ingest: dead letter record: %s", jsonText(err))
	}
	if len(d.Event) == 0 {
		return d, errors.New("ingest: dead letter record: event: is required")
	}
	return d, nil
}

// DeadLetterPosition is the sort key of an ingest dead letter: the event's
// time (UTC, to the second) and id, so that the entries list in event
// order and a redelivery of the same event replaces its entry. An event
// without an id is keyed by a hash of its bytes.
func DeadLetterPosition(ev EventBridgeEvent, raw []byte) string {
	id := ev.ID
	if id == "" {
		sum := sha256.Sum256(raw)
		id = "sha256:" + hex.EncodeToString(sum[:])[:40]
	}
	return ev.Time.UTC().Format(time.RFC3339) + "#" + id
}

// ConflictDeadLetter is the JSON Record of a conflict's dead letter
// (consumer DeadLetterConsumer, reason ReasonConflict): both versions of
// the event, as envelopes, with their content hashes (schema.ContentHash).
// Stored is the event as the table holds it (its recordedat set), New the
// one refused (its recordedat the time it was refused). When both would
// make the dead letter larger than MaxConflictRecordBytes, the data of
// Stored (which stays in the event table) is left out, then that of New:
// StoredDataOmitted and NewDataOmitted say so.
type ConflictDeadLetter struct {
	Stored            schema.Event `json:"stored"`
	StoredContentHash string       `json:"storedContentHash"`
	StoredDataOmitted bool         `json:"storedDataOmitted,omitempty"`
	// StoredLegacy: the stored item had no content hash (appended before
	// hashes existed); StoredContentHash was computed from it.
	StoredLegacy   bool         `json:"storedLegacy,omitempty"`
	New            schema.Event `json:"new"`
	NewContentHash string       `json:"newContentHash"`
	NewDataOmitted bool         `json:"newDataOmitted,omitempty"`
}

// MaxConflictRecordBytes bounds the Record of a conflict's dead letter, so
// that its item stays under DynamoDB's 400 KB.
const MaxConflictRecordBytes = 300 << 10

// ConflictPosition is the sort key of a conflict's dead letter: the
// event's time (UTC, to the second), its id and the refused version's
// content hash, so that the entries list in event order beside the other
// ingest dead letters, each conflicting version keeps one entry, and a
// producer retrying the same version replaces it.
func ConflictPosition(c *ConflictError) string {
	return c.New.Time.UTC().Format(time.RFC3339) + "#" + c.ID + "#" + c.NewHash
}

// ConflictLetter builds the dead letter of a conflict, quarantined at now.
func ConflictLetter(c *ConflictError, now time.Time) (deadletter.Letter, error) {
	d := ConflictDeadLetter{Stored: c.Stored, StoredContentHash: c.StoredHash, StoredLegacy: c.Legacy, New: c.New, NewContentHash: c.NewHash}
	if d.Stored.Data == nil {
		d.Stored.Data = json.RawMessage("null")
	}
	rec, err := marshalNoEscape(d)
	if err == nil && len(rec) > MaxConflictRecordBytes {
		d.Stored.Data, d.StoredDataOmitted = json.RawMessage("null"), true
		rec, err = marshalNoEscape(d)
	}
	if err == nil && len(rec) > MaxConflictRecordBytes {
		d.New.Data, d.NewDataOmitted = json.RawMessage("null"), true
		rec, err = marshalNoEscape(d)
	}
	if err != nil {
		return deadletter.Letter{}, fmt.Errorf("ingest: conflict dead letter of %s/%s: %w", c.Subject, c.ID, err)
	}
	return deadletter.Letter{
		Consumer:      DeadLetterConsumer,
		Position:      ConflictPosition(c),
		EventID:       c.ID,
		EventName:     c.New.Type,
		Reason:        ReasonConflict,
		Error:         c.Error(),
		Record:        string(rec),
		QuarantinedAt: now.UTC(),
		Status:        deadletter.StatusQuarantined,
	}, nil
}

// ParseConflictDeadLetter decodes the Record of a conflict's dead letter.
func ParseConflictDeadLetter(record string) (ConflictDeadLetter, error) {
	var d ConflictDeadLetter
	if err := json.Unmarshal([]byte(record), &d); err != nil {
		return d, fmt.Errorf("ingest: conflict dead letter record: %s", jsonText(err))
	}
	return d, nil
}

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

package deadletter

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// Reasons of the stream consumers' dead letters (Letter.Reason).
const (
	// ReasonPoison: the record can never be handled (it wraps ErrPoison).
	ReasonPoison = "poison"
	// ReasonRetriesExhausted: the record still failed after a runner's
	// retries.
	ReasonRetriesExhausted = "retries-exhausted"
)

// Statuses of a dead letter (Letter.Status).
const (
	StatusQuarantined = "quarantined"
	StatusReplayed    = "replayed"
)

// Letter is a record a consumer could not process, kept with everything
// needed to understand and replay it.
type Letter struct {
	Consumer       string    `json:"consumer"`
	Position       string    `json:"position"` // sortable: zero-padded sequence number + "#" + event id
	StreamARN      string    `json:"stream_arn"`
	SequenceNumber string    `json:"sequence_number"`
	EventID        string    `json:"event_id"`
	EventName      string    `json:"event_name"`
	Reason         string    `json:"reason"` // poison | retries-exhausted
	Error          string    `json:"error"`
	Record         string    `json:"record"` // the aws-lambda-go record as JSON
	QuarantinedAt  time.Time `json:"quarantined_at"`
	Status         string    `json:"status"` // quarantined | replayed
}

// NewLetter builds the Letter of a stream record.
func NewLetter(consumer, reason string, rec events.DynamoDBEventRecord, cause error, now time.Time) (Letter, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return Letter{}, fmt.Errorf("deadletter: encode record: %w", err)
	}
	seq := rec.Change.SequenceNumber
	return Letter{
		Consumer: consumer, Position: Position(seq, rec.EventID),
		StreamARN: rec.EventSourceArn, SequenceNumber: seq, EventID: rec.EventID, EventName: rec.EventName,
		Reason: reason, Error: cause.Error(), Record: string(raw), QuarantinedAt: now.UTC(), Status: StatusQuarantined,
	}, nil
}

// Position renders a sortable dead-letter position from a sequence number.
func Position(seq, eventID string) string {
	return streamimage.PadSeq(seq) + "#" + eventID
}

// LambdaRecord decodes the stored record.
func (d Letter) LambdaRecord() (events.DynamoDBEventRecord, error) {
	var rec events.DynamoDBEventRecord
	err := json.Unmarshal([]byte(d.Record), &rec)
	return rec, err
}

package archiver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ErrorRecord is a poison stream record kept under errors/: a record that
// could never be archived (an undecodable image, an invalid event).
type ErrorRecord struct {
	Key            string          `json:"-"`
	SequenceNumber string          `json:"sequence_number"`
	EventID        string          `json:"event_id"` // the stream record's eventID
	EventName      string          `json:"event_name"`
	StreamARN      string          `json:"stream_arn,omitempty"`
	Reason         string          `json:"reason"`
	SeenAt         time.Time       `json:"seen_at"`
	Record         json.RawMessage `json:"record"` // the aws-lambda-go record as JSON
}

// putError stores a poison record; storing the same one again overwrites it.
func (a *Archive) putError(ctx context.Context, e ErrorRecord) error {
	body, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return wrapf(err, "encode error record %s", e.SequenceNumber)
	}
	err = a.put(ctx, a.l.errorKey(EventDate(e.SeenAt), e.SequenceNumber, e.EventID), body, "application/json")
	return err
}

// Errors returns every poison record, oldest date first.
func (a *Archive) Errors(ctx context.Context) ([]ErrorRecord, error) {
	objs, err := a.list(ctx, a.l.errorsDir())
	if err != nil {
		return nil, err
	}
	out := make([]ErrorRecord, len(objs))
	err = forEach(ctx, len(objs), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		obj, err := a.get(ctx, objs[i].key)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(obj.body, &out[i]); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorruptObject, objs[i].key, err)
		}
		out[i].Key = objs[i].key
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

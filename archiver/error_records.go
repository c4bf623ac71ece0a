package archiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/streamfold/streamfold/schema/streamimage"
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

// putError stores a poison record; storing the same one again overwrites
// it. Its key names its sequence number and eventID (errorKey). A record
// quarantined before keys named the eventID is under its sequence number
// alone (legacyErrorKey): when that object holds this record (the same
// eventID and sequence number), it is quarantined already and nothing is
// written, so a redelivery across the change is listed once. An object of
// another shard's record at that key is left alone.
func (a *Archive) putError(ctx context.Context, e ErrorRecord) error {
	body, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return wrapf(err, "encode error record %s", e.SequenceNumber)
	}
	date := EventDate(e.SeenAt)
	if checkSeq(e.SequenceNumber) == nil {
		old, err := a.get(ctx, a.l.legacyErrorKey(date, e.SequenceNumber))
		switch {
		case errors.Is(err, ErrNotFound):
			// Also a missing bucket when S3 says so with a 404 (get maps
			// every 404 to ErrNotFound): the put below then fails, and is
			// classified.
		case err != nil:
			// A missing bucket reported without a 404 (an S3API that
			// returns *types.NoSuchBucket alone, such as s3mem) is gone.
			return a.gone("", err)
		default:
			var prev ErrorRecord
			if json.Unmarshal(old.body, &prev) == nil && prev.EventID == e.EventID &&
				streamimage.CompareSeq(prev.SequenceNumber, e.SequenceNumber) == 0 {
				return nil
			}
		}
	}
	return a.gone("", a.put(ctx, a.l.errorKey(date, e.SequenceNumber, e.EventID), body, "application/json"))
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

package streamimage

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/schema"
)

// Event decodes the event an INSERT record of the event table carries and
// validates it. ok is false for every other record (TTL deletions
// included). An error means the record can never be decoded as a valid
// event; its text names the part that failed ("new image: ...", the item's
// missing attribute, or "event SUBJECT/ID: data.x: ..."). The projector and
// the archiver both decode their records here; each wraps the error as its
// own poison sentinel.
func Event(rec events.DynamoDBEventRecord) (ev schema.Event, payload schema.Payload, ok bool, err error) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return ev, nil, false, nil
	}
	item, err := FromLambda(rec.Change.NewImage)
	if err != nil {
		return ev, nil, false, fmt.Errorf("new image: %w", err)
	}
	// EventFromItem and Validate, parsing the data once.
	ev, payload, itemErr, validErr := schema.ValidateItem(item)
	if itemErr != nil {
		return schema.Event{}, nil, false, itemErr
	}
	if validErr != nil {
		return ev, nil, false, fmt.Errorf("event %s/%s: %w", ev.Subject, ev.ID, validErr)
	}
	return ev, payload, true, nil
}

package maintenance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
)

// StreamHandler handles a DynamoDB stream batch (archiver.Handler.Handle).
type StreamHandler func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Dispatch returns the archiver function's Lambda handler: a maintenance
// invocation ({"maintenance": {...}}) goes to r and returns its Result; any
// other payload must be a DynamoDB stream event ({"Records": [...]}) and
// goes to stream. A payload that is neither is an error naming both shapes.
func Dispatch(stream StreamHandler, r *Runner) func(ctx context.Context, payload json.RawMessage) (any, error) {
	return func(ctx context.Context, payload json.RawMessage) (any, error) {
		ev, ok, err := ParseInvocation(payload)
		if err != nil {
			return nil, err
		}
		if ok {
			return r.Run(ctx, ev)
		}
		var batch struct {
			Records *[]events.DynamoDBEventRecord `json:"Records"`
		}
		if err := json.Unmarshal(payload, &batch); err != nil || batch.Records == nil {
			return nil, fmt.Errorf("archiver: payload is neither a DynamoDB stream event ({\"Records\": [...]}) nor a maintenance event ({\"maintenance\": {\"task\": ...}}) (%v)", err)
		}
		return stream(ctx, events.DynamoDBEvent{Records: *batch.Records})
	}
}

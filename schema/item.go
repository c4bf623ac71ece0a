package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Event table attribute names. The key is (subject, id): every event of an
// aggregate shares a partition, so DynamoDB Streams keeps their order, and a
// repeated id for the same subject is the same item (an idempotent append).
const (
	AttrSubject     = "subject"
	AttrID          = "id"
	AttrSource      = "source"
	AttrEventType   = "type"
	AttrTime        = "time"
	AttrData        = "data"
	AttrRecordedAt  = "recordedat"
	AttrSpecVersion = "specversion"
	AttrTTL         = "ttl"
)

// Item maps a validated event to its event-table item. data is kept as the
// exact JSON text the producer sent (attribute type S), so no number or field
// is ever reshaped; ttl is recordedat plus retention, in epoch seconds.
// RecordedAt must be set.
func Item(e Event, retention time.Duration) (map[string]types.AttributeValue, error) {
	if e.RecordedAt == nil {
		return nil, fmt.Errorf("%w: recordedat is not set", ErrMalformedItem)
	}
	item := map[string]types.AttributeValue{
		AttrSubject:     &types.AttributeValueMemberS{Value: e.Subject},
		AttrID:          &types.AttributeValueMemberS{Value: e.ID},
		AttrSpecVersion: &types.AttributeValueMemberS{Value: SpecVersion},
		AttrSource:      &types.AttributeValueMemberS{Value: e.Source},
		AttrEventType:   &types.AttributeValueMemberS{Value: e.Type},
		AttrTime:        &types.AttributeValueMemberS{Value: e.Time.UTC().Format(time.RFC3339Nano)},
		AttrData:        &types.AttributeValueMemberS{Value: string(e.Data)},
		AttrRecordedAt:  &types.AttributeValueMemberS{Value: e.RecordedAt.UTC().Format(time.RFC3339Nano)},
	}
	if retention > 0 {
		item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(e.RecordedAt.Add(retention).Unix(), 10)}
	}
	return item, nil
}

// EventFromItem maps an event-table item (or a stream NewImage converted by
// package streamimage) back to the envelope. It checks shape only; call
// Validate for the payload rules. Errors wrap ErrMalformedItem and name the
// attribute.
func EventFromItem(item map[string]types.AttributeValue) (Event, error) {
	str := func(name string, required bool) (string, error) {
		av, ok := item[name]
		if !ok {
			if required {
				return "", fmt.Errorf("%w: attribute %q is missing", ErrMalformedItem, name)
			}
			return "", nil
		}
		sv, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("%w: attribute %q must be a string (S)", ErrMalformedItem, name)
		}
		return sv.Value, nil
	}
	var e Event
	var err error
	if e.Subject, err = str(AttrSubject, true); err != nil {
		return Event{}, err
	}
	if e.ID, err = str(AttrID, true); err != nil {
		return Event{}, err
	}
	if e.Source, err = str(AttrSource, true); err != nil {
		return Event{}, err
	}
	if e.Type, err = str(AttrEventType, true); err != nil {
		return Event{}, err
	}
	if e.SpecVersion, err = str(AttrSpecVersion, false); err != nil {
		return Event{}, err
	}
	ts, err := str(AttrTime, true)
	if err != nil {
		return Event{}, err
	}
	if e.Time, err = time.Parse(time.RFC3339Nano, ts); err != nil {
		return Event{}, fmt.Errorf("%w: attribute %q: not an RFC 3339 time: %q", ErrMalformedItem, AttrTime, ts)
	}
	data, err := str(AttrData, true)
	if err != nil {
		return Event{}, err
	}
	if !json.Valid([]byte(data)) {
		return Event{}, fmt.Errorf("%w: attribute %q: not valid JSON", ErrMalformedItem, AttrData)
	}
	e.Data = json.RawMessage(data)
	rs, err := str(AttrRecordedAt, false)
	if err != nil {
		return Event{}, err
	}
	if rs != "" {
		rt, err := time.Parse(time.RFC3339Nano, rs)
		if err != nil {
			return Event{}, fmt.Errorf("%w: attribute %q: not an RFC 3339 time: %q", ErrMalformedItem, AttrRecordedAt, rs)
		}
		e.RecordedAt = &rt
	}
	return e, nil
}

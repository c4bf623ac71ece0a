package schema

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The projection items' shapes are the structs of the items_<domain>.go
// files: one per item shape, tagged with the attribute names the projector
// writes (dynamodbav) and the same names for JSON. The projector's folds
// build them and marshal them with attributevalue.MarshalMap; readers
// decode items into them with attributevalue.UnmarshalMap. Their
// conventions:
//
//   - an attribute the fold does not know is absent (omitempty), never an
//     empty string or a zero time;
//   - a number that may be 0 yet present is a pointer (*int64, *float64),
//     and a boolean that may be false yet present is a *bool;
//   - times are ISO 8601 UTC strings with milliseconds
//     ("2006-01-02T15:04:05.000Z"), kept as strings so that their text is
//     exactly what is stored;
//   - decimals whose text matters (sums of counters, averages, usage) are
//     json.Number, which both encoders render as the exact text;
//   - free-form values (a message's payload) are RawValue.

// RawValue is an attribute value kept as it is, for a free-form attribute
// such as a message's payload. It marshals to and from DynamoDB unchanged.
type RawValue struct {
	types.AttributeValue
}

// MarshalDynamoDBAttributeValue returns the value unchanged.
func (r RawValue) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if r.AttributeValue == nil {
		return nil, errors.New("schema: RawValue holds no attribute value")
	}
	return r.AttributeValue, nil
}

// UnmarshalDynamoDBAttributeValue keeps av unchanged.
func (r *RawValue) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	r.AttributeValue = av
	return nil
}

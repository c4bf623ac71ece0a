package streamimage

import (
	"bytes"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// FromLambda converts a Lambda stream image to SDK attribute values.
//
// A nil image yields a nil map. The result shares no memory with img. On
// failure it returns a nil map and a *PathError naming the offending
// attribute; the zero events.DynamoDBAttributeValue is rejected with
// ErrNilValue. It never panics.
func FromLambda(img map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	return convertMap(img, nil, 1, fromLambda)
}

// FromLambdaValue converts a single Lambda attribute value to an SDK
// attribute value, with the same contract as FromLambda. The value itself is
// at nesting level 1; errors inside it carry a path relative to it (empty for
// the value itself).
func FromLambdaValue(av events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	return fromLambda(av, nil, 1)
}

// ToLambda converts SDK attribute values to a Lambda stream image, the
// inverse of FromLambda.
//
// A nil item yields a nil map. The result shares no memory with item. On
// failure it returns a nil map and a *PathError: nil values and typed nil
// members give ErrNilValue, UnknownUnionMember gives ErrUnsupportedType and a
// NULL member with Value false gives ErrInvalidNull. It never panics.
func ToLambda(item map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	return convertMap(item, nil, 1, toLambda)
}

// ToLambdaValue converts a single SDK attribute value to a Lambda attribute
// value, with the same contract as ToLambda.
func ToLambdaValue(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	return toLambda(v, nil, 1)
}

func fromLambda(av events.DynamoDBAttributeValue, p *path, depth int) (types.AttributeValue, error) {
	if depth > MaxDepth {
		return nil, pathErr(p, ErrTooDeep)
	}
	dt := av.DataType()
	// IsNull reports whether the value holds no Go value at all (an untyped
	// nil interface). Only DataTypeNull may legitimately do so; for any other
	// type it means the zero DynamoDBAttributeValue, whose DataType is
	// DataTypeBinary (0), and calling its accessor would panic.
	if dt != events.DataTypeNull && av.IsNull() {
		return nil, pathErr(p, ErrNilValue)
	}
	switch dt {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: av.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: av.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: bytes.Clone(av.Binary())}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: av.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: slices.Clone(av.StringSet())}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: slices.Clone(av.NumberSet())}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: cloneBinarySet(av.BinarySet())}, nil
	case events.DataTypeMap:
		m, err := convertMap(av.Map(), p, depth+1, fromLambda)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case events.DataTypeList:
		out, err := convertList(av.List(), p, depth+1, fromLambda)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	default:
		return nil, pathErr(p, ErrUnsupportedType)
	}
}

func toLambda(v types.AttributeValue, p *path, depth int) (events.DynamoDBAttributeValue, error) {
	var zero events.DynamoDBAttributeValue
	if depth > MaxDepth {
		return zero, pathErr(p, ErrTooDeep)
	}
	// Every case checks for a typed nil pointer before dereferencing it.
	switch m := v.(type) {
	case nil:
		return zero, pathErr(p, ErrNilValue)
	case *types.AttributeValueMemberS:
		if m == nil {
			break
		}
		return events.NewStringAttribute(m.Value), nil
	case *types.AttributeValueMemberN:
		if m == nil {
			break
		}
		return events.NewNumberAttribute(m.Value), nil
	case *types.AttributeValueMemberB:
		if m == nil {
			break
		}
		return events.NewBinaryAttribute(bytes.Clone(m.Value)), nil
	case *types.AttributeValueMemberBOOL:
		if m == nil {
			break
		}
		return events.NewBooleanAttribute(m.Value), nil
	case *types.AttributeValueMemberNULL:
		if m == nil {
			break
		}
		if !m.Value {
			return zero, pathErr(p, ErrInvalidNull)
		}
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		if m == nil {
			break
		}
		return events.NewStringSetAttribute(slices.Clone(m.Value)), nil
	case *types.AttributeValueMemberNS:
		if m == nil {
			break
		}
		return events.NewNumberSetAttribute(slices.Clone(m.Value)), nil
	case *types.AttributeValueMemberBS:
		if m == nil {
			break
		}
		return events.NewBinarySetAttribute(cloneBinarySet(m.Value)), nil
	case *types.AttributeValueMemberM:
		if m == nil {
			break
		}
		mm, err := convertMap(m.Value, p, depth+1, toLambda)
		if err != nil {
			return zero, err
		}
		return events.NewMapAttribute(mm), nil
	case *types.AttributeValueMemberL:
		if m == nil {
			break
		}
		out, err := convertList(m.Value, p, depth+1, toLambda)
		if err != nil {
			return zero, err
		}
		return events.NewListAttribute(out), nil
	default:
		// *types.UnknownUnionMember and anything else.
		return zero, pathErr(p, ErrUnsupportedType)
	}
	return zero, pathErr(p, ErrNilValue)
}

func cloneBinarySet(bs [][]byte) [][]byte {
	if bs == nil {
		return nil
	}
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = bytes.Clone(b)
	}
	return out
}

package streamimage

import (
	"bytes"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// FromStreams converts a DynamoDB Streams (GetRecords) image to SDK
// attribute values.
//
// The two unions have identical members, so the conversion is lossless in
// both directions (NULL with Value false included). A nil image yields a nil
// map and the result shares no memory with img. On failure it returns a nil
// map and a *PathError: nil values and typed nil members give ErrNilValue,
// streamtypes.UnknownUnionMember gives ErrUnsupportedType. It never panics.
func FromStreams(img map[string]streamtypes.AttributeValue) (map[string]types.AttributeValue, error) {
	return convertMap(img, nil, 1, fromStreams)
}

// FromStreamsValue converts a single DynamoDB Streams attribute value, with
// the same contract as FromStreams.
func FromStreamsValue(v streamtypes.AttributeValue) (types.AttributeValue, error) {
	return fromStreams(v, nil, 1)
}

// ToStreams converts SDK attribute values to a DynamoDB Streams image, the
// inverse of FromStreams, with the same contract.
func ToStreams(item map[string]types.AttributeValue) (map[string]streamtypes.AttributeValue, error) {
	return convertMap(item, nil, 1, toStreams)
}

// ToStreamsValue converts a single SDK attribute value to a DynamoDB Streams
// attribute value, with the same contract as ToStreams.
func ToStreamsValue(v types.AttributeValue) (streamtypes.AttributeValue, error) {
	return toStreams(v, nil, 1)
}

func fromStreams(v streamtypes.AttributeValue, p *path, depth int) (types.AttributeValue, error) {
	if depth > MaxDepth {
		return nil, pathErr(p, ErrTooDeep)
	}
	switch m := v.(type) {
	case nil:
		return nil, pathErr(p, ErrNilValue)
	case *streamtypes.AttributeValueMemberS:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberS{Value: m.Value}, nil
	case *streamtypes.AttributeValueMemberN:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberN{Value: m.Value}, nil
	case *streamtypes.AttributeValueMemberB:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberB{Value: bytes.Clone(m.Value)}, nil
	case *streamtypes.AttributeValueMemberBOOL:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberBOOL{Value: m.Value}, nil
	case *streamtypes.AttributeValueMemberNULL:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberNULL{Value: m.Value}, nil
	case *streamtypes.AttributeValueMemberSS:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberSS{Value: slices.Clone(m.Value)}, nil
	case *streamtypes.AttributeValueMemberNS:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberNS{Value: slices.Clone(m.Value)}, nil
	case *streamtypes.AttributeValueMemberBS:
		if m == nil {
			break
		}
		return &types.AttributeValueMemberBS{Value: cloneBinarySet(m.Value)}, nil
	case *streamtypes.AttributeValueMemberM:
		if m == nil {
			break
		}
		mm, err := convertMap(m.Value, p, depth+1, fromStreams)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: mm}, nil
	case *streamtypes.AttributeValueMemberL:
		if m == nil {
			break
		}
		out, err := convertList(m.Value, p, depth+1, fromStreams)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	default:
		return nil, pathErr(p, ErrUnsupportedType)
	}
	return nil, pathErr(p, ErrNilValue)
}

func toStreams(v types.AttributeValue, p *path, depth int) (streamtypes.AttributeValue, error) {
	if depth > MaxDepth {
		return nil, pathErr(p, ErrTooDeep)
	}
	switch m := v.(type) {
	case nil:
		return nil, pathErr(p, ErrNilValue)
	case *types.AttributeValueMemberS:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberS{Value: m.Value}, nil
	case *types.AttributeValueMemberN:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberN{Value: m.Value}, nil
	case *types.AttributeValueMemberB:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberB{Value: bytes.Clone(m.Value)}, nil
	case *types.AttributeValueMemberBOOL:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberBOOL{Value: m.Value}, nil
	case *types.AttributeValueMemberNULL:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberNULL{Value: m.Value}, nil
	case *types.AttributeValueMemberSS:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberSS{Value: slices.Clone(m.Value)}, nil
	case *types.AttributeValueMemberNS:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberNS{Value: slices.Clone(m.Value)}, nil
	case *types.AttributeValueMemberBS:
		if m == nil {
			break
		}
		return &streamtypes.AttributeValueMemberBS{Value: cloneBinarySet(m.Value)}, nil
	case *types.AttributeValueMemberM:
		if m == nil {
			break
		}
		mm, err := convertMap(m.Value, p, depth+1, toStreams)
		if err != nil {
			return nil, err
		}
		return &streamtypes.AttributeValueMemberM{Value: mm}, nil
	case *types.AttributeValueMemberL:
		if m == nil {
			break
		}
		out, err := convertList(m.Value, p, depth+1, toStreams)
		if err != nil {
			return nil, err
		}
		return &streamtypes.AttributeValueMemberL{Value: out}, nil
	default:
		return nil, pathErr(p, ErrUnsupportedType)
	}
	return nil, pathErr(p, ErrNilValue)
}

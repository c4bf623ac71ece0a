package projector

import (
	"math/big"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// canonicalItem renders an item as plain Go values with numbers normalised,
// sets sorted, so that two equal items compare equal whatever their origin
// (a fold, MemStore or DynamoDB).
func canonicalItem(item map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(item))
	for k, v := range item {
		out[k] = canonicalValue(v)
	}
	return out
}

// CanonicalItem renders an item as readers see it, canonically (see
// canonicalItem): the projector's bookkeeping attributes
// (schema.IsInternalAttribute: owners, versions, stamps) are left out, so a
// rebuilt projection equals the live one.
func CanonicalItem(item map[string]types.AttributeValue) map[string]any {
	out := canonicalItem(item)
	for k := range out {
		if schema.IsInternalAttribute(k) {
			delete(out, k)
		}
	}
	return out
}

func canonicalNumber(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "N?" + s
	}
	return "N:" + r.RatString()
}

func canonicalValue(v types.AttributeValue) any {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + t.Value
	case *types.AttributeValueMemberN:
		return canonicalNumber(t.Value)
	case *types.AttributeValueMemberBOOL:
		return t.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberB:
		return "B:" + string(t.Value)
	case *types.AttributeValueMemberL:
		l := make([]any, len(t.Value))
		for i, e := range t.Value {
			l[i] = canonicalValue(e)
		}
		return l
	case *types.AttributeValueMemberM:
		return canonicalItem(t.Value)
	case *types.AttributeValueMemberSS:
		s := append([]string(nil), t.Value...)
		sort.Strings(s)
		return map[string]any{"SS": s}
	case *types.AttributeValueMemberNS:
		s := make([]string, len(t.Value))
		for i, n := range t.Value {
			s[i] = canonicalNumber(n)
		}
		sort.Strings(s)
		return map[string]any{"NS": s}
	case *types.AttributeValueMemberBS:
		s := make([]string, len(t.Value))
		for i, b := range t.Value {
			s[i] = string(b)
		}
		sort.Strings(s)
		return map[string]any{"BS": s}
	}
	return "?"
}

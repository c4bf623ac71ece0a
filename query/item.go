package query

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Plain converts a DynamoDB item to plain JSON values: S to string, N to
// json.Number (the exact decimal text), BOOL to bool, NULL to nil, B to
// []byte, L to []any, M to map[string]any, SS to []string, NS to
// []json.Number and BS to [][]byte. encoding/json renders the result as the
// seeds show their items. The projector's bookkeeping attributes
// (schema.IsInternalAttribute) are left out.
func Plain(item map[string]types.AttributeValue) map[string]any {
	if item == nil {
		return nil
	}
	out := make(map[string]any, len(item))
	for k, v := range item {
		if !schema.IsInternalAttribute(k) {
			out[k] = plainValue(v)
		}
	}
	return out
}

// plainMap converts a map value (inside an item) in full.
func plainMap(m map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = plainValue(v)
	}
	return out
}

func plainValue(v types.AttributeValue) any {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return t.Value
	case *types.AttributeValueMemberN:
		return json.Number(t.Value)
	case *types.AttributeValueMemberBOOL:
		return t.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberB:
		return t.Value
	case *types.AttributeValueMemberL:
		l := make([]any, len(t.Value))
		for i, e := range t.Value {
			l[i] = plainValue(e)
		}
		return l
	case *types.AttributeValueMemberM:
		return plainMap(t.Value)
	case *types.AttributeValueMemberSS:
		return append([]string{}, t.Value...)
	case *types.AttributeValueMemberNS:
		l := make([]json.Number, len(t.Value))
		for i, n := range t.Value {
			l[i] = json.Number(n)
		}
		return l
	case *types.AttributeValueMemberBS:
		return append([][]byte{}, t.Value...)
	}
	return nil
}

func plainItems(items []map[string]types.AttributeValue) []map[string]any {
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = Plain(it)
	}
	return out
}

// decodeItem decodes a projection item into its typed shape, one of
// schema's *Item structs. Attributes the shape does not name (the
// projector's bookkeeping among them) are ignored, and absent ones leave
// their fields zero.
func decodeItem[T any](item map[string]types.AttributeValue) (T, error) {
	var v T
	if err := attributevalue.UnmarshalMap(item, &v); err != nil {
		return v, fmt.Errorf("decode %T item: %w", v, err)
	}
	return v, nil
}

// decodeItems decodes items into their typed shape, in order.
func decodeItems[T any](items []map[string]types.AttributeValue) ([]T, error) {
	out := make([]T, len(items))
	for i, it := range items {
		v, err := decodeItem[T](it)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// stableOrder returns the indexes of items sorted stably by less.
func stableOrder[T any](items []T, less func(a, b T) bool) []int {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return less(items[order[i]], items[order[j]]) })
	return order
}

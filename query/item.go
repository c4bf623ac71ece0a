package query

import (
	"encoding/json"

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

// str reads a string attribute of a plain item ("" when absent).
func str(item map[string]any, name string) string {
	s, _ := item[name].(string)
	return s
}

// num reads a number attribute of a plain item (0, false when absent).
func num(item map[string]any, name string) (float64, bool) {
	n, ok := item[name].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

package projector

import (
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// keyString renders a key canonically (sorted attribute names, typed values).
func keyString(key map[string]types.AttributeValue) string {
	names := make([]string, 0, len(key))
	for k := range key {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte('=')
		switch v := key[k].(type) {
		case *types.AttributeValueMemberS:
			b.WriteString("S:" + v.Value)
		case *types.AttributeValueMemberN:
			b.WriteString("N:" + v.Value)
		case *types.AttributeValueMemberB:
			b.WriteString("B:" + string(v.Value))
		}
		b.WriteByte(';')
	}
	return b.String()
}

// ItemID identifies a projection item: its logical table and canonical key.
func ItemID(table string, item map[string]types.AttributeValue) string {
	return table + "|" + keyString(keyOf(table, item))
}

// keyOf picks the key attributes of an item of a logical table, from the
// table's schema spec. An item of an unknown table, or one missing a key
// attribute, is its own key: it can then only equal an identical item, and
// DynamoStore rejects the write.
func keyOf(table string, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if spec, ok := schema.TableSpec(table); ok {
		if key, ok := spec.Key(item); ok {
			return key
		}
	}
	return item
}

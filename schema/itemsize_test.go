package schema_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

func TestItemSize(t *testing.T) {
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	tests := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"empty", nil, 0},
		{"string counts UTF-8 bytes", map[string]types.AttributeValue{"s": &types.AttributeValueMemberS{Value: "héllo"}}, 1 + 6},
		{"binary", map[string]types.AttributeValue{"bin": &types.AttributeValueMemberB{Value: make([]byte, 10)}}, 3 + 10},
		{"ttl, even digits", map[string]types.AttributeValue{"ttl": n("1764000001")}, 3 + 6},
		{"trailing zero pairs trimmed", map[string]types.AttributeValue{"ttl": n("1764000000")}, 3 + 3},
		{"pairs align on the decimal point", map[string]types.AttributeValue{"x": n("176400000")}, 1 + 4},
		{"zero", map[string]types.AttributeValue{"x": n("0")}, 1 + 1},
		{"fraction", map[string]types.AttributeValue{"x": n("0.05")}, 1 + 2},
		{"negative", map[string]types.AttributeValue{"x": n("-12")}, 1 + 3},
		{"exponent", map[string]types.AttributeValue{"x": n("1.5e3")}, 1 + 2},
		{"bool and null", map[string]types.AttributeValue{"b": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true}}, 2 + 2},
		{"map and list", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"k": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ab"}}},
		}}}, 1 + 3 + 1 + 1 + (3 + 1 + 2)},
		{"sets", map[string]types.AttributeValue{"ss": &types.AttributeValueMemberSS{Value: []string{"a", "bc"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}}, 2 + 3 + 2 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schema.ItemSize(tt.item); got != tt.want {
				t.Fatalf("ItemSize = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestWriteUnits(t *testing.T) {
	for _, tt := range []struct{ size, want int }{{0, 1}, {1, 1}, {1024, 1}, {1025, 2}, {schema.MaxItemBytes, 400}} {
		if got := schema.WriteUnits(tt.size); got != tt.want {
			t.Errorf("WriteUnits(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
}

package schema_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

func TestTablesForOffIsTables(t *testing.T) {
	for _, shards := range []int{0, 1} {
		if got := schema.TablesFor(shards); !reflect.DeepEqual(got, schema.Tables()) {
			t.Errorf("TablesFor(%d) differs from Tables()", shards)
		}
		if _, sharded := schema.IndexFor(schema.TableExecutions, "StatusDateIndex", shards); sharded {
			t.Errorf("IndexFor with %d shards: sharded", shards)
		}
		if schema.HasShardedIndex(schema.TableMessages, shards) {
			t.Errorf("HasShardedIndex(messages, %d) = true", shards)
		}
	}
}

func TestTablesForSharded(t *testing.T) {
	got := schema.TablesFor(4)
	base := schema.Tables()
	replaced := 0
	for i, tb := range got {
		if len(tb.Indexes) != len(base[i].Indexes) {
			t.Fatalf("%s: %d indexes, want %d", tb.Logical, len(tb.Indexes), len(base[i].Indexes))
		}
		for j, ix := range tb.Indexes {
			seed := base[i].Indexes[j]
			name, sharded := schema.IndexFor(tb.Logical, seed.Name, 4)
			if !sharded {
				if !reflect.DeepEqual(ix, seed) {
					t.Errorf("%s/%s changed though not sharded", tb.Logical, seed.Name)
				}
				continue
			}
			replaced++
			want := schema.Index{Name: name, Hash: append(append([]schema.KeyAttr{}, seed.Hash...), schema.KeyAttr{Name: "gsiShard", Type: schema.Number}), Range: seed.Range}
			if !reflect.DeepEqual(ix, want) {
				t.Errorf("%s/%s: got %+v, want %+v", tb.Logical, seed.Name, ix, want)
			}
			if len(ix.Hash) > 4 {
				t.Errorf("%s/%s: %d hash attributes, DynamoDB allows 4", tb.Logical, ix.Name, len(ix.Hash))
			}
		}
	}
	if replaced != len(schema.ShardedIndexes()) {
		t.Errorf("replaced %d indexes, ShardedIndexes has %d", replaced, len(schema.ShardedIndexes()))
	}
	// Tables() is not changed by TablesFor.
	if ix := schema.Tables()[1].Indexes[1]; len(ix.Hash) != 1 {
		t.Errorf("Tables() was modified: %+v", ix)
	}
	// A sharded table still builds a CreateTable request with gsiShard declared as N.
	spec, _ := schema.TableSpecFor(schema.TableWorkflows, 4)
	in := spec.CreateTableInput("x")
	found := false
	for _, d := range in.AttributeDefinitions {
		if *d.AttributeName == "gsiShard" && d.AttributeType == types.ScalarAttributeTypeN {
			found = true
		}
	}
	if !found {
		t.Error("CreateTableInput of sharded workflows does not define gsiShard as N")
	}
}

func TestValidateGSIShards(t *testing.T) {
	for _, tc := range []struct {
		shards int
		want   string
	}{
		{0, ""}, {1, ""}, {2, ""}, {16, ""},
		{-1, "x: must be between 0 (off) and 16, got -1"},
		{17, "x: must be between 0 (off) and 16, got 17"},
	} {
		err := schema.ValidateGSIShards("x", tc.shards)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("ValidateGSIShards(%d) = %q, want %q", tc.shards, got, tc.want)
		}
	}
}

// TestGSIShardIsAFunctionOfTheKey pins the shard function: FNV-1a of the
// key values joined by " | ", modulo N.
func TestGSIShardIsAFunctionOfTheKey(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	for _, tc := range []struct {
		table string
		key   map[string]types.AttributeValue
		want  int
	}{
		// Expected values computed independently (FNV-1a 32 in Python).
		{schema.TableExecutions, map[string]types.AttributeValue{"executionArn": s("arn:1")}, 1},
		{schema.TableWorkflows, map[string]types.AttributeValue{"pk": s("e1"), "sk": s("metadata")}, 0},
		{schema.TableMessages, map[string]types.AttributeValue{"message_id": s("m"), "status": s("x")}, 0},
	} {
		got, ok := schema.ItemGSIShard(tc.table, tc.key, 4)
		if !ok || got != tc.want {
			t.Errorf("ItemGSIShard(%s, %v) = %d, %v; want %d", tc.table, tc.key, got, ok, tc.want)
		}
	}
	if got := schema.GSIShard("", 4); got != int(uint32(2166136261)%4) {
		t.Errorf("GSIShard of the empty key = %d, want the FNV-1a offset basis mod 4", got)
	}
	if got := schema.GSIShard("RUNNING", 16); got != 12 {
		t.Errorf("GSIShard(RUNNING, 16) = %d, want 12", got)
	}
	if _, ok := schema.ItemGSIShard(schema.TableWorkflowJobs, map[string]types.AttributeValue{"pk": s("a"), "sk": s("v")}, 4); ok {
		t.Error("workflow-jobs has no sharded index: no gsiShard")
	}
	if _, ok := schema.ItemGSIShard(schema.TableExecutions, map[string]types.AttributeValue{"executionArn": s("a")}, 1); ok {
		t.Error("one shard is off: no gsiShard")
	}
}

func TestParseGSIShards(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr string
	}{
		{"", 0, ""},
		{"1", 1, ""},
		{"4", 4, ""},
		{"x", 0, `STREAMFOLD_GSI_SHARDS: not a number: "x"`},
		{"-1", -1, "STREAMFOLD_GSI_SHARDS: must be between 0 (off) and"},
		{"999", 999, "STREAMFOLD_GSI_SHARDS: must be between 0 (off) and"},
	}
	for _, tt := range tests {
		got, err := schema.ParseGSIShards(tt.in)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseGSIShards(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("ParseGSIShards(%q) error %v, want %q...", tt.in, err, tt.wantErr)
		}
	}
}

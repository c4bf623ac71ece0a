package projector

import (
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Write-sharded GSI keys (Config.GSIShards; docs/decisions.md). With more
// than one shard, every item and counter row of a table with a sharded
// index carries schema.AttrGSIShard, the write shard of its primary key
// (schema.ItemGSIShard: FNV-1a of the key's values joined by " | ", modulo
// the shard count). It is a function of the key alone, so it never changes
// for an item, and a counter row's contributors all agree on it (an
// attribute without a stamp, see Contribution.Attrs). With 0 or 1 shards
// nothing is added. The attribute is applied where the retention is (both
// the stored and the new items of a fold go through it), so the stored and
// new items of an aggregate compare alike.

// gsiShardItem returns item with AttrGSIShard set when the table's items
// carry one under shards (a copy: items may be shared with the state),
// else item itself.
func gsiShardItem(table string, item map[string]types.AttributeValue, shards int) map[string]types.AttributeValue {
	s, ok := schema.ItemGSIShard(table, item, shards)
	if !ok {
		return item
	}
	item = maps.Clone(item)
	item[schema.AttrGSIShard] = &types.AttributeValueMemberN{Value: strconv.Itoa(s)}
	return item
}

// gsiShardRow returns c with AttrGSIShard among its static attributes when
// the row's table carries one under shards.
func gsiShardRow(c Contribution, shards int) Contribution {
	s, ok := schema.ItemGSIShard(c.Table, c.Key, shards)
	if !ok {
		return c
	}
	c.Attrs = maps.Clone(c.Attrs)
	if c.Attrs == nil {
		c.Attrs = map[string]types.AttributeValue{}
	}
	c.Attrs[schema.AttrGSIShard] = &types.AttributeValueMemberN{Value: strconv.Itoa(s)}
	return c
}

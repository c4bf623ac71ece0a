package schema

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Write-sharded GSI partition keys (docs/decisions.md, "Write-sharded GSI
// partition keys"). With N > 1 shards, every item of a table that has a
// sharded index carries a Number attribute AttrGSIShard, a pure function of
// its primary key (GSIShard), and each sharded index is replaced by a
// variant whose hash key adds AttrGSIShard as its last attribute, with the
// same range key. The seeds' attribute values are unchanged. With 0 or 1
// shards (the default) tables and items are exactly the seeds'.

// AttrGSIShard is the Number attribute holding an item's write shard,
// 0..N-1, on the tables with a sharded index when sharding is on.
const AttrGSIShard = "gsiShard"

// MaxGSIShards bounds the shard count: a cursor holds one resume key per
// shard, and a page reads up to N times its size.
const MaxGSIShards = 16

// ShardedIndex names a seed index that is write-sharded when sharding is on
// and the name of its sharded variant.
type ShardedIndex struct {
	Table, Index, Sharded string
}

// shardedIndexes are the indexes whose hottest key takes more than half a
// partition's write limit at 10,000 events/s (internal/laptop/partitionmodel,
// docs/benchmarks.md "Partitions at 10,000 events/s").
var shardedIndexes = []ShardedIndex{
	{TableExecutions, "AgentDateIndex", "AgentShardDateIndex"},
	{TableExecutions, "StatusDateIndex", "StatusShardDateIndex"},
	{TableWorkflows, "GSI1", "GSI1Shard"},
	{TableMessages, "stage-created_date-index", "stage-shard-created_date-index"},
	{TableMessages, "status-created_date-index", "status-shard-created_date-index"},
	{TableMessages, "message_type-created_date-index", "message_type-shard-created_date-index"},
}

// ShardedIndexes lists the indexes sharding replaces, in table order.
func ShardedIndexes() []ShardedIndex { return append([]ShardedIndex(nil), shardedIndexes...) }

// ShardsOn reports whether a shard count turns sharding on (more than 1).
func ShardsOn(shards int) bool { return shards > 1 }

// ValidateGSIShards checks a shard count: 0 or 1 (off) up to MaxGSIShards.
// field names the setting in the error, e.g. "projector: Config.GSIShards".
func ValidateGSIShards(field string, shards int) error {
	if shards < 0 || shards > MaxGSIShards {
		return fmt.Errorf("%s: must be between 0 (off) and %d, got %d", field, MaxGSIShards, shards)
	}
	return nil
}

// IndexFor returns the name of the index a reader queries for a seed index
// of table under the shard count: the sharded variant when sharding is on
// and the index is sharded, else the seed index itself. sharded reports
// which.
func IndexFor(table, index string, shards int) (name string, sharded bool) {
	if ShardsOn(shards) {
		for _, s := range shardedIndexes {
			if s.Table == table && s.Index == index {
				return s.Sharded, true
			}
		}
	}
	return index, false
}

// HasShardedIndex reports whether items of table carry AttrGSIShard under
// the shard count.
func HasShardedIndex(table string, shards int) bool {
	if !ShardsOn(shards) {
		return false
	}
	for _, s := range shardedIndexes {
		if s.Table == table {
			return true
		}
	}
	return false
}

// TablesFor returns every table specification under a shard count: with 0
// or 1 exactly Tables(); otherwise each sharded index is replaced, in
// place, by its variant whose hash key ends with AttrGSIShard (Number).
// It panics on a count ValidateGSIShards refuses (a programming error:
// configurations validate it first).
func TablesFor(shards int) []Table {
	if err := ValidateGSIShards("schema: TablesFor", shards); err != nil {
		panic(err)
	}
	out := Tables()
	if !ShardsOn(shards) {
		return out
	}
	for i, t := range out {
		ixs := make([]Index, len(t.Indexes))
		for j, ix := range t.Indexes {
			ixs[j] = ix
			if name, ok := IndexFor(t.Logical, ix.Name, shards); ok {
				ixs[j] = Index{Name: name, Hash: append(append([]KeyAttr{}, ix.Hash...), n(AttrGSIShard)), Range: append([]KeyAttr{}, ix.Range...)}
			}
		}
		out[i].Indexes = ixs
	}
	return out
}

// TableSpecFor is TableSpec under a shard count (see TablesFor).
func TableSpecFor(logical string, shards int) (Table, bool) {
	for _, t := range TablesFor(shards) {
		if t.Logical == logical {
			return t, true
		}
	}
	return Table{}, false
}

// GSIShard is the write shard, 0..shards-1, of an item by its primary key:
// FNV-1a (32 bits) of the key's values (S or N text; the hash value, then
// the range value, joined by " | "), modulo shards. It depends on the key
// only, so an item keeps its shard when its indexed attributes change (a
// status change moves its entry from RUNNING/s to SUCCEEDED/s, same s).
func GSIShard(primaryKey string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(primaryKey))
	return int(h.Sum32() % uint32(shards))
}

// PrimaryKeyString renders the primary key of item in table t as GSIShard
// hashes it; ok is false when a key attribute is missing or neither S nor N.
func (t Table) PrimaryKeyString(item map[string]types.AttributeValue) (string, bool) {
	attrs := []KeyAttr{t.Hash}
	if t.Range != nil {
		attrs = append(attrs, *t.Range)
	}
	return KeyValues(attrs, item)
}

// KeyValues renders the values of the key attributes attrs of item (S or N
// text) joined by " | " in their order; ok is false when one is missing or
// of another type (the item is then in no index with that key).
func KeyValues(attrs []KeyAttr, item map[string]types.AttributeValue) (string, bool) {
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		switch v := item[a.Name].(type) {
		case *types.AttributeValueMemberS:
			parts[i] = v.Value
		case *types.AttributeValueMemberN:
			parts[i] = v.Value
		default:
			return "", false
		}
	}
	return strings.Join(parts, " | "), true
}

// ItemGSIShard is the AttrGSIShard value of an item (its primary key in
// key) of table under the shard count; ok is false when the table's items
// carry none (sharding off, or no sharded index on the table) or the key is
// incomplete.
func ItemGSIShard(table string, key map[string]types.AttributeValue, shards int) (int, bool) {
	if !HasShardedIndex(table, shards) {
		return 0, false
	}
	spec, ok := TableSpec(table)
	if !ok {
		return 0, false
	}
	pk, ok := spec.PrimaryKeyString(key)
	if !ok {
		return 0, false
	}
	return GSIShard(pk, shards), true
}

// GSIShardsEnv is the environment variable every program that writes
// projection items or reads the sharded indexes takes its shard count from
// (Terraform's gsi_shards sets it on each function).
const GSIShardsEnv = "STREAMFOLD_GSI_SHARDS"

// ParseGSIShards reads a shard count as GSIShardsEnv holds it: "" is 0
// (off); anything else must be a number ValidateGSIShards accepts. Errors
// name the variable.
func ParseGSIShards(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: not a number: %q", GSIShardsEnv, v)
	}
	return n, ValidateGSIShards(GSIShardsEnv, n)
}

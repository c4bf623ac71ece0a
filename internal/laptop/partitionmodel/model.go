package partitionmodel

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// PartitionLimit is DynamoDB's write throughput of one partition: 1,000
// write units per second. One partition key value always lives in one
// partition (a GSI whose sort key grows with time, such as a creation
// date, cannot be split for heat either: every write lands at its end).
const PartitionLimit = 1000

// Write is one write a table receives, as DynamoDB sees it: the item
// before (nil when absent) and after (nil for a delete).
type Write struct {
	// At is when the write happens, in simulated time from the start.
	At time.Duration
	// Table is the logical table name (schema.Table*).
	Table string
	// Old is the item stored before the write, nil when there was none.
	Old map[string]types.AttributeValue
	// New is the item the write stores, nil for a delete.
	New map[string]types.AttributeValue
	// Tx is set for a write inside a TransactWriteItems of more than one
	// action: DynamoDB charges it twice (its index writes too, as DynamoDB
	// Local reports them; see docs/cost.md).
	Tx bool
	// OldSize and NewSize, when positive, are the sizes of Old and New
	// instead of their ItemSize (for items the recorder only knows the key
	// and size of: the projector's stored states).
	OldSize, NewSize int
	// Refused is set for a conditional write whose condition failed: the
	// base table is charged (the larger of the stored and the sent item,
	// at least one unit), no index is written.
	Refused bool
}

// Units are write units on one partition key value.
type Units struct {
	Table, Index string // Index "" for the base table
	Key          string // the partition key value, rendered by KeyOf
	Units        float64
}

// Model accumulates the write units each partition key value of each table
// and index receives, per window of simulated time. The zero value is not
// usable; call New. Not safe for concurrent use.
type Model struct {
	window time.Duration
	specs  map[string]schema.Table
	// per table/index -> key -> window -> units
	units map[target]map[string]map[int64]float64
	total map[target]float64
	last  int64 // the latest window seen
	// shards, when positive, has every index also counted write-sharded
	// (see Shard).
	shards int
}

type target struct{ table, index string }

// New returns a model of the given tables (schema.Tables()) that counts in
// windows of the given length (a second: DynamoDB's per-partition limit is
// per second).
func New(tables []schema.Table, window time.Duration) *Model {
	m := &Model{window: window, specs: map[string]schema.Table{}, units: map[target]map[string]map[int64]float64{}, total: map[target]float64{}}
	for _, t := range tables {
		m.specs[t.Logical] = t
	}
	return m
}

// WriteUnits is what writing (or deleting) an item of the given size costs:
// one unit per started KB, at least one.
func WriteUnits(size int) float64 {
	return float64(max(1, (size+1023)/1024))
}

// KeyOf renders the value of the given key attributes of item, "" when one
// is missing (the item is then not in an index with that key): the values
// joined by " | " in the order of the attributes.
func KeyOf(attrs []schema.KeyAttr, item map[string]types.AttributeValue) string {
	k, _ := schema.KeyValues(attrs, item)
	return k
}

// Shard makes the model count every index twice: as it is, and
// write-sharded into n partition key values per value (the design of
// docs/decisions.md, "Write-sharded GSI partition keys"): an entry's
// partition key value gets "#<s>", s = GSIShard of the item's primary key.
// Reports(tables, top, true) reports the sharded counts.
func (m *Model) Shard(n int) { m.shards = n }

// GSIShard is the write shard, 0..n-1, of an item by its primary key
// (rendered by KeyOf over the table's hash and range attributes): FNV-1a
// of the key, modulo n. It depends on the item's key only, so an item
// keeps its shard when its indexed attributes change.
// It is schema.GSIShard, the function the projector writes gsiShard with.
func GSIShard(primaryKey string, n int) int { return schema.GSIShard(primaryKey, n) }

// sharded is the name under which an index's sharded counts are kept.
func sharded(index string) string { return index + "\x00sharded" }

// Record adds a write. A write to a table the model does not know is an
// error.
func (m *Model) Record(w Write) error {
	spec, ok := m.specs[w.Table]
	if !ok {
		return fmt.Errorf("partitionmodel: unknown table %q", w.Table)
	}
	win := int64(w.At / m.window)
	m.last = max(m.last, win)
	mult := 1.0
	if w.Tx {
		mult = 2
	}
	oldSize, newSize := cmp.Or(w.OldSize, size(w.Old)), cmp.Or(w.NewSize, size(w.New))
	hash := []schema.KeyAttr{spec.Hash}
	base := KeyOf(hash, w.New)
	if base == "" {
		base = KeyOf(hash, w.Old)
	}
	if base == "" {
		return fmt.Errorf("partitionmodel: a write to %s without its hash key %s", w.Table, spec.Hash.Name)
	}
	m.add(target{w.Table, ""}, base, win, mult*WriteUnits(max(oldSize, newSize)))
	if w.Refused {
		return nil
	}
	shard := ""
	if m.shards > 0 {
		pk := append([]schema.KeyAttr{spec.Hash}, rangeOf(spec)...)
		k := KeyOf(pk, w.New)
		if k == "" {
			k = KeyOf(pk, w.Old)
		}
		shard = "#" + strconv.Itoa(GSIShard(k, m.shards))
	}
	for _, ix := range spec.Indexes {
		t := target{w.Table, ix.Name}
		st := target{w.Table, sharded(ix.Name)}
		add := func(key string, u float64) {
			m.add(t, key, win, u)
			if shard != "" {
				m.add(st, key+shard, win, u)
			}
		}
		keyAttrs := append(slices.Clone(ix.Hash), ix.Range...)
		oldIn, newIn := KeyOf(keyAttrs, w.Old) != "", KeyOf(keyAttrs, w.New) != ""
		oldHash, newHash := KeyOf(ix.Hash, w.Old), KeyOf(ix.Hash, w.New)
		switch {
		case oldIn && newIn && KeyOf(keyAttrs, w.Old) == KeyOf(keyAttrs, w.New):
			// The entry stays where it is and is rewritten (every index
			// projects ALL, so any change of the item changes it).
			add(newHash, mult*WriteUnits(max(oldSize, newSize)))
		default:
			if oldIn { // the entry moves or leaves the index: a delete
				add(oldHash, mult*WriteUnits(oldSize))
			}
			if newIn {
				add(newHash, mult*WriteUnits(newSize))
			}
		}
	}
	return nil
}

func rangeOf(spec schema.Table) []schema.KeyAttr {
	if spec.Range == nil {
		return nil
	}
	return []schema.KeyAttr{*spec.Range}
}

func size(item map[string]types.AttributeValue) int {
	if item == nil {
		return 0
	}
	return schema.ItemSize(item)
}

func (m *Model) add(t target, key string, win int64, u float64) {
	keys := m.units[t]
	if keys == nil {
		keys = map[string]map[int64]float64{}
		m.units[t] = keys
	}
	wins := keys[key]
	if wins == nil {
		wins = map[int64]float64{}
		keys[key] = wins
	}
	wins[win] += u
	m.total[t] += u
}

// Report is the model's result for one table or index.
type Report struct {
	Table, Index string
	// Keys is how many partition key values were written.
	Keys int
	// TotalPerSecond is the table's or index's write units per second over
	// the whole run (all keys).
	TotalPerSecond float64
	// Max is the most write units one partition key value received in one
	// window, per second, and Hot the key and MaxWindow the window (from 0).
	Max       float64
	Hot       string
	MaxWindow int64
	// MeanOfHot is the hottest key's (Hot's) units per second averaged over
	// the whole run: Max without the batching's bursts.
	MeanOfHot float64
	// Sharded is the number of write shards the index's keys were counted
	// in, 0 when not sharded.
	Sharded int
	// Top are the keys with the highest per-window maximum, hottest first
	// (at most the number asked for), each with that maximum per second.
	Top []Units
}

// Reports returns one Report per table and index of the model's tables that
// was written, in the order of the specs (a table, then its indexes), each
// with its top keys. With shardedIndexes (and Shard called), every index is
// reported as counted write-sharded.
func (m *Model) Reports(tables []schema.Table, top int, shardedIndexes bool) []Report {
	var out []Report
	seconds := float64(m.last+1) * m.window.Seconds()
	perSec := 1 / m.window.Seconds()
	for _, spec := range tables {
		targets := []target{{spec.Logical, ""}}
		for _, ix := range spec.Indexes {
			name := ix.Name
			if shardedIndexes {
				name = sharded(name)
			}
			targets = append(targets, target{spec.Logical, name})
		}
		for _, t := range targets {
			keys, ok := m.units[t]
			if !ok {
				continue
			}
			index, _, _ := strings.Cut(t.index, "\x00")
			r := Report{Table: t.table, Index: index, Keys: len(keys), TotalPerSecond: m.total[t] / seconds}
			var all []Units
			for k, wins := range keys {
				best, bestWin, sum := 0.0, int64(0), 0.0
				for w, u := range wins {
					sum += u
					if u > best || u == best && w < bestWin {
						best, bestWin = u, w
					}
				}
				all = append(all, Units{Table: t.table, Index: index, Key: k, Units: best * perSec})
				if best*perSec > r.Max || best*perSec == r.Max && k < r.Hot {
					r.Max, r.Hot, r.MaxWindow, r.MeanOfHot = best*perSec, k, bestWin, sum/seconds
				}
			}
			slices.SortFunc(all, func(a, b Units) int {
				return cmp.Or(cmp.Compare(b.Units, a.Units), strings.Compare(a.Key, b.Key))
			})
			r.Top = all[:min(top, len(all))]
			out = append(out, r)
		}
	}
	return out
}

// Seconds is how long the recorded traffic lasted, in whole windows.
func (m *Model) Seconds() float64 { return float64(m.last+1) * m.window.Seconds() }

// Format renders reports as a Markdown table: table, index, keys, total
// units per second, the hottest key's maximum and mean per second, and the
// hottest key, marking maxima over PartitionLimit.
func Format(reports []Report) string {
	var b strings.Builder
	b.WriteString("| table | index | keys | WCU/s (all keys) | max WCU/s on one key (1 s) | its mean WCU/s | hottest key |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, r := range reports {
		ix := r.Index
		if ix == "" {
			ix = "(table)"
		}
		if r.Sharded > 0 {
			ix += fmt.Sprintf(" (sharded x%d)", r.Sharded)
		}
		over := ""
		if r.Max > PartitionLimit {
			over = " **over**"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.0f%s | %.0f | `%s` |\n", r.Table, ix, r.Keys, r.TotalPerSecond, r.Max, over, r.MeanOfHot, r.Hot)
	}
	return b.String()
}

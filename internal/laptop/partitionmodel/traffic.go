package partitionmodel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Traffic configures a simulated stream and its deployed batching.
type Traffic struct {
	// Seed selects the simulate workload.
	Seed int64
	// Rate is events per second (simulate's Rate); Seconds how many
	// seconds of traffic are simulated (Rate*Seconds events).
	Rate, Seconds int
	// Mix weighs the domains (zero: simulate.DefaultMix).
	Mix simulate.Mix
	// Shards is how many stream shards the events are spread over, by a
	// hash of the event table's partition key (the subject). Default 16.
	Shards int
	// BatchSize and BatchWindow are the event source mapping's: a shard's
	// batch is handed to the projector when it holds BatchSize records or
	// BatchWindow after its first record arrived. Defaults 500 and 1 s
	// (terraform/variables.tf projector_batch_size and
	// projector_batching_window_seconds).
	BatchSize   int
	BatchWindow time.Duration
	// Chunk is the length, in seconds, of the slices the traffic is
	// simulated in (default 5; see Run).
	Chunk int
	// Projector configures the projector (Concurrency is forced to 1 so the
	// run is deterministic).
	Projector projector.Config
}

// Stats counts what a run did.
type Stats struct {
	Events, Duplicates, Skipped, Batches int
	Commits, Conflicts                   int
	// Failed and Poison count subjects the projector could not apply;
	// a valid workload has none.
	Failed, Poison int
}

// SetDefaults fills the zero fields.
func (c *Traffic) SetDefaults() {
	c.Shards = cmp.Or(c.Shards, 16)
	c.BatchSize = cmp.Or(c.BatchSize, 500)
	c.BatchWindow = cmp.Or(c.BatchWindow, time.Second)
	c.Chunk = cmp.Or(c.Chunk, 5)
}

// Validate names the bad field.
func (c Traffic) Validate() error {
	switch {
	case c.Rate < 1 || c.Rate > simulate.MaxRate:
		return fmt.Errorf("partitionmodel: Traffic.Rate: must be between 1 and %d, got %d", simulate.MaxRate, c.Rate)
	case c.Seconds < 1:
		return fmt.Errorf("partitionmodel: Traffic.Seconds: must be at least 1, got %d", c.Seconds)
	case c.Shards < 1:
		return fmt.Errorf("partitionmodel: Traffic.Shards: must be at least 1, got %d", c.Shards)
	case c.BatchSize < 1:
		return fmt.Errorf("partitionmodel: Traffic.BatchSize: must be at least 1, got %d", c.BatchSize)
	case c.Chunk < 1:
		return fmt.Errorf("partitionmodel: Traffic.Chunk: must be at least 1, got %d", c.Chunk)
	case c.BatchWindow <= 0:
		return fmt.Errorf("partitionmodel: Traffic.BatchWindow: must be positive, got %s", c.BatchWindow)
	}
	return nil
}

// Run simulates the traffic: simulate's events arrive at Rate per second
// (event i at i/Rate s) and are appended to the event table (a redelivered
// event is a refused conditional put); each shard's batches go through a
// projector on a recording MemStore, whose writes all happen at the
// moment the batch is handed over. Every write, to the event table, the
// aggregates, the counter rows and the projection items with their
// indexes, is recorded into each of ms. Batches are projected one at a time in the
// order they are handed over, so a run is deterministic.
func Run(ctx context.Context, c Traffic, ms ...*Model) (Stats, error) {
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return Stats{}, err
	}
	pc := c.Projector
	pc.Concurrency = 1
	store := &recorder{mem: projector.NewMemStore(), ms: ms}
	proj, err := projector.New(store, pc)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	type batch struct {
		first  time.Duration
		inputs []projector.Input
	}
	open := make([]*batch, c.Shards)
	flush := func(shard int, at time.Duration) error {
		b := open[shard]
		open[shard] = nil
		store.now = at
		st.Batches++
		out := proj.Project(ctx, b.inputs)
		st.Commits += out.Commits
		st.Conflicts += out.Conflicts
		st.Failed += len(out.Failed)
		st.Poison += len(out.Poison)
		if store.err != nil {
			return store.err
		}
		for s, err := range out.Failed {
			return fmt.Errorf("partitionmodel: %s failed: %w", s, err)
		}
		return nil
	}
	// flushDue hands over, in time order, the batches whose window ended
	// at or before t.
	flushDue := func(t time.Duration, all bool) error {
		for {
			shard, due := -1, time.Duration(0)
			for i, b := range open {
				if b == nil {
					continue
				}
				end := b.first + c.BatchWindow
				if (all || end <= t) && (shard < 0 || end < due) {
					shard, due = i, end
				}
			}
			if shard < 0 {
				return nil
			}
			if err := flush(shard, due); err != nil {
				return err
			}
		}
	}
	seen := map[string]bool{}
	var latest time.Time
	i := 0
	emit := func(e schema.Event) error {
		at := time.Duration(i) * time.Second / time.Duration(c.Rate)
		i++
		if err := flushDue(at, false); err != nil {
			return err
		}
		st.Events++
		if e.Time.After(latest) {
			latest = e.Time
		}
		rec := latest // recorded no earlier than any event so far
		e.RecordedAt = &rec
		item, err := schema.Item(e, schema.EventRetentionDays*24*time.Hour)
		if err != nil {
			return err
		}
		id := e.Subject + "\x00" + e.ID
		if seen[id] {
			st.Duplicates++
			store.record(Write{At: at, Table: schema.TableEvents, Old: item, New: item, Refused: true})
			return store.err
		}
		seen[id] = true
		if store.record(Write{At: at, Table: schema.TableEvents, New: item}); store.err != nil {
			return store.err
		}
		in, ok, err := projector.InputOf(e, fmt.Sprintf("%021d", i))
		if err != nil || !ok {
			st.Skipped++
			return nil
		}
		shard := ShardOf(e.Subject, c.Shards)
		if open[shard] == nil {
			open[shard] = &batch{first: at}
		}
		open[shard].inputs = append(open[shard].inputs, in)
		if len(open[shard].inputs) >= c.BatchSize {
			return flush(shard, at)
		}
		return nil
	}
	// simulate keeps the events of a slice that are not yet emitted, and
	// at 10,000 events/s most of a slice is in flight: the traffic is
	// simulated in slices of Chunk seconds, each a workload of its own
	// (seed Seed+k) on the same day, one after the other.
	for k := 0; k*c.Chunk < c.Seconds; k++ {
		secs := min(c.Chunk, c.Seconds-k*c.Chunk)
		sim := simulate.Config{Seed: c.Seed + int64(k), Events: c.Rate * secs, Days: 1, Mix: c.Mix, Rate: c.Rate}
		if _, err := simulate.Stream(sim, emit); err != nil {
			return st, err
		}
	}
	return st, flushDue(0, true)
}

// ShardOf is the stream shard of an event table partition key: FNV-1a of
// the key, modulo shards.
func ShardOf(key string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(shards))
}

// recorder is a projector.Store on a MemStore that records every write it
// makes, with the item before and after, into a Model at time now.
type recorder struct {
	mem *projector.MemStore
	ms  []*Model
	now time.Duration
	err error // the first recording error
}

func (r *recorder) Load(ctx context.Context, subjects []string, consistent bool) (map[string]projector.StoredState, error) {
	return r.mem.Load(ctx, subjects, consistent)
}

func (r *recorder) LoadRows(ctx context.Context, rows []projector.RowRef, consistent bool) (map[string]projector.Row, error) {
	return r.mem.LoadRows(ctx, rows, consistent)
}

func (r *recorder) ItemVersions(ctx context.Context, items []projector.Item) ([]int64, error) {
	return r.mem.ItemVersions(ctx, items)
}

func (r *recorder) record(w Write) {
	for _, m := range r.ms {
		if err := m.Record(w); err != nil && r.err == nil {
			r.err = err
		}
	}
}

func keyOf(table string, item map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	spec, ok := schema.TableSpec(table)
	if !ok {
		return nil, fmt.Errorf("partitionmodel: unknown table %q", table)
	}
	key, ok := spec.Key(item)
	if !ok {
		return nil, fmt.Errorf("partitionmodel: %s item without its key", table)
	}
	return key, nil
}

func (r *recorder) Commit(ctx context.Context, tx projector.Tx) error {
	oldStates := make([]int, len(tx.States))
	for i, p := range tx.States {
		oldStates[i] = r.mem.StateBytes(p.Subject)
	}
	keys := make([]map[string]types.AttributeValue, len(tx.Rows))
	olds := make([]map[string]types.AttributeValue, len(tx.Rows))
	for i, p := range tx.Rows {
		key, err := keyOf(p.Table, p.Item)
		if err != nil {
			return err
		}
		keys[i] = key
		if olds[i], err = r.mem.Get(ctx, p.Table, key); err != nil {
			return err
		}
	}
	if err := r.mem.Commit(ctx, tx); err != nil {
		// A refused commit (a version conflict) is charged by DynamoDB
		// too; the sequential runs of this package have none.
		return err
	}
	inTx := tx.Actions() > 1
	for i, p := range tx.States {
		key := map[string]types.AttributeValue{"subject": &types.AttributeValueMemberS{Value: p.Subject}}
		var old map[string]types.AttributeValue
		if oldStates[i] > 0 {
			old = key
		}
		r.record(Write{At: r.now, Table: schema.TableAggregates, Old: old, New: key, OldSize: oldStates[i], NewSize: r.mem.StateBytes(p.Subject), Tx: inTx})
	}
	for i, p := range tx.Rows {
		cur, err := r.mem.Get(ctx, p.Table, keys[i])
		if err != nil {
			return err
		}
		r.record(Write{At: r.now, Table: p.Table, Old: olds[i], New: cur, Tx: inTx})
	}
	return nil
}

func (r *recorder) PutItems(ctx context.Context, owner string, version int64, items []projector.Item) error {
	for _, it := range items {
		key, err := keyOf(it.Table, it.Item)
		if err != nil {
			return err
		}
		old, err := r.mem.Get(ctx, it.Table, key)
		if err != nil {
			return err
		}
		if err := r.mem.PutItems(ctx, owner, version, []projector.Item{it}); err != nil {
			return err
		}
		cur, err := r.mem.Get(ctx, it.Table, key)
		if err != nil {
			return err
		}
		if old != nil && itemVersion(old) > version {
			// The stored item is newer: the conditional put was refused.
			r.record(Write{At: r.now, Table: it.Table, Old: old, New: it.Item, Refused: true})
			continue
		}
		r.record(Write{At: r.now, Table: it.Table, Old: old, New: cur})
	}
	return nil
}

func itemVersion(it map[string]types.AttributeValue) int64 {
	n, ok := it[schema.AttrItemVersion].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	var v int64
	if _, err := fmt.Sscan(n.Value, &v); err != nil {
		return 0
	}
	return v
}

// Simulate runs the traffic into a model of schema.Tables() with 1 s
// windows whose indexes are also counted write-sharded into gsiShards
// (none when 0), and returns the reports of the indexes as they are
// (before) and write-sharded (after: each index whose hottest key took more
// than ShardAbove before is reported sharded, the others as before), with
// the top keys of each, and the run's counts.
func Simulate(ctx context.Context, c Traffic, top, gsiShards int) (before, after []Report, st Stats, err error) {
	m := New(schema.Tables(), time.Second)
	if gsiShards > 0 {
		m.Shard(gsiShards)
	}
	if st, err = Run(ctx, c, m); err != nil {
		return nil, nil, st, err
	}
	before = m.Reports(schema.Tables(), top, false)
	if len(before) == 0 {
		return nil, nil, st, errors.New("partitionmodel: no writes recorded")
	}
	if gsiShards == 0 {
		return before, nil, st, nil
	}
	shardedReps := map[[2]string]Report{}
	for _, r := range m.Reports(schema.Tables(), top, true) {
		shardedReps[[2]string{r.Table, r.Index}] = r
	}
	for _, r := range before {
		if s, ok := shardedReps[[2]string{r.Table, r.Index}]; ok && r.Index != "" && r.Max > ShardAbove {
			r = s
			r.Sharded = gsiShards
		}
		after = append(after, r)
	}
	return before, after, st, nil
}

// ShardAbove is the hottest-key rate above which Simulate's "after" shards
// an index: half the partition limit, leaving room to double the traffic.
const ShardAbove = PartitionLimit / 2

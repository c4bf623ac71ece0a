package projector

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/schema"
)

// Input is one decoded, validated event with its stream position.
type Input struct {
	Seq     string
	Event   schema.Event
	Payload schema.Payload
	Kind    AggregateKind
}

// Config configures a Projector.
type Config struct {
	// Concurrency is how many commits run at once. Default 4.
	Concurrency int
	// ConflictRetries is how often an aggregate is reloaded and folded again
	// after a version conflict before it counts as failed. Default 8.
	ConflictRetries int
	// ConflictBackoff is the longest first pause before an attempt after a
	// conflict; pauses double per attempt (at most 1 s) with full jitter,
	// so that projectors contending for one hot counter row spread out.
	// Default 10 ms.
	ConflictBackoff time.Duration
	// RetentionDays, when positive, replaces the tables' TTLDays in the
	// expiry of every item and counter row with a TTL: they expire
	// RetentionDays after the latest recordedat of their aggregate's events
	// (see "Retention" in docs/projector.md). Zero keeps each table's.
	RetentionDays int
	// ExpiredBefore, when set, leaves out what would be born expired: items
	// whose expiry is at or before it, and contributions to counter rows
	// with a TTL whose expiry is (so a run summary counts exactly the jobs
	// it is projected with). Outcome.Expired counts the items left out.
	// Rebuilds of old history set it to the time they start; the stream
	// projector leaves it zero.
	ExpiredBefore time.Time
	// MaxFutureSkew is how far an event's time may be ahead of its
	// recordedat (when streamfold appended it). An event dated further
	// ahead is quarantined alone (Outcome.Quarantined, ErrFutureEvent):
	// it would win every last-writer attribute of its aggregate and date
	// counter rows in the future. Default 24 h (DefaultMaxFutureSkew), at
	// most MaxMaxFutureSkew.
	MaxFutureSkew time.Duration
	// GSIShards, when more than 1, writes AttrGSIShard (schema.ItemGSIShard,
	// a function of the primary key) on every item and counter row of a
	// table with a write-sharded index (schema.TablesFor). 0 or 1 (the
	// default) writes items exactly as the seeds do. See gsishard.go.
	GSIShards int
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	c.Concurrency = cmp.Or(c.Concurrency, 4)
	c.ConflictRetries = cmp.Or(c.ConflictRetries, 8)
	c.ConflictBackoff = cmp.Or(c.ConflictBackoff, 10*time.Millisecond)
	c.MaxFutureSkew = cmp.Or(c.MaxFutureSkew, DefaultMaxFutureSkew)
}

// Validate names the bad field.
func (c Config) Validate() error {
	if c.Concurrency < 1 || c.Concurrency > 64 {
		return fmt.Errorf("projector: Config.Concurrency: must be between 1 and 64, got %d", c.Concurrency)
	}
	if c.ConflictRetries < 1 {
		return fmt.Errorf("projector: Config.ConflictRetries: must be at least 1, got %d", c.ConflictRetries)
	}
	if c.ConflictBackoff < 0 {
		return fmt.Errorf("projector: Config.ConflictBackoff: must not be negative, got %s", c.ConflictBackoff)
	}
	if c.RetentionDays < 0 || c.RetentionDays > MaxRetentionDays {
		return fmt.Errorf("projector: Config.RetentionDays: must be between 0 (the tables' own) and %d, got %d", MaxRetentionDays, c.RetentionDays)
	}
	if c.MaxFutureSkew <= 0 || c.MaxFutureSkew > MaxMaxFutureSkew {
		return fmt.Errorf("projector: Config.MaxFutureSkew: must be more than 0 and at most %s, got %s", MaxMaxFutureSkew, c.MaxFutureSkew)
	}
	if err := schema.ValidateGSIShards("projector: Config.GSIShards", c.GSIShards); err != nil {
		return err
	}
	return nil
}

// MaxRetentionDays bounds Config.RetentionDays (ten years).
const MaxRetentionDays = 3660

// Projector folds batches of events into their aggregates and commits the
// resulting states, projection items and counter deltas through a Store.
// It is safe for concurrent use by batches of different shards.
type Projector struct {
	store Store
	cfg   Config
}

// New returns a Projector over store.
func New(store Store, cfg Config) (*Projector, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Projector{store: store, cfg: cfg}, nil
}

// Outcome reports one Project call.
type Outcome struct {
	// Failed maps a subject to why its events could not be applied this
	// time (throttling, conflicts that outlasted the retries): its inputs
	// must be delivered again.
	Failed map[string]error
	// Poison maps a subject to why its events can never be applied (its
	// state or an item would exceed DynamoDB's item limit, its item is owned
	// by another aggregate, its stored state cannot be decoded): its inputs
	// go to the dead letters, and no other subject is held back by them.
	Poison map[string]error
	// Changed and Unchanged count aggregates whose state did or did not
	// change (unchanged: every event was already applied).
	Changed, Unchanged int
	// Commits counts successful commits (single writes and transactions);
	// Conflicts counts commits refused for a version conflict.
	Commits, Conflicts int
	// Expired counts the items left out as born expired
	// (Config.ExpiredBefore).
	Expired int
	// Quarantined maps the index (in Project's inputs) of each input that
	// can never be applied, decided from the record alone (an event dated
	// more than Config.MaxFutureSkew ahead of its recordedat, a task whose
	// id is its execution's), to why. Each goes to the dead letters alone;
	// the other inputs of its subject are projected without it.
	Quarantined map[int]error
	// Late counts inputs not projected because they were recorded at or
	// after their aggregate's expiry (see "Late events" in
	// docs/projector.md): the archive keeps them, no item or row moves.
	Late int
}

// plan is one aggregate's planned writes.
type plan struct {
	subject string
	// state is the new state; nil when the aggregate is unchanged.
	state *StatePut
	// version is the state version the items are written from.
	version int64
	// items are the items to write (new, or changed by this change).
	items []Item
	// check are items not written now whose write may have failed after
	// an earlier commit (the aggregate's records are being delivered
	// again); checkAt is the version each was last written from. A check
	// reads their versions and rewrites the ones older than that.
	check   []Item
	checkAt []int64
	// deltas are the counter rows the change moves (counters, or static
	// attributes learned), what to add to each.
	deltas []Contribution
	bytes  int
	// expired counts the items left out as born expired.
	expired int
	// late counts the inputs not applied: recorded at or after the
	// aggregate's expiry (retention.applyInTime).
	late int
}

// Project applies inputs. Inputs of one subject are folded in
// (recordedat, id) order, which a join allows and the late rule needs
// (late.go); subjects are independent. It never returns a partial application
// of one aggregate's counters: an aggregate's state and its counter deltas
// commit together or not at all, and its items follow the commit (a failed
// item write fails the subject, whose redelivery writes them again).
func (p *Projector) Project(ctx context.Context, inputs []Input) Outcome {
	out := Outcome{Failed: map[string]error{}, Poison: map[string]error{}, Quarantined: map[int]error{}}
	bySubject := map[string][]Input{}
	var subjects []string
	for i, in := range inputs {
		if err := admit(in, p.cfg.MaxFutureSkew); err != nil {
			out.Quarantined[i] = err
			continue
		}
		if _, ok := bySubject[in.Event.Subject]; !ok {
			subjects = append(subjects, in.Event.Subject)
		}
		bySubject[in.Event.Subject] = append(bySubject[in.Event.Subject], in)
	}
	ret := newRetention(p.cfg)
	expired, late := map[string]int{}, map[string]int{}
	pending := subjects
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if err := retry.Sleep(ctx, retry.Full(p.cfg.ConflictBackoff, time.Second, attempt)); err != nil {
				for _, s := range pending {
					out.Failed[s] = err
				}
				break
			}
		}
		if err := ctx.Err(); err != nil {
			for _, s := range pending {
				out.Failed[s] = err
			}
			break
		}
		// The first read may be stale (half the read cost); every write is
		// conditioned on the version read, so a stale read costs a retry,
		// which then reads strongly consistent.
		consistent := attempt > 0
		stored, err := p.store.Load(ctx, pending, consistent)
		if err != nil {
			for _, s := range pending {
				out.Failed[s] = err
			}
			break
		}
		var plans []plan
		for _, s := range pending {
			pl, err := fold(s, stored[s], bySubject[s], ret)
			expired[s], late[s] = pl.expired, pl.late
			switch {
			case err != nil:
				out.Poison[s] = err
			case pl.state == nil:
				out.Unchanged++
				plans = append(plans, pl)
			default:
				plans = append(plans, pl)
			}
		}
		r := p.commitAll(ctx, plans, consistent)
		out.Commits += r.commits
		out.Changed += r.changed
		out.Conflicts += len(r.conflicted)
		for s, err := range r.failed {
			out.Failed[s] = err
		}
		for s, err := range r.poison {
			out.Poison[s] = err
		}
		pending = pending[:0:0]
		for _, s := range r.conflicted {
			if attempt+1 >= p.cfg.ConflictRetries {
				out.Failed[s] = fmt.Errorf("%w: %s still conflicting after %d attempts", ErrConflict, s, attempt+1)
				continue
			}
			pending = append(pending, s)
		}
	}
	for _, n := range expired {
		out.Expired += n
	}
	for _, n := range late {
		out.Late += n
	}
	return out
}

// fold loads an aggregate from its stored state, applies inputs and plans
// the writes. The plan's state is nil when neither the state nor what it
// contributes changed.
//
// Items: a change writes the items that are new or changed, at the new
// version, and records per item the version it was last written from. An
// item write can fail after its commit; the subject's records then come
// back, the first of them already applied. So when an input changes
// nothing (a redelivery), the items not written now are checked: their
// stored versions are read and the stale ones rewritten.
func fold(subject string, stored StoredState, inputs []Input, ret retention) (plan, error) {
	kind := inputs[0].Kind
	agg := NewAggregate(kind)
	if agg == nil {
		return plan{}, fmt.Errorf("projector: %s: unknown aggregate kind %q", subject, kind)
	}
	if stored.Version > 0 {
		if stored.Kind != kind {
			return plan{}, fmt.Errorf("projector: %s: stored as %q, event folds into %q", subject, stored.Kind, kind)
		}
		if err := json.Unmarshal(stored.State, agg); err != nil {
			return plan{}, fmt.Errorf("projector: %s: decode stored state: %w", subject, err)
		}
	}
	storedItems, storedContrib := itemsOf(agg), contributionsOf(agg)
	oldContrib := ret.contributions(storedContrib)
	oldItemList, _ := ret.items(storedItems)
	oldItems := map[string]map[string]types.AttributeValue{}
	for _, it := range oldItemList {
		oldItems[ItemID(it.Table, it.Item)] = it.Item
	}
	applied := stored.Applied
	if !stored.HasApplied {
		// Written before applied contributions were recorded: what the
		// state contributes now is the best knowledge of what was applied,
		// with what an older projector applied for it to rows the
		// aggregate no longer moves.
		applied = oldContrib
		if lc, ok := agg.(legacyContributor); ok {
			applied = append(slices.Clip(applied), lc.legacyContributions()...)
		}
	}
	arrived := inputs
	inputs, late := ret.applyInTime(agg, inputs, storedItems, storedContrib)
	if len(inputs) == 0 {
		// Every input came after the aggregate expired: nothing is applied.
		return plan{subject: subject, version: stored.Version, late: late}, nil
	}
	// redelivered reports whether some input was already applied (a fold
	// of it alone into the stored state changes nothing): asked only when
	// an item is not rewritten, which single-item aggregates rarely have,
	// so the hot path pays nothing. The inputs are tried in arrival order,
	// where a redelivery's applied records come first (a failed batch comes
	// back from its first failed record), so a redelivery usually costs one
	// probe; not only the first, because the fold applies in (recordedat,
	// id) order and a record that arrived later can precede an applied one
	// there (events appended in one batch share their recordedat).
	redelivered := sync.OnceValue(func() bool {
		if stored.Version == 0 {
			return false
		}
		for _, in := range arrived {
			probe := NewAggregate(kind)
			if json.Unmarshal(stored.State, probe) != nil {
				return false
			}
			probe.Apply(in.Event, in.Payload)
			if b, err := marshalState(probe); err == nil && bytes.Equal(b, stored.State) {
				return true
			}
		}
		return false
	})
	state, err := marshalState(agg)
	if err != nil {
		return plan{}, fmt.Errorf("projector: %s: encode state: %w", subject, err)
	}
	contrib := ret.contributions(contributionsOf(agg))
	deltas, err := rowDeltas(applied, oldContrib, contrib)
	if err != nil {
		return plan{}, fmt.Errorf("projector: %s: %w", subject, err)
	}
	items, expired := ret.items(itemsOf(agg))
	for _, it := range items {
		if _, err := checkSize(it.Table+" item of "+subject, it.Item); err != nil {
			return plan{}, err
		}
		// An item DynamoDB would refuse (a key, a nesting level or a number
		// over its limits) is poison decided here, before the state and
		// counters commit, so that no counter counts what no item shows.
		if err := schema.CheckItem(it.Table, it.Item); err != nil {
			return plan{}, fmt.Errorf("projector: %s item of %s: %w", it.Table, subject, err)
		}
	}
	if stored.Version > 0 && bytes.Equal(state, stored.State) && len(deltas) == 0 {
		pl := plan{subject: subject, version: stored.Version, expired: expired, late: late}
		for _, it := range items {
			pl.check = append(pl.check, it)
			pl.checkAt = append(pl.checkAt, itemVersion(stored, ItemID(it.Table, it.Item)))
		}
		return pl, nil
	}
	next := stored.Version + 1
	pl := plan{subject: subject, version: next, deltas: deltas, expired: expired, late: late}
	versions := make(map[string]int64, len(items))
	for _, it := range items {
		id := ItemID(it.Table, it.Item)
		v, known := stored.ItemVersions[id]
		if old, ok := oldItems[id]; known && ok && sameItem(old, it.Item) {
			versions[id] = v
			if redelivered() {
				pl.check = append(pl.check, it)
				pl.checkAt = append(pl.checkAt, v)
			}
			continue
		}
		versions[id] = next
		pl.items = append(pl.items, it)
	}
	pl.state = &StatePut{StoredState: StoredState{Subject: subject, Kind: kind, State: state, Applied: contrib, HasApplied: true, ItemVersions: versions, Version: next}, Expected: stored.Version}
	si, err := stateItem(*pl.state)
	if err != nil {
		return plan{}, err
	}
	pl.state.rendered = si // the commit sends this item: compressed once
	pl.bytes = ItemSize(si)
	return pl, nil
}

// itemVersion is the version an item of a stored state was last written
// from (the state's own version when not recorded).
func itemVersion(st StoredState, id string) int64 {
	if v, ok := st.ItemVersions[id]; ok {
		return v
	}
	return st.Version
}

// legacyContributor is an aggregate whose older projectors moved counter
// rows it no longer moves (a job's run summary row, now summed on read from
// its run job items).
type legacyContributor interface{ legacyContributions() []Contribution }

// contributionsOf returns an aggregate's contributions through the test hook.
func contributionsOf(agg Aggregate) []Contribution {
	c := agg.Contributions()
	if contributionsHook != nil {
		c = contributionsHook(agg, c)
	}
	return c
}

// itemsOf returns an aggregate's items through the test hook.
func itemsOf(agg Aggregate) []Item {
	it := agg.Items()
	if itemsHook != nil {
		it = itemsHook(agg, it)
	}
	return it
}

// itemsHook, when set (tests only), rewrites every aggregate's items: with
// contributionsHook, a stand-in for a projector of another version.
var itemsHook func(Aggregate, []Item) []Item

// contributionsHook, when set (tests only), rewrites every aggregate's
// contributions: a stand-in for a deploy that changes the counting rules.
var contributionsHook func(Aggregate, []Contribution) []Contribution

// rowDeltas returns, per counter row, next's counters minus applied's,
// with next's attributes: the rows whose counters move, and the rows whose
// static attributes changed since prev (the previous state's
// contributions), e.g. a run's workflow name learned after its first job
// was counted. A counter whose scale changed (applied at one, next at
// another) is subtracted at the larger of the two (see scale.go).
func rowDeltas(applied, prev, next []Contribution) ([]Contribution, error) {
	rows := map[string]*Contribution{}
	var order []string
	get := func(c Contribution) *Contribution {
		id := c.RowID()
		r, ok := rows[id]
		if !ok {
			r = &Contribution{Table: c.Table, Key: c.Key, Counters: map[string]int64{}, Scale: map[string]int{}}
			rows[id] = r
			order = append(order, id)
		}
		return r
	}
	for _, c := range applied {
		r := get(c)
		for k, v := range c.Counters {
			if err := addCounter(r.Counters, r.Scale, k, -v, c.Scale[k]); err != nil {
				return nil, fmt.Errorf("row %s: %w", c.RowID(), err)
			}
		}
	}
	prevAttrs := map[string]map[string]types.AttributeValue{}
	for _, c := range prev {
		prevAttrs[c.RowID()] = c.Attrs
	}
	for _, c := range next {
		r := get(c)
		for k, v := range c.Counters {
			if err := addCounter(r.Counters, r.Scale, k, v, c.Scale[k]); err != nil {
				return nil, fmt.Errorf("row %s: %w", c.RowID(), err)
			}
		}
		r.Attrs, r.Stamps = c.Attrs, c.Stamps
	}
	sort.Strings(order)
	var out []Contribution
	for _, id := range order {
		r := rows[id]
		moved := false
		for _, v := range r.Counters {
			moved = moved || v != 0
		}
		pa, hadPrev := prevAttrs[id]
		if moved || len(r.Attrs) > 0 && (!hadPrev || !sameItem(pa, r.Attrs)) {
			out = append(out, *r)
		}
	}
	return out, nil
}

// sameItem reports whether two items are equal (numbers compared by value).
func sameItem(a, b map[string]types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	if eq, ok := sameScalars(a, b); ok {
		return eq
	}
	ja, errA := json.Marshal(canonicalItem(a))
	jb, errB := json.Marshal(canonicalItem(b))
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// commitResult is what commitAll did with one attempt's plans.
type commitResult struct {
	conflicted       []string
	failed, poison   map[string]error
	commits, changed int
}

// component is a set of plans that share counter rows (transitively): its
// transactions run one after another, each starting from the rows the
// previous one wrote, so that no two writes of one batch race for a row.
type component struct {
	plans []plan
	rows  []string
}

// components groups the plans that move counters by shared rows
// (union-find over row IDs); plans that move none are components of one.
func components(plans []plan) []component {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == x {
			return x
		}
		parent[x] = find(parent[x])
		return parent[x]
	}
	union := func(a, b string) {
		if _, ok := parent[a]; !ok {
			parent[a] = a
		}
		if _, ok := parent[b]; !ok {
			parent[b] = b
		}
		if ra, rb := find(a), find(b); ra != rb {
			parent[ra] = rb
		}
	}
	for _, pl := range plans {
		node := "s\x00" + pl.subject
		union(node, node)
		for _, d := range pl.deltas {
			union(node, "r\x00"+d.RowID())
		}
	}
	byRoot := map[string]*component{}
	var roots []string
	for _, pl := range plans {
		root := find("s\x00" + pl.subject)
		c, ok := byRoot[root]
		if !ok {
			c = &component{}
			byRoot[root] = c
			roots = append(roots, root)
		}
		c.plans = append(c.plans, pl)
	}
	out := make([]component, 0, len(roots))
	for _, root := range roots {
		c := byRoot[root]
		seen := map[string]bool{}
		for _, pl := range c.plans {
			for _, d := range pl.deltas {
				if id := d.RowID(); !seen[id] {
					seen[id] = true
					c.rows = append(c.rows, id)
				}
			}
		}
		out = append(out, *c)
	}
	return out
}

// txBudget leaves room under MaxTxBytes for the counter rows of a chunk.
const txBudget = MaxTxBytes - 512<<10

// chunks splits a component's changed plans into transactions of at most
// MaxTxActions actions (states plus distinct rows) and txBudget bytes.
func chunks(plans []plan) [][]plan {
	var out [][]plan
	var cur []plan
	rows := map[string]bool{}
	actions, bytes := 0, 0
	for _, pl := range plans {
		need := 1
		for _, d := range pl.deltas {
			if !rows[d.RowID()] {
				need++
			}
		}
		if len(cur) > 0 && (actions+need > MaxTxActions || bytes+pl.bytes > txBudget) {
			out = append(out, cur)
			cur, rows, actions, bytes = nil, map[string]bool{}, 0, 0
			need = 1 + len(pl.deltas)
		}
		cur = append(cur, pl)
		for _, d := range pl.deltas {
			rows[d.RowID()] = true
		}
		actions += need
		bytes += pl.bytes
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// commitAll commits the changed plans, component by component (side by
// side, bounded by Config.Concurrency), and writes the items of committed
// and unchanged aggregates.
func (p *Projector) commitAll(ctx context.Context, plans []plan, consistent bool) commitResult {
	res := commitResult{failed: map[string]error{}, poison: map[string]error{}}
	var mu sync.Mutex
	fail := func(pls []plan, err error) {
		mu.Lock()
		defer mu.Unlock()
		for _, pl := range pls {
			switch {
			case errors.Is(err, ErrConflict):
				res.conflicted = append(res.conflicted, pl.subject)
			case IsPermanent(err):
				res.poison[pl.subject] = err
			default:
				res.failed[pl.subject] = err
			}
		}
	}
	putItems := func(pl plan) {
		if len(pl.items) == 0 {
			return
		}
		if err := p.store.PutItems(ctx, pl.subject, pl.version, pl.items); err != nil {
			fail([]plan{pl}, err)
		}
	}
	// Redelivered aggregates: rewrite the items whose write failed after
	// their commit, found by the version they were written from (a read of
	// the items, no write when they are right). A changed aggregate checks
	// only after its own commit succeeded.
	checkItems := func(pls []plan) {
		var probe []Item
		var with []plan
		for _, pl := range pls {
			if len(pl.check) > 0 {
				with = append(with, pl)
				probe = append(probe, pl.check...)
			}
		}
		if len(probe) == 0 {
			return
		}
		versions, err := p.store.ItemVersions(ctx, probe)
		if err != nil {
			fail(with, err)
			return
		}
		i := 0
		for _, pl := range with {
			for j, it := range pl.check {
				if versions[i] < pl.checkAt[j] {
					if err := p.store.PutItems(ctx, pl.subject, pl.checkAt[j], []Item{it}); err != nil {
						fail([]plan{pl}, err)
					}
				}
				i++
			}
		}
	}
	var changed []plan
	refs := map[string]RowRef{}
	for _, pl := range plans {
		if pl.state != nil {
			changed = append(changed, pl)
			for _, d := range pl.deltas {
				refs[d.RowID()] = RowRef{Table: d.Table, Key: d.Key}
			}
		}
	}
	var rows map[string]Row
	if len(refs) > 0 {
		list := make([]RowRef, 0, len(refs))
		for _, id := range sortedKeys(refs) {
			list = append(list, refs[id])
		}
		var err error
		if rows, err = p.store.LoadRows(ctx, list, consistent); err != nil {
			fail(changed, err)
			changed = nil
		}
	}
	sem := make(chan struct{}, p.cfg.Concurrency)
	var wg sync.WaitGroup
	goBounded := func(f func()) {
		if p.cfg.Concurrency == 1 {
			// One at a time: each would wait for the previous one to
			// finish anyway, so run it here, without a goroutine and the
			// two wake-ups of handing it over.
			f()
			return
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f()
		}()
	}
	for _, c := range components(changed) {
		local := map[string]Row{}
		for _, id := range c.rows {
			if r, ok := rows[id]; ok {
				local[id] = r
			}
		}
		goBounded(func() {
			parts := chunks(c.plans)
			for i, part := range parts {
				part, over := dropOversizeRows(part, local)
				parts[i] = part
				for s, err := range over {
					mu.Lock()
					res.poison[s] = err
					mu.Unlock()
				}
				if len(part) == 0 {
					continue
				}
				tx, next, err := buildTx(part, local)
				if err == nil {
					err = p.store.Commit(ctx, tx)
				}
				if err != nil {
					if IsPermanent(err) && len(part) > 1 {
						// Not this chunk's fault as a whole: commit its
						// aggregates one by one in the next attempt.
						err = fmt.Errorf("%w: %w", ErrConflict, err)
					}
					for _, rest := range parts[i:] {
						fail(rest, err)
					}
					return
				}
				for id, r := range next {
					local[id] = r
				}
				mu.Lock()
				res.commits++
				res.changed += len(part)
				mu.Unlock()
				for _, pl := range part {
					putItems(pl)
				}
				checkItems(part)
			}
		})
	}
	var unchanged []plan
	for _, pl := range plans {
		if pl.state == nil {
			unchanged = append(unchanged, pl)
		}
	}
	goBounded(func() { checkItems(unchanged) })
	wg.Wait()
	sort.Strings(res.conflicted)
	return res
}

// buildTx renders one chunk: its states, and each row it moves as the row
// read (or written by the previous chunk) plus the chunk's merged deltas.
// next is what the rows will be once the commit succeeds.
func buildTx(part []plan, rows map[string]Row) (Tx, map[string]Row, error) {
	var tx Tx
	merged := map[string]*Contribution{}
	var order []string
	for _, pl := range part {
		tx.States = append(tx.States, *pl.state)
		for _, d := range pl.deltas {
			id := d.RowID()
			acc, ok := merged[id]
			if !ok {
				acc = &Contribution{Table: d.Table, Key: d.Key}
				merged[id] = acc
				order = append(order, id)
			}
			if err := mergeRowDelta(acc, d); err != nil {
				return Tx{}, nil, err
			}
		}
	}
	sort.Strings(order)
	next := map[string]Row{}
	for _, id := range order {
		d := merged[id]
		cur := rows[id]
		item, err := nextRow(d.Table, cur.Item, *d)
		if err != nil {
			return Tx{}, nil, err
		}
		tx.Rows = append(tx.Rows, RowPut{Table: d.Table, Item: item, Expected: cur.Version})
		stored := copyItem(item)
		stored[schema.AttrRowVersion] = avN(cur.Version + 1)
		next[id] = Row{Table: d.Table, Key: d.Key, Item: stored, Version: cur.Version + 1}
	}
	return tx, next, nil
}

// sameScalars compares two items of strings (the usual counter-row
// attributes) without rendering them; ok is false when another type is
// involved.
func sameScalars(a, b map[string]types.AttributeValue) (eq, ok bool) {
	for k, va := range a {
		sa, isS := va.(*types.AttributeValueMemberS)
		if !isS {
			return false, false
		}
		vb, present := b[k]
		if !present {
			return false, true
		}
		sb, isS := vb.(*types.AttributeValueMemberS)
		if !isS {
			return false, false
		}
		if sa.Value != sb.Value {
			return false, true
		}
	}
	return true, true
}

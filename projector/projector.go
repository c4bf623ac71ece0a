package projector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	// after a version conflict before it counts as failed. Default 5.
	ConflictRetries int
	// DeriveAttempts is how often a failed derive of a counter row is
	// tried, with doubling pauses from DeriveBackoff, before the aggregates
	// contributing to it fail (and are repaired by their redelivery).
	// Default 4.
	DeriveAttempts int
	// DeriveBackoff is the first pause between derive attempts. Default
	// 20 ms.
	DeriveBackoff time.Duration
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.ConflictRetries == 0 {
		c.ConflictRetries = 5
	}
	if c.DeriveAttempts == 0 {
		c.DeriveAttempts = 4
	}
	if c.DeriveBackoff == 0 {
		c.DeriveBackoff = 20 * time.Millisecond
	}
}

// Validate names the bad field.
func (c Config) Validate() error {
	if c.Concurrency < 1 || c.Concurrency > 64 {
		return fmt.Errorf("projector: Config.Concurrency: must be between 1 and 64, got %d", c.Concurrency)
	}
	if c.ConflictRetries < 1 {
		return fmt.Errorf("projector: Config.ConflictRetries: must be at least 1, got %d", c.ConflictRetries)
	}
	if c.DeriveAttempts < 1 {
		return fmt.Errorf("projector: Config.DeriveAttempts: must be at least 1, got %d", c.DeriveAttempts)
	}
	if c.DeriveBackoff < 0 {
		return fmt.Errorf("projector: Config.DeriveBackoff: must not be negative, got %s", c.DeriveBackoff)
	}
	return nil
}

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
	// Failed maps a subject to why its events could not be applied; its
	// inputs must be delivered again.
	Failed map[string]error
	// Changed and Unchanged count aggregates whose state did or did not
	// change (unchanged: every event was already applied).
	Changed, Unchanged int
	// Commits counts successful commits.
	Commits int
	// DeriveErrors counts derived-attribute updates that failed. The
	// counters are exact regardless (see DeriveRow); the subjects that
	// contribute to such a row are in Failed, so that their redelivery
	// derives the row again.
	DeriveErrors int
}

// plan is one aggregate's planned writes.
type plan struct {
	subject string
	state   StatePut
	items   []Item
	deltas  []Contribution
	// rederive lists the counter rows with derived attributes that the
	// aggregate contributes to now. They are derived after every commit of
	// the aggregate and also when it is unchanged (every input already
	// applied), even where its counters did not move: a redelivery, with
	// or without new events of the aggregate, thus repairs a derive that
	// failed after an earlier commit.
	rederive []Contribution
}

func (p plan) actions() int { return 1 + len(p.items) + len(p.deltas) }

// Project applies inputs. Inputs of one subject are folded in the given
// order; subjects are independent. It never returns a partial application
// of one aggregate: an aggregate's state, items and counter deltas commit
// together or not at all.
func (p *Projector) Project(ctx context.Context, inputs []Input) Outcome {
	out := Outcome{Failed: map[string]error{}}
	bySubject := map[string][]Input{}
	var subjects []string
	for _, in := range inputs {
		if _, ok := bySubject[in.Event.Subject]; !ok {
			subjects = append(subjects, in.Event.Subject)
		}
		bySubject[in.Event.Subject] = append(bySubject[in.Event.Subject], in)
	}
	pending := subjects
	for attempt := 0; len(pending) > 0; attempt++ {
		if err := ctx.Err(); err != nil {
			for _, s := range pending {
				out.Failed[s] = err
			}
			break
		}
		stored, err := p.store.Load(ctx, pending)
		if err != nil {
			for _, s := range pending {
				out.Failed[s] = err
			}
			break
		}
		var plans, unchanged []plan
		for _, s := range pending {
			pl, changed, err := fold(s, stored[s], bySubject[s])
			switch {
			case err != nil:
				out.Failed[s] = err
			case !changed:
				out.Unchanged++
				unchanged = append(unchanged, pl)
			default:
				plans = append(plans, pl)
			}
		}
		conflicted, committed, changed, deriveErrs := p.commitAll(ctx, plans, unchanged, out.Failed)
		out.Commits += committed
		out.Changed += changed
		out.DeriveErrors += deriveErrs
		pending = pending[:0:0]
		for _, s := range conflicted {
			if attempt+1 >= p.cfg.ConflictRetries {
				out.Failed[s] = fmt.Errorf("%w: %s still conflicting after %d attempts", ErrConflict, s, attempt+1)
				continue
			}
			pending = append(pending, s)
		}
	}
	return out
}

// fold loads an aggregate from its stored state, applies inputs and plans
// the writes. changed is false when the state did not change.
func fold(subject string, stored StoredState, inputs []Input) (plan, bool, error) {
	kind := inputs[0].Kind
	agg := NewAggregate(kind)
	if agg == nil {
		return plan{}, false, fmt.Errorf("projector: %s: unknown aggregate kind %q", subject, kind)
	}
	if stored.Version > 0 {
		if stored.Kind != kind {
			return plan{}, false, fmt.Errorf("projector: %s: stored as %q, event folds into %q", subject, stored.Kind, kind)
		}
		if err := json.Unmarshal(stored.State, agg); err != nil {
			return plan{}, false, fmt.Errorf("projector: %s: decode stored state: %w", subject, err)
		}
	}
	oldItems, oldContrib := agg.Items(), agg.Contributions()
	for _, in := range inputs {
		agg.Apply(in.Event, in.Payload)
	}
	state, err := json.Marshal(agg)
	if err != nil {
		return plan{}, false, fmt.Errorf("projector: %s: encode state: %w", subject, err)
	}
	contrib := agg.Contributions()
	var rederive []Contribution
	for _, c := range contrib {
		if derivable(c.Table) {
			rederive = append(rederive, c)
		}
	}
	if stored.Version > 0 && bytes.Equal(state, stored.State) {
		return plan{subject: subject, rederive: rederive}, false, nil
	}
	pl := plan{
		subject:  subject,
		state:    StatePut{StoredState: StoredState{Subject: subject, Kind: kind, State: state, Version: stored.Version + 1}, Expected: stored.Version},
		items:    changedItems(oldItems, agg.Items()),
		deltas:   Diff(oldContrib, contrib),
		rederive: rederive,
	}
	if pl.actions() > MaxTxActions {
		return plan{}, false, fmt.Errorf("projector: %s: needs %d writes, more than one transaction holds (%d)", subject, pl.actions(), MaxTxActions)
	}
	return pl, true, nil
}

// changedItems returns the items of next that are new or differ from prev.
func changedItems(prev, next []Item) []Item {
	old := map[string]map[string]types.AttributeValue{}
	for _, it := range prev {
		old[it.Table+"\x00"+keyString(keyOf(it.Table, it.Item))] = it.Item
	}
	var out []Item
	for _, it := range next {
		if o, ok := old[it.Table+"\x00"+keyString(keyOf(it.Table, it.Item))]; ok && sameItem(o, it.Item) {
			continue
		}
		out = append(out, it)
	}
	return out
}

func sameItem(a, b map[string]types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	ja, errA := json.Marshal(canonicalItem(a))
	jb, errB := json.Marshal(canonicalItem(b))
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// Diff returns next minus prev per counter row: what to ADD so that rows
// that held prev's contributions hold next's. Rows whose counters do not
// change are omitted.
func Diff(prev, next []Contribution) []Contribution {
	var sums counterRows
	prevAttrs := map[string]map[string]types.AttributeValue{}
	for _, c := range prev {
		if r, created := sums.add(c, -1); created {
			r.Attrs = c.Attrs
		}
		prevAttrs[c.RowID()] = c.Attrs
	}
	for _, c := range next {
		r, _ := sums.add(c, 1)
		r.Attrs = c.Attrs
	}
	return sums.sorted(func(id string, r *Contribution, moved bool) bool {
		// A row is also written when its static attributes changed (e.g.
		// a run's workflow name learned after its first job was counted).
		pa, hadPrev := prevAttrs[id]
		return moved || hadPrev && len(r.Attrs) > 0 && !sameItem(pa, r.Attrs)
	})
}

// mergeDeltas sums deltas of the same row. Unlike Diff it keeps a row whose
// counters net to zero when it carries attributes: such a delta exists to
// set static attributes (e.g. a run's workflow name learned after a runner
// event already counted its job) and must not be dropped.
func mergeDeltas(ds []Contribution) []Contribution {
	var sums counterRows
	for _, d := range ds {
		r, _ := sums.add(d, 1)
		if len(d.Attrs) > 0 {
			if r.Attrs == nil {
				r.Attrs = map[string]types.AttributeValue{}
			}
			for k, v := range d.Attrs {
				r.Attrs[k] = v
			}
		}
	}
	return sums.sorted(func(_ string, r *Contribution, moved bool) bool {
		return moved || len(r.Attrs) > 0
	})
}

// counterRows sums contributions per counter row: the skeleton of Diff and
// mergeDeltas, which differ in how they treat attributes and which rows
// they keep.
type counterRows struct {
	rows  map[string]*Contribution
	order []string
}

// add adds sign times c's counters to c's row and takes c's scales. A row
// seen first is created without attributes; created reports that.
func (s *counterRows) add(c Contribution, sign int64) (r *Contribution, created bool) {
	id := c.RowID()
	r, ok := s.rows[id]
	if !ok {
		if s.rows == nil {
			s.rows = map[string]*Contribution{}
		}
		r = &Contribution{Table: c.Table, Key: c.Key, Counters: map[string]int64{}, Scale: map[string]int{}}
		s.rows[id] = r
		s.order = append(s.order, id)
	}
	for k, v := range c.Counters {
		r.Counters[k] += sign * v
	}
	for k, v := range c.Scale {
		r.Scale[k] = v
	}
	return r, !ok
}

// sorted returns, in RowID order, the rows keep accepts; moved tells keep
// whether any counter of the row is non-zero.
func (s *counterRows) sorted(keep func(id string, r *Contribution, moved bool) bool) []Contribution {
	sort.Strings(s.order)
	var out []Contribution
	for _, id := range s.order {
		r := s.rows[id]
		moved := false
		for _, v := range r.Counters {
			moved = moved || v != 0
		}
		if keep(id, r, moved) {
			out = append(out, *r)
		}
	}
	return out
}

// derive sets the derived attributes of one counter row, trying up to
// DeriveAttempts times. A row the aggregate no longer contributes to (it
// moved, e.g. an album execution whose start date was learned late) is
// derived only here, not on redelivery, so transient failures are retried
// in place first.
func (p *Projector) derive(ctx context.Context, d Contribution) error {
	pause := p.cfg.DeriveBackoff
	var err error
	for attempt := 1; ; attempt++ {
		err = p.store.Derive(ctx, d.Table, d.Key, sortedKeys(d.Counters), func(row map[string]types.AttributeValue) map[string]types.AttributeValue {
			return DeriveRow(d.Table, row)
		})
		if err == nil || attempt >= p.cfg.DeriveAttempts {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause *= 2
	}
}

// commitAll packs plans into transactions of at most MaxTxActions (merging
// counter deltas per row inside a transaction) and commits them with
// bounded concurrency, then derives the attributes of the counter rows that
// the commits changed or that unchanged aggregates contribute to. Subjects
// of conflicting transactions are returned for another attempt; other
// failures, a failed derive included, are recorded in failed.
func (p *Projector) commitAll(ctx context.Context, plans, unchanged []plan, failed map[string]error) (conflicted []string, commits, changed, deriveErrs int) {
	type group struct {
		plans []plan
		tx    Tx
	}
	var groups []group
	var cur group
	rowsInCur := map[string]bool{}
	flush := func() {
		if len(cur.plans) == 0 {
			return
		}
		var deltas []Contribution
		for _, pl := range cur.plans {
			cur.tx.States = append(cur.tx.States, pl.state)
			cur.tx.Items = append(cur.tx.Items, pl.items...)
			deltas = append(deltas, pl.deltas...)
		}
		cur.tx.Deltas = mergeDeltas(deltas)
		groups = append(groups, cur)
		cur = group{}
		rowsInCur = map[string]bool{}
	}
	actions := 0
	for _, pl := range plans {
		need := 1 + len(pl.items)
		for _, d := range pl.deltas {
			if !rowsInCur[d.RowID()] {
				need++
			}
		}
		if actions+need > MaxTxActions {
			flush()
			actions = 0
			need = pl.actions()
		}
		cur.plans = append(cur.plans, pl)
		for _, d := range pl.deltas {
			rowsInCur[d.RowID()] = true
		}
		actions += need
	}
	flush()

	var mu sync.Mutex
	// Rows whose derived attributes must follow, with the union of the
	// counters contributed to them (the derive's condition), and the
	// subjects that wait on each row's derive.
	derive := map[string]Contribution{}
	deriveFor := map[string][]string{}
	addDerive := func(d Contribution, subject string) {
		id := d.RowID()
		r, ok := derive[id]
		if !ok {
			r = Contribution{Table: d.Table, Key: d.Key, Counters: map[string]int64{}}
			derive[id] = r
		}
		for k := range d.Counters {
			r.Counters[k] = 0
		}
		// A plan adds its rows in one go: a subject already waiting on
		// this row is the last one listed.
		if fs := deriveFor[id]; len(fs) == 0 || fs[len(fs)-1] != subject {
			deriveFor[id] = append(fs, subject)
		}
	}
	for _, pl := range unchanged {
		for _, d := range pl.rederive {
			addDerive(d, pl.subject)
		}
	}
	sem := make(chan struct{}, p.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func(g group) {
			defer wg.Done()
			defer func() { <-sem }()
			err := p.store.Commit(ctx, g.tx)
			if err == nil {
				mu.Lock()
				for _, pl := range g.plans {
					for _, d := range pl.deltas {
						if derivable(d.Table) {
							addDerive(d, pl.subject)
						}
					}
					for _, d := range pl.rederive {
						addDerive(d, pl.subject)
					}
				}
				mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				commits++
				changed += len(g.plans)
			case errors.Is(err, ErrConflict):
				for _, pl := range g.plans {
					conflicted = append(conflicted, pl.subject)
				}
			default:
				for _, pl := range g.plans {
					failed[pl.subject] = err
				}
			}
		}(g)
	}
	wg.Wait()
	// Derived row attributes (averages, run status) follow the counters,
	// once per row, rows side by side (each derive is conditioned on its
	// own row only); see DeriveRow. A row whose derive fails fails the
	// subjects that contribute to it: their records are delivered again,
	// find the aggregates unchanged, and re-derive the row then.
	for _, id := range sortedKeys(derive) {
		d := derive[id]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := p.derive(ctx, d)
			if err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			deriveErrs++
			for _, s := range deriveFor[id] {
				if _, ok := failed[s]; !ok {
					failed[s] = fmt.Errorf("projector: derived attributes of %s row %s not set: %w", d.Table, keyString(d.Key), err)
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(conflicted)
	return conflicted, commits, changed, deriveErrs
}

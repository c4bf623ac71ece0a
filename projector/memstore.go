package projector

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// MemStore is an in-memory Store with DynamoDB's semantics for what the
// projector uses: atomic commits with version checks (conditional puts),
// conditional item puts, and DynamoDB's limits (MaxTxActions and
// MaxTxBytes per commit, MaxItemBytes per item, no two actions on one item
// in a commit). It passes the same conformance suite as DynamoStore
// (projector/storetest) and exists so that property tests can run many seeds
// fast; it is never the only test of anything.
type MemStore struct {
	mu     sync.Mutex
	states map[string]storedState
	items  map[string]map[string]types.AttributeValue // table\x00key -> item
	// FailCommit, when set, is called before each commit; a non-nil error
	// fails the commit with nothing applied (fault injection: throttling,
	// or a TransactionConflict wrapped in ErrConflict).
	FailCommit func(tx Tx) error
	// FailPut, when set, is called before each item put; a non-nil error
	// fails that put (fault injection: a crash between the commit and the
	// items).
	FailPut func(owner string, it Item) error
	commits int64
}

// storedState is what MemStore keeps of a state: as DynamoStore would
// store it (the JSON compressed is not modelled; its size is).
type storedState struct {
	StoredState
	item map[string]types.AttributeValue
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{states: map[string]storedState{}, items: map[string]map[string]types.AttributeValue{}}
}

// Load implements Store (always consistent).
func (m *MemStore) Load(_ context.Context, subjects []string, _ bool) (map[string]StoredState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]StoredState{}
	for _, s := range subjects {
		if st, ok := m.states[s]; ok {
			cp := st.StoredState
			cp.State = append([]byte(nil), cp.State...)
			cp.Applied = append([]Contribution(nil), cp.Applied...)
			cp.ItemVersions = maps.Clone(cp.ItemVersions)
			out[s] = cp
		}
	}
	return out, nil
}

// LoadRows implements Store (always consistent).
func (m *MemStore) LoadRows(_ context.Context, rows []RowRef, _ bool) (map[string]Row, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]Row{}
	for _, r := range rows {
		id := r.Table + "\x00" + keyString(r.Key)
		if it, ok := m.items[id]; ok {
			cp := copyItem(it)
			out[id] = Row{Table: r.Table, Key: r.Key, Item: cp, Version: rowVersion(cp)}
		}
	}
	return out, nil
}

func copyItem(it map[string]types.AttributeValue) map[string]types.AttributeValue {
	cp := make(map[string]types.AttributeValue, len(it)+2) // room for the attributes a store adds
	for k, v := range it {
		cp[k] = v
	}
	return cp
}

// Commit implements Store.
func (m *MemStore) Commit(_ context.Context, tx Tx) error {
	if n := tx.Actions(); n == 0 || n > MaxTxActions {
		return fmt.Errorf("projector: a commit needs 1-%d actions, got %d", MaxTxActions, n)
	}
	// Render what DynamoStore would write, with its size checks.
	states := make([]map[string]types.AttributeValue, len(tx.States))
	bytes := 0
	seen := map[string]bool{}
	for i, p := range tx.States {
		it, err := stateItem(p)
		if err != nil {
			return err
		}
		states[i] = it
		bytes += ItemSize(it)
		if seen["\x00"+p.Subject] {
			return fmt.Errorf("projector: two actions on one item (state of %s)", p.Subject)
		}
		seen["\x00"+p.Subject] = true
	}
	rows := make([]map[string]types.AttributeValue, len(tx.Rows))
	ids := make([]string, len(tx.Rows))
	for i, r := range tx.Rows {
		row, err := rowItem(r)
		if err != nil {
			return err
		}
		bytes += row.size
		ids[i] = r.Table + "\x00" + keyString(row.key)
		if seen[ids[i]] {
			return fmt.Errorf("projector: two actions on one item %s", ids[i])
		}
		seen[ids[i]] = true
		rows[i] = row.item
	}
	if bytes > MaxTxBytes {
		return fmt.Errorf("%w: a commit of %d bytes exceeds the transaction limit of %d", ErrTooLarge, bytes, MaxTxBytes)
	}
	if m.FailCommit != nil {
		if err := m.FailCommit(tx); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range tx.States {
		if cur := m.states[p.Subject]; cur.Version != p.Expected {
			return fmt.Errorf("%w: %s stored version %d, expected %d", ErrConflict, p.Subject, cur.Version, p.Expected)
		}
	}
	for i, r := range tx.Rows {
		cur, ok := m.items[ids[i]]
		if v := rowVersion(cur); ok && v != r.Expected || !ok && r.Expected != 0 {
			return fmt.Errorf("%w: %s stored version %d, expected %d", ErrConflict, ids[i], v, r.Expected)
		}
	}
	for i, p := range tx.States {
		st := p.StoredState
		st.State = append([]byte(nil), st.State...)
		st.Applied = append([]Contribution(nil), st.Applied...)
		st.ItemVersions = maps.Clone(st.ItemVersions)
		m.states[p.Subject] = storedState{StoredState: st, item: states[i]}
	}
	for i := range tx.Rows {
		m.items[ids[i]] = rows[i]
	}
	m.commits++
	return nil
}

// PutItems implements Store.
func (m *MemStore) PutItems(_ context.Context, owner string, version int64, items []Item) error {
	for _, it := range items {
		st, err := versionedItem(owner, version, it)
		if err != nil {
			return err
		}
		item, key := st.item, st.key
		if m.FailPut != nil {
			if err := m.FailPut(owner, it); err != nil {
				return err
			}
		}
		id := it.Table + "\x00" + keyString(key)
		m.mu.Lock()
		cur, exists := m.items[id]
		switch {
		case !exists:
		case cur[schema.AttrItemOwner] != nil && !isString(cur[schema.AttrItemOwner], owner):
			m.mu.Unlock()
			o, _ := cur[schema.AttrItemOwner].(*types.AttributeValueMemberS)
			return fmt.Errorf("%w: %s item %s belongs to %s, not %s", ErrItemOwned, it.Table, keyString(key), o.Value, owner)
		case cur[schema.AttrItemVersion] != nil && numAttr(cur, schema.AttrItemVersion) > version:
			m.mu.Unlock()
			continue // a newer version is stored
		}
		m.items[id] = item
		m.mu.Unlock()
	}
	return nil
}

// ItemVersions implements Store.
func (m *MemStore) ItemVersions(_ context.Context, items []Item) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, len(items))
	for i, it := range items {
		if cur, ok := m.items[it.Table+"\x00"+keyString(keyOf(it.Table, it.Item))]; ok {
			out[i] = numAttr(cur, schema.AttrItemVersion)
		}
	}
	return out, nil
}

func isString(v types.AttributeValue, s string) bool {
	sv, ok := v.(*types.AttributeValueMemberS)
	return ok && sv.Value == s
}

// Commits reports how many commits succeeded.
func (m *MemStore) Commits() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.commits
}

// StateBytes reports the stored size of an aggregate's state item (0 when
// absent), as DynamoStore would store it.
func (m *MemStore) StateBytes(subject string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ItemSize(m.states[subject].item)
}

// Items returns a copy of every item of a logical table, keyed by its
// canonical key string, with the projector's bookkeeping attributes
// (schema.IsInternalAttribute) as stored.
func (m *MemStore) Items(table string) map[string]map[string]types.AttributeValue {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[string]types.AttributeValue{}
	for id, it := range m.items {
		t, key, _ := strings.Cut(id, "\x00")
		if t == table {
			out[key] = copyItem(it)
		}
	}
	return out
}

// Set stores an item as is, bypassing every condition (tests that tamper
// with a projection, e.g. verify's).
func (m *MemStore) Set(table string, item map[string]types.AttributeValue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[table+"\x00"+keyString(keyOf(table, item))] = copyItem(item)
}

// Get returns a copy of one item of a logical table, nil when absent.
func (m *MemStore) Get(_ context.Context, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[table+"\x00"+keyString(key)]
	if !ok {
		return nil, nil
	}
	return copyItem(it), nil
}

// Delete removes an item of a logical table, as DynamoDB's TTL does
// (tests of what happens after an item expired).
func (m *MemStore) Delete(table string, key map[string]types.AttributeValue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, table+"\x00"+keyString(key))
}

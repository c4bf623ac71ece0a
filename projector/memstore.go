package projector

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// MemStore is an in-memory Store with DynamoDB's semantics for what the
// projector uses: atomic commits with version checks, item puts, and exact
// decimal ADD. It passes the same conformance suite as DynamoStore
// (projector/storetest) and exists so that property tests can run many seeds
// fast; it is never the only test of anything.
type MemStore struct {
	mu     sync.Mutex
	states map[string]StoredState
	items  map[string]map[string]types.AttributeValue // table\x00key -> item
	// FailCommit, when set, is called before each commit; a non-nil error
	// fails the commit with nothing applied (fault injection).
	FailCommit func(tx Tx) error
	// FailDerive, when set, is called before each derive; a non-nil error
	// fails the derive with nothing changed (fault injection).
	FailDerive func(table string, key map[string]types.AttributeValue) error
	commits    int64
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{states: map[string]StoredState{}, items: map[string]map[string]types.AttributeValue{}}
}

// Load implements Store.
func (m *MemStore) Load(_ context.Context, subjects []string) (map[string]StoredState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]StoredState{}
	for _, s := range subjects {
		if st, ok := m.states[s]; ok {
			st.State = append([]byte(nil), st.State...)
			out[s] = st
		}
	}
	return out, nil
}

// Commit implements Store.
func (m *MemStore) Commit(_ context.Context, tx Tx) error {
	if n := tx.Actions(); n == 0 || n > MaxTxActions {
		return fmt.Errorf("projector: a commit needs 1-%d actions, got %d", MaxTxActions, n)
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
	ids := make([]string, len(tx.Items)) // each item's row in m.items
	seen := map[string]bool{}
	for i, it := range tx.Items {
		spec, ok := schema.TableSpec(it.Table)
		if !ok {
			return fmt.Errorf("projector: item of unknown table %q", it.Table)
		}
		key, ok := spec.Key(it.Item)
		if !ok {
			return fmt.Errorf("projector: %s item lacks its key attributes", it.Table)
		}
		id := it.Table + "\x00" + keyString(key)
		if seen[id] {
			return fmt.Errorf("projector: two actions on one item %s", id)
		}
		seen[id] = true
		ids[i] = id
	}
	// Validate deltas before applying anything (atomicity).
	for _, d := range tx.Deltas {
		for k := range d.Counters {
			if cur, ok := m.items[d.RowID()][k]; ok {
				if _, isN := cur.(*types.AttributeValueMemberN); !isN {
					return fmt.Errorf("projector: ADD to non-number %s of %s", k, d.RowID())
				}
			}
		}
	}
	for _, p := range tx.States {
		st := p.StoredState
		st.State = append([]byte(nil), st.State...)
		m.states[p.Subject] = st
	}
	for i, it := range tx.Items {
		cp := make(map[string]types.AttributeValue, len(it.Item))
		for k, v := range it.Item {
			cp[k] = v
		}
		m.items[ids[i]] = cp
	}
	for _, d := range tx.Deltas {
		id := d.RowID()
		row := m.items[id]
		if row == nil {
			row = map[string]types.AttributeValue{}
			for k, v := range d.Key {
				row[k] = v
			}
			m.items[id] = row
		}
		for k, v := range d.Attrs {
			row[k] = v
		}
		for k, v := range d.Counters {
			if v == 0 {
				continue
			}
			sum := new(big.Rat)
			if cur, ok := row[k].(*types.AttributeValueMemberN); ok {
				sum.SetString(cur.Value)
			}
			add, _ := new(big.Rat).SetString(FormatScaled(v, d.Scale[k]))
			sum.Add(sum, add)
			row[k] = &types.AttributeValueMemberN{Value: NormalizeNumber(sum.FloatString(12))}
		}
	}
	m.commits++
	return nil
}

// Commits reports how many commits succeeded.
func (m *MemStore) Commits() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.commits
}

// Items returns a copy of every item of a logical table, keyed by its
// canonical key string.
func (m *MemStore) Items(table string) map[string]map[string]types.AttributeValue {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[string]types.AttributeValue{}
	for id, it := range m.items {
		t, key, _ := strings.Cut(id, "\x00")
		if t == table {
			out[key] = it
		}
	}
	return out
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

// NormalizeNumber renders a decimal the way DynamoDB returns numbers: no
// trailing fractional zeros, no trailing point, "-0" as "0".
func NormalizeNumber(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// Get returns a copy of one item of a logical table, nil when absent.
func (m *MemStore) Get(_ context.Context, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[table+"\x00"+keyString(key)]
	if !ok {
		return nil, nil
	}
	cp := make(map[string]types.AttributeValue, len(it))
	for k, v := range it {
		cp[k] = v
	}
	return cp, nil
}

// ItemID identifies a projection item: its logical table and canonical key.
func ItemID(table string, item map[string]types.AttributeValue) string {
	return table + "|" + keyString(keyOf(table, item))
}

// Derive implements Store; under MemStore's lock the read and the write are
// atomic, so no condition is needed.
func (m *MemStore) Derive(_ context.Context, table string, key map[string]types.AttributeValue, _ []string, derive func(map[string]types.AttributeValue) map[string]types.AttributeValue) error {
	if m.FailDerive != nil {
		if err := m.FailDerive(table, key); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	row, ok := m.items[table+"\x00"+keyString(key)]
	if !ok {
		return nil
	}
	ApplyDerived(row, derive(row))
	return nil
}

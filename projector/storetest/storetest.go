// Package storetest is the conformance suite every projector.Store passes:
// the in-memory MemStore and the DynamoDB store alike. A store that passes
// it may stand in for the other in property tests.
package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Harness is a store under test and a way to read back what it wrote.
type Harness struct {
	Store projector.Store
	// Get reads one item of a logical table (nil when absent), strongly consistent.
	Get func(ctx context.Context, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error)
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func str(item map[string]types.AttributeValue, name string) string {
	switch v := item[name].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return projector.NormalizeNumber(v.Value)
	}
	return "<absent>"
}

// Run runs the suite. newHarness must return an empty store each call.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	rowKey := map[string]types.AttributeValue{"scope": s("messages/dev"), "date": s("2026-01-05")}
	row := func(total string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"scope": s("messages/dev"), "date": s("2026-01-05"), "total": n(total)}
	}
	rowRef := projector.RowRef{Table: schema.TableMetrics, Key: rowKey}
	item := func(status string) projector.Item {
		return projector.Item{Table: schema.TableMessages, Item: map[string]types.AttributeValue{"message_id": s("m1"), "status": s(status)}}
	}
	msgKey := map[string]types.AttributeValue{"message_id": s("m1")}
	// Applied contributions keep each counter's scale (its unit: cost in
	// micro-, fee in nano-dollars, total a plain count), so that a deploy
	// that changes a scale can rescale what was applied.
	applied := []projector.Contribution{{Table: schema.TableMetrics, Key: rowKey, Counters: map[string]int64{"total": 1, "cost": 1500, "fee": 7}, Scale: map[string]int{"cost": 6, "fee": 9}}}
	state := func(v, expected int64, body string) projector.StatePut {
		return projector.StatePut{StoredState: projector.StoredState{Subject: "messages/m1", Kind: projector.KindMessage, State: []byte(body), Applied: applied, HasApplied: true,
			ItemVersions: map[string]int64{"messages|message_id=S:m1;": v}, Version: v}, Expected: expected}
	}

	t.Run("load of unknown subjects is empty", func(t *testing.T) {
		h := newHarness(t)
		for _, consistent := range []bool{false, true} {
			got, err := h.Store.Load(ctx, []string{"nope/1", "nope/2"}, consistent)
			if err != nil || len(got) != 0 {
				t.Fatalf("Load = %v, %v; want empty", got, err)
			}
			rows, err := h.Store.LoadRows(ctx, []projector.RowRef{rowRef}, consistent)
			if err != nil || len(rows) != 0 {
				t.Fatalf("LoadRows = %v, %v; want empty", rows, err)
			}
		}
	})
	t.Run("a state alone is one conditional write and reads back", func(t *testing.T) {
		h := newHarness(t)
		body := `{"s":"` + strings.Repeat("stamp ", 500) + `"}`
		if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(1, 0, body)}}); err != nil {
			t.Fatal(err)
		}
		got, err := h.Store.Load(ctx, []string{"messages/m1"}, true)
		st := got["messages/m1"]
		if err != nil || st.Version != 1 || string(st.State) != body || st.Kind != projector.KindMessage || !st.HasApplied || len(st.Applied) != 1 {
			t.Fatalf("Load = %+v, %v", got, err)
		}
		if a := st.Applied[0]; a.RowID() != applied[0].RowID() || a.Counters["total"] != 1 || a.Counters["cost"] != 1500 || a.Counters["fee"] != 7 ||
			a.Scale["cost"] != 6 || a.Scale["fee"] != 9 || a.Scale["total"] != 0 {
			t.Fatalf("applied = %+v, want %+v", a, applied[0])
		}
		if v := st.ItemVersions["messages|message_id=S:m1;"]; v != 1 || len(st.ItemVersions) != 1 {
			t.Fatalf("item versions = %v", st.ItemVersions)
		}
		if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(1, 0, body)}}); !errors.Is(err, projector.ErrConflict) {
			t.Fatalf("second create = %v, want ErrConflict", err)
		}
	})
	t.Run("states and rows commit atomically, rows versioned", func(t *testing.T) {
		h := newHarness(t)
		if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(1, 0, `{}`)}, Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: row("1"), Expected: 0}}}); err != nil {
			t.Fatal(err)
		}
		rows, err := h.Store.LoadRows(ctx, []projector.RowRef{rowRef}, true)
		r, ok := rows[rowRef.Table+"\x00"+keyOf(rowKey)]
		if err != nil || !ok || r.Version != 1 || str(r.Item, "total") != "1" {
			t.Fatalf("LoadRows = %+v, %v", rows, err)
		}
		// A stale row version, or a stale state version, applies nothing.
		for _, tx := range []projector.Tx{
			{States: []projector.StatePut{state(2, 1, `{"x":1}`)}, Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: row("5"), Expected: 0}}},
			{States: []projector.StatePut{state(2, 1, `{"x":1}`)}, Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: row("5"), Expected: 2}}},
			{States: []projector.StatePut{state(3, 2, `{"x":1}`)}, Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: row("5"), Expected: 1}}},
		} {
			if err := h.Store.Commit(ctx, tx); !errors.Is(err, projector.ErrConflict) {
				t.Fatalf("stale commit = %v, want ErrConflict", err)
			}
		}
		got, _ := h.Store.Load(ctx, []string{"messages/m1"}, true)
		it, _ := h.Get(ctx, schema.TableMetrics, rowKey)
		if got["messages/m1"].Version != 1 || str(it, "total") != "1" || str(it, schema.AttrRowVersion) != "1" {
			t.Fatalf("a refused commit changed something: %+v %v", got, it)
		}
		if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(2, 1, `{"x":1}`)}, Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: row("2"), Expected: 1}}}); err != nil {
			t.Fatal(err)
		}
		it, _ = h.Get(ctx, schema.TableMetrics, rowKey)
		if str(it, "total") != "2" || str(it, schema.AttrRowVersion) != "2" {
			t.Fatalf("row = %v, want total 2 at version 2", it)
		}
	})
	t.Run("items: owner and version decide", func(t *testing.T) {
		h := newHarness(t)
		if err := h.Store.PutItems(ctx, "messages/m1", 2, []projector.Item{item("processing")}); err != nil {
			t.Fatal(err)
		}
		// An older version of the owner is ignored without error.
		if err := h.Store.PutItems(ctx, "messages/m1", 1, []projector.Item{item("created")}); err != nil {
			t.Fatalf("older version: %v", err)
		}
		it, _ := h.Get(ctx, schema.TableMessages, msgKey)
		if str(it, "status") != "processing" || str(it, schema.AttrItemVersion) != "2" {
			t.Fatalf("item = %v", it)
		}
		// The same version again (a redelivery repairing it) and a newer one write.
		for v, status := range map[int64]string{2: "processing", 3: "completed"} {
			if err := h.Store.PutItems(ctx, "messages/m1", v, []projector.Item{item(status)}); err != nil {
				t.Fatal(err)
			}
		}
		other := projector.Item{Table: schema.TableMessages, Item: map[string]types.AttributeValue{"message_id": s("m2")}}
		if vs, err := h.Store.ItemVersions(ctx, []projector.Item{item("any"), other}); err != nil || len(vs) != 2 || vs[0] != 3 || vs[1] != 0 {
			t.Fatalf("ItemVersions = %v, %v; want [3 0]", vs, err)
		}
		it, _ = h.Get(ctx, schema.TableMessages, msgKey)
		if str(it, "status") != "completed" {
			t.Fatalf("item = %v, want completed", it)
		}
		// In a table whose key space several kinds of aggregate share
		// (seed 001's), an item records its owner, and another aggregate
		// can never take it.
		meta := func(entity string) projector.Item {
			return projector.Item{Table: schema.TableWorkflows, Item: map[string]types.AttributeValue{"pk": s("x-1"), "sk": s("metadata"), "entityType": s(entity)}}
		}
		if err := h.Store.PutItems(ctx, "albums/execution/x-1", 1, []projector.Item{meta("execution")}); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.PutItems(ctx, "albums/task/x-1", 9, []projector.Item{meta("task")}); !errors.Is(err, projector.ErrItemOwned) || !projector.IsPermanent(err) {
			t.Fatalf("other owner = %v, want ErrItemOwned", err)
		}
		it, _ = h.Get(ctx, schema.TableWorkflows, map[string]types.AttributeValue{"pk": s("x-1"), "sk": s("metadata")})
		if str(it, "entityType") != "execution" || str(it, schema.AttrItemOwner) != "albums/execution/x-1" {
			t.Fatalf("item = %v, want the execution's", it)
		}
	})
	t.Run("DynamoDB's limits are refused, not attempted", func(t *testing.T) {
		h := newHarness(t)
		var tx projector.Tx
		for i := 0; i <= projector.MaxTxActions; i++ {
			tx.States = append(tx.States, projector.StatePut{StoredState: projector.StoredState{Subject: "s/" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Kind: projector.KindMessage, State: []byte(`{}`), Version: 1}})
		}
		if err := h.Store.Commit(ctx, tx); err == nil || errors.Is(err, projector.ErrConflict) {
			t.Fatalf("Commit of %d actions = %v, want a non-conflict error", tx.Actions(), err)
		}
		big := item("x")
		big.Item["blob"] = s(strings.Repeat("x", projector.MaxItemBytes))
		if err := h.Store.PutItems(ctx, "messages/m1", 1, []projector.Item{big}); !errors.Is(err, projector.ErrTooLarge) {
			t.Fatalf("oversize item = %v, want ErrTooLarge", err)
		}
		huge := row("1")
		huge["blob"] = s(strings.Repeat("y", projector.MaxItemBytes))
		if err := h.Store.Commit(ctx, projector.Tx{Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: huge}}}); !errors.Is(err, projector.ErrTooLarge) {
			t.Fatalf("oversize row = %v, want ErrTooLarge", err)
		}
		twice := projector.Tx{Rows: []projector.RowPut{{Table: schema.TableMetrics, Item: row("1")}, {Table: schema.TableMetrics, Item: row("2")}}}
		if err := h.Store.Commit(ctx, twice); err == nil || errors.Is(err, projector.ErrConflict) {
			t.Fatalf("two actions on one row = %v, want a non-conflict error", err)
		}
		if it, _ := h.Get(ctx, schema.TableMetrics, rowKey); it != nil {
			t.Fatalf("a refused commit wrote %v", it)
		}
	})
}

// keyOf renders a key as projector's RowID does (attribute names sorted).
func keyOf(key map[string]types.AttributeValue) string {
	return projector.Contribution{Key: key}.RowID()[1:]
}

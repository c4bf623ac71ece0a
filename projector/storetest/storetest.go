// Package storetest is the conformance suite every projector.Store passes:
// the in-memory MemStore and the DynamoDB store alike. A store that passes
// it may stand in for the other in property tests.
package storetest

import (
	"context"
	"errors"
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

func num(t *testing.T, item map[string]types.AttributeValue, name string) string {
	t.Helper()
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("attribute %s = %#v, want a number", name, item[name])
	}
	return projector.NormalizeNumber(n.Value)
}

// Run runs the suite. newHarness must return an empty store each call.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	rowKey := map[string]types.AttributeValue{"scope": s("messages/dev"), "date": s("2026-01-05")}
	delta := func(total, cost int64) projector.Contribution {
		return projector.Contribution{Table: schema.TableMetrics, Key: rowKey,
			Attrs:    map[string]types.AttributeValue{"scope": s("messages/dev"), "date": s("2026-01-05")},
			Counters: map[string]int64{"total": total, "cost": cost}, Scale: map[string]int{"cost": 6}}
	}
	item := func(status string) projector.Item {
		return projector.Item{Table: schema.TableMessages, Item: map[string]types.AttributeValue{"message_id": s("m1"), "status": s(status)}}
	}
	state := func(v, expected int64, body string) projector.StatePut {
		return projector.StatePut{StoredState: projector.StoredState{Subject: "messages/m1", Kind: projector.KindMessage, State: []byte(body), Version: v}, Expected: expected}
	}

	t.Run("load of unknown subjects is empty", func(t *testing.T) {
		h := newHarness(t)
		got, err := h.Store.Load(ctx, []string{"nope/1", "nope/2"})
		if err != nil || len(got) != 0 {
			t.Fatalf("Load = %v, %v; want empty", got, err)
		}
	})
	t.Run("commit writes state, item and counters atomically", func(t *testing.T) {
		h := newHarness(t)
		err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(1, 0, `{"s":1}`)}, Items: []projector.Item{item("created")}, Deltas: []projector.Contribution{delta(1, 100000)}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Store.Load(ctx, []string{"messages/m1"})
		if err != nil || got["messages/m1"].Version != 1 || string(got["messages/m1"].State) != `{"s":1}` || got["messages/m1"].Kind != projector.KindMessage {
			t.Fatalf("Load = %+v, %v", got, err)
		}
		it, err := h.Get(ctx, schema.TableMessages, map[string]types.AttributeValue{"message_id": s("m1")})
		if err != nil || it == nil || it["status"].(*types.AttributeValueMemberS).Value != "created" {
			t.Fatalf("item = %v, %v", it, err)
		}
		row, err := h.Get(ctx, schema.TableMetrics, rowKey)
		if err != nil || row == nil {
			t.Fatalf("row = %v, %v", row, err)
		}
		if num(t, row, "total") != "1" || num(t, row, "cost") != "0.1" {
			t.Fatalf("row = %v", row)
		}
	})
	t.Run("version conflict applies nothing", func(t *testing.T) {
		h := newHarness(t)
		if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(1, 0, `{"s":1}`)}, Items: []projector.Item{item("created")}, Deltas: []projector.Contribution{delta(1, 0)}}); err != nil {
			t.Fatal(err)
		}
		for _, expected := range []int64{0, 2} {
			err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(expected+1, expected, `{"s":9}`)}, Items: []projector.Item{item("failed")}, Deltas: []projector.Contribution{delta(5, 0)}})
			if !errors.Is(err, projector.ErrConflict) {
				t.Fatalf("expected %d: err = %v, want ErrConflict", expected, err)
			}
		}
		got, _ := h.Store.Load(ctx, []string{"messages/m1"})
		it, _ := h.Get(ctx, schema.TableMessages, map[string]types.AttributeValue{"message_id": s("m1")})
		row, _ := h.Get(ctx, schema.TableMetrics, rowKey)
		if got["messages/m1"].Version != 1 || it["status"].(*types.AttributeValueMemberS).Value != "created" || num(t, row, "total") != "1" {
			t.Fatalf("conflicting commit changed something: %+v %v %v", got, it, row)
		}
	})
	t.Run("decimal counters are exact, negative deltas subtract", func(t *testing.T) {
		h := newHarness(t)
		v := int64(0)
		for _, c := range []int64{100000, 200000, -50000, 1, 3} { // 0.1 + 0.2 - 0.05 + 0.000001 + 0.000003
			v++
			if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(v, v-1, `{}`)}, Deltas: []projector.Contribution{delta(1, c)}}); err != nil {
				t.Fatal(err)
			}
		}
		row, _ := h.Get(ctx, schema.TableMetrics, rowKey)
		if num(t, row, "cost") != "0.250004" || num(t, row, "total") != "5" {
			t.Fatalf("row = %v, want cost 0.250004 total 5", row)
		}
	})
	t.Run("derive sets attributes computed from the row", func(t *testing.T) {
		h := newHarness(t)
		if err := h.Store.Commit(ctx, projector.Tx{States: []projector.StatePut{state(1, 0, `{}`)}, Deltas: []projector.Contribution{delta(4, 1000000)}}); err != nil {
			t.Fatal(err)
		}
		derive := func(row map[string]types.AttributeValue) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"avg": &types.AttributeValueMemberS{Value: "total=" + row["total"].(*types.AttributeValueMemberN).Value}}
		}
		if err := h.Store.Derive(ctx, schema.TableMetrics, rowKey, []string{"total", "cost"}, derive); err != nil {
			t.Fatal(err)
		}
		row, _ := h.Get(ctx, schema.TableMetrics, rowKey)
		if a, ok := row["avg"].(*types.AttributeValueMemberS); !ok || a.Value != "total=4" || num(t, row, "total") != "4" {
			t.Fatalf("row after Derive = %v", row)
		}
		// A nil value removes the attribute; removing an absent one is a no-op.
		remove := func(map[string]types.AttributeValue) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"avg": nil, "never": nil}
		}
		for range 2 {
			if err := h.Store.Derive(ctx, schema.TableMetrics, rowKey, []string{"total", "cost"}, remove); err != nil {
				t.Fatal(err)
			}
			row, _ = h.Get(ctx, schema.TableMetrics, rowKey)
			if _, ok := row["avg"]; ok || num(t, row, "total") != "4" {
				t.Fatalf("row after a removing Derive = %v, want no avg and total 4", row)
			}
		}
		// An absent row derives nothing and is no error.
		if err := h.Store.Derive(ctx, schema.TableMetrics, map[string]types.AttributeValue{"scope": s("none"), "date": s("x")}, []string{"total"}, derive); err != nil {
			t.Fatalf("Derive of an absent row: %v", err)
		}
	})
	t.Run("too many actions is refused", func(t *testing.T) {
		h := newHarness(t)
		var tx projector.Tx
		for i := 0; i <= projector.MaxTxActions; i++ {
			tx.Items = append(tx.Items, projector.Item{Table: schema.TableMessages, Item: map[string]types.AttributeValue{"message_id": s(string(rune('a'+i%26)) + string(rune('a'+i/26)))}})
		}
		if err := h.Store.Commit(ctx, tx); err == nil || errors.Is(err, projector.ErrConflict) {
			t.Fatalf("Commit of %d actions = %v, want a non-conflict error", tx.Actions(), err)
		}
	})
}

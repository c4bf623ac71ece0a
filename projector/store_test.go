package projector

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/golden"
	"github.com/streamfold/streamfold/schema"
)

// The writes DynamoStore sends are decided apart from sending them
// (commitInput, itemPut). These tests pin each decided write exactly,
// conditions included, without DynamoDB: dropping a state's version
// condition or a counter row's compare-and-set fails them.

var goldenNaming = schema.Naming{Prefix: "sftest", Stage: "dev"}

func goldenStore(t *testing.T, api DynamoAPI) *DynamoStore {
	t.Helper()
	s, err := NewDynamoStore(api, goldenNaming)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	metricsKey = map[string]types.AttributeValue{"scope": avS("messages/dev"), "date": avS("2026-01-05")}
	otherKey   = map[string]types.AttributeValue{"scope": avS("messages/stage"), "date": avS("2026-01-05")}
)

func metricsRow(key map[string]types.AttributeValue, total string) map[string]types.AttributeValue {
	it := copyItem(key)
	it["total"] = &types.AttributeValueMemberN{Value: total}
	it["cost"] = &types.AttributeValueMemberN{Value: "0.0015"}
	return it
}

func goldenState(subject string, version, expected int64) StatePut {
	return StatePut{StoredState: StoredState{
		Subject: subject, Kind: KindMessage, State: []byte(`{"status":"queued"}`),
		Applied:    []Contribution{{Table: schema.TableMetrics, Key: metricsKey, Counters: map[string]int64{"total": 1, "cost": 1500000}, Scale: map[string]int{"cost": 9}}},
		HasApplied: true, ItemVersions: map[string]int64{ItemID(schema.TableMessages, map[string]types.AttributeValue{"message_id": avS("m1")}): version}, Version: version,
	}, Expected: expected}
}

// commitCases are the commits whose decided requests are pinned.
var commitCases = []struct {
	name string
	tx   Tx
	// conds are the condition, names and values each action must carry,
	// in order (the literal check; the golden file has the whole write).
	conds []cond
}{
	{"state_create", Tx{States: []StatePut{goldenState("messages/m1", 1, 0)}},
		[]cond{{"attribute_not_exists(#k)", map[string]string{"#k": "subject"}, nil}}},
	{"state_update", Tx{States: []StatePut{goldenState("messages/m1", 4, 3)}},
		[]cond{{"#v = :v", map[string]string{"#v": "version"}, map[string]string{":v": "3"}}}},
	{"row_create", Tx{Rows: []RowPut{{Table: schema.TableMetrics, Item: metricsRow(metricsKey, "1")}}},
		[]cond{{"attribute_not_exists(#k)", map[string]string{"#k": "scope"}, nil}}},
	{"row_update", Tx{Rows: []RowPut{{Table: schema.TableMetrics, Item: metricsRow(metricsKey, "8"), Expected: 7}}},
		[]cond{{"#v = :v", map[string]string{"#v": "_rv"}, map[string]string{":v": "7"}}}},
	{"transaction", Tx{
		States: []StatePut{goldenState("messages/m1", 1, 0), goldenState("messages/m2", 6, 5)},
		Rows:   []RowPut{{Table: schema.TableMetrics, Item: metricsRow(metricsKey, "2"), Expected: 1}, {Table: schema.TableMetrics, Item: metricsRow(otherKey, "1")}},
	}, []cond{
		{"attribute_not_exists(#k)", map[string]string{"#k": "subject"}, nil},
		{"#v = :v", map[string]string{"#v": "version"}, map[string]string{":v": "5"}},
		{"#v = :v", map[string]string{"#v": "_rv"}, map[string]string{":v": "1"}},
		{"attribute_not_exists(#k)", map[string]string{"#k": "scope"}, nil},
	}},
}

// cond is a put's expected condition; values are numbers.
type cond struct {
	expr   string
	names  map[string]string
	values map[string]string
}

func (c cond) check(t *testing.T, where string, expr *string, names map[string]string, values map[string]types.AttributeValue) {
	t.Helper()
	if aws.ToString(expr) != c.expr || expr == nil {
		t.Errorf("%s: ConditionExpression = %q, want %q", where, aws.ToString(expr), c.expr)
	}
	if !reflect.DeepEqual(names, c.names) {
		t.Errorf("%s: ExpressionAttributeNames = %v, want %v", where, names, c.names)
	}
	got := map[string]string{}
	for k, v := range values {
		n, ok := v.(*types.AttributeValueMemberN)
		if !ok {
			t.Errorf("%s: value %s is %T, want a number", where, k, v)
			continue
		}
		got[k] = n.Value
	}
	if len(got) != len(c.values) || len(c.values) > 0 && !reflect.DeepEqual(got, c.values) {
		t.Errorf("%s: ExpressionAttributeValues = %v, want %v", where, got, c.values)
	}
}

// TestCommitInputConditions: each state put of a commit is conditioned on
// the version read (absent for a new aggregate), each counter row put on
// the row version read (compare-and-set), whether the commit goes out as
// one PutItem or as a transaction; and the item written carries the next
// version.
func TestCommitInputConditions(t *testing.T) {
	s := goldenStore(t, nil)
	for _, tc := range commitCases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := s.commitInput(tc.tx)
			if err != nil {
				t.Fatal(err)
			}
			if (req.Put == nil) == (req.Transact == nil) {
				t.Fatalf("request %+v: want exactly one of PutItem and TransactWriteItems", req)
			}
			if req.Put != nil {
				if len(tc.conds) != 1 {
					t.Fatalf("a commit of %d actions went out as one PutItem", len(tc.conds))
				}
				tc.conds[0].check(t, "PutItem", req.Put.ConditionExpression, req.Put.ExpressionAttributeNames, req.Put.ExpressionAttributeValues)
				checkNextVersion(t, req.Put.Item, tc.tx, 0)
				return
			}
			if got := len(req.Transact.TransactItems); got != len(tc.conds) {
				t.Fatalf("%d actions, want %d", got, len(tc.conds))
			}
			for i, a := range req.Transact.TransactItems {
				if a.Put == nil || a.Update != nil || a.Delete != nil || a.ConditionCheck != nil {
					t.Fatalf("action %d = %+v, want a Put alone", i, a)
				}
				tc.conds[i].check(t, fmt.Sprintf("action %d", i), a.Put.ConditionExpression, a.Put.ExpressionAttributeNames, a.Put.ExpressionAttributeValues)
				checkNextVersion(t, a.Put.Item, tc.tx, i)
			}
		})
	}
}

// checkNextVersion checks that action i of tx writes version Expected+1.
func checkNextVersion(t *testing.T, item map[string]types.AttributeValue, tx Tx, i int) {
	t.Helper()
	attr, want := "version", int64(0)
	if i < len(tx.States) {
		want = tx.States[i].Version
	} else {
		attr, want = schema.AttrRowVersion, tx.Rows[i-len(tx.States)].Expected+1
	}
	if got := numAttr(item, attr); got != want {
		t.Errorf("action %d writes %s = %d, want %d", i, attr, got, want)
	}
}

// TestCommitInputGolden pins each decided commit request whole: tables,
// items (a state's compressed envelope shown decoded), conditions.
func TestCommitInputGolden(t *testing.T) {
	s := goldenStore(t, nil)
	for _, tc := range commitCases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := s.commitInput(tc.tx)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, renderCommit(t, req))
		})
	}
}

// itemCases are the item puts whose decided requests are pinned.
var itemCases = []struct {
	name, owner string
	version     int64
	item        Item
	cond        string
}{
	{"item_messages", "messages/m1", 3,
		Item{Table: schema.TableMessages, Item: map[string]types.AttributeValue{"message_id": avS("m1"), "status": avS("queued")}},
		"attribute_not_exists(#k) OR attribute_not_exists(#v) OR #v <= :v"},
	{"item_workflows_shared", "albums/execution/x-1", 2,
		Item{Table: schema.TableWorkflows, Item: map[string]types.AttributeValue{"pk": avS("x-1"), "sk": avS("metadata"), "entityType": avS("execution")}},
		"attribute_not_exists(#k) OR ((attribute_not_exists(#o) OR #o = :o) AND (attribute_not_exists(#v) OR #v <= :v))"},
}

// TestItemPutGolden pins each decided item put: written when absent, or
// owned by its aggregate (shared-key tables) at a version not newer.
func TestItemPutGolden(t *testing.T) {
	s := goldenStore(t, nil)
	for _, tc := range itemCases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := s.itemPut(tc.owner, tc.version, tc.item)
			if err != nil {
				t.Fatal(err)
			}
			if got := aws.ToString(in.ConditionExpression); got != tc.cond {
				t.Errorf("ConditionExpression = %q, want %q", got, tc.cond)
			}
			checkGolden(t, tc.name, map[string]any{"PutItem": renderPut(t, in.TableName, in.Item, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.ReturnValuesOnConditionCheckFailure)})
		})
	}
}

// recordingAPI is a DynamoAPI that records the writes sent and answers
// each with err.
type recordingAPI struct {
	mu   sync.Mutex
	puts []*dynamodb.PutItemInput
	txs  []*dynamodb.TransactWriteItemsInput
	err  error
}

func (r *recordingAPI) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.puts = append(r.puts, in)
	return &dynamodb.PutItemOutput{}, r.err
}

func (r *recordingAPI) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.txs = append(r.txs, in)
	return &dynamodb.TransactWriteItemsOutput{}, r.err
}

func (r *recordingAPI) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return nil, errors.New("recordingAPI: no reads")
}

// TestCommitSendsTheDecidedRequest: Commit and PutItems send exactly the
// requests commitInput and itemPut decide, and a failed condition comes
// back as ErrConflict (commit) or is left alone (an item at a newer
// version).
func TestCommitSendsTheDecidedRequest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range commitCases {
		t.Run(tc.name, func(t *testing.T) {
			api := &recordingAPI{}
			s := goldenStore(t, api)
			want, err := s.commitInput(tc.tx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, tc.tx); err != nil {
				t.Fatal(err)
			}
			switch {
			case want.Put != nil && (len(api.puts) != 1 || len(api.txs) != 0 || !reflect.DeepEqual(api.puts[0], want.Put)):
				t.Fatalf("sent %d puts %+v and %d transactions; want the one PutItem %+v", len(api.puts), api.puts, len(api.txs), want.Put)
			case want.Transact != nil && (len(api.txs) != 1 || len(api.puts) != 0 || !reflect.DeepEqual(api.txs[0], want.Transact)):
				t.Fatalf("sent %d puts and %d transactions %+v; want the one TransactWriteItems %+v", len(api.puts), len(api.txs), api.txs, want.Transact)
			}
			// The condition failing is a conflict, not an error to retry blindly.
			api.err = &types.ConditionalCheckFailedException{Message: aws.String("injected")}
			if want.Transact != nil {
				api.err = &types.TransactionCanceledException{Message: aws.String("injected"), CancellationReasons: []types.CancellationReason{{Code: aws.String("None")}, {Code: aws.String("ConditionalCheckFailed")}}}
			}
			if err := s.Commit(ctx, tc.tx); !errors.Is(err, ErrConflict) {
				t.Fatalf("failed condition: Commit = %v, want ErrConflict", err)
			}
		})
	}
	for _, tc := range itemCases {
		t.Run(tc.name, func(t *testing.T) {
			api := &recordingAPI{}
			s := goldenStore(t, api)
			want, err := s.itemPut(tc.owner, tc.version, tc.item)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutItems(ctx, tc.owner, tc.version, []Item{tc.item}); err != nil {
				t.Fatal(err)
			}
			if len(api.puts) != 1 || len(api.txs) != 0 || !reflect.DeepEqual(api.puts[0], want) {
				t.Fatalf("sent %+v; want the one PutItem %+v", api.puts, want)
			}
		})
	}
}

// checkGolden compares v, as indented JSON, with testdata/store/<name>.golden.json.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden.Check(t, filepath.Join("testdata", "store", name+".golden.json"), got)
}

func renderCommit(t *testing.T, req commitRequest) any {
	t.Helper()
	if req.Put != nil {
		p := req.Put
		return map[string]any{"PutItem": renderPut(t, p.TableName, p.Item, p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues, p.ReturnValuesOnConditionCheckFailure)}
	}
	var actions []any
	for _, a := range req.Transact.TransactItems {
		if a.Put == nil || a.Update != nil || a.Delete != nil || a.ConditionCheck != nil {
			t.Fatalf("action %+v: want a Put alone", a)
		}
		p := a.Put
		actions = append(actions, map[string]any{"Put": renderPut(t, p.TableName, p.Item, p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues, p.ReturnValuesOnConditionCheckFailure)})
	}
	return map[string]any{"TransactWriteItems": actions}
}

// renderPut renders a put's fields (absent ones left out).
func renderPut[R ~string](t *testing.T, table *string, item map[string]types.AttributeValue, condition *string, names map[string]string, values map[string]types.AttributeValue, ret R) map[string]any {
	t.Helper()
	out := map[string]any{"TableName": aws.ToString(table), "Item": renderItem(t, item)}
	if condition != nil {
		out["ConditionExpression"] = *condition
	}
	if names != nil {
		out["ExpressionAttributeNames"] = names
	}
	if values != nil {
		out["ExpressionAttributeValues"] = renderItem(t, values)
	}
	if ret != "" {
		out["ReturnValuesOnConditionCheckFailure"] = string(ret)
	}
	return out
}

// renderItem renders attributes as DynamoDB JSON; an aggregate's
// compressed state ("state", binary) is shown as its decoded envelope.
func renderItem(t *testing.T, item map[string]types.AttributeValue) map[string]any {
	t.Helper()
	out := make(map[string]any, len(item))
	for k, v := range item {
		if b, ok := v.(*types.AttributeValueMemberB); ok && k == "state" {
			raw, err := decompressState(b.Value)
			if err != nil {
				t.Fatalf("state: %v", err)
			}
			out[k] = map[string]any{"B(zstd)": json.RawMessage(raw)}
			continue
		}
		out[k] = renderAV(v)
	}
	return out
}

func renderAV(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberM:
		m := map[string]any{}
		for k, e := range v.Value {
			m[k] = renderAV(e)
		}
		return map[string]any{"M": m}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = renderAV(e)
		}
		return map[string]any{"L": l}
	}
	return map[string]any{"?": reflect.TypeOf(v).String()}
}

package projector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// ErrConflict is returned by Store.Commit when a state's stored version is
// not the one the commit expected: someone else wrote the aggregate since it
// was loaded. Nothing of the commit was applied; reload and fold again.
var ErrConflict = errors.New("projector: aggregate version conflict")

// MaxTxActions is the most actions one Commit may carry (DynamoDB's
// TransactWriteItems limit).
const MaxTxActions = 100

// StoredState is an aggregate's persisted state.
type StoredState struct {
	Subject string
	Kind    AggregateKind
	State   []byte // JSON
	Version int64  // 0 when the aggregate has never been stored
}

// StatePut writes an aggregate's new state if its stored version is still
// Expected (0: the aggregate must not exist yet).
type StatePut struct {
	StoredState
	Expected int64
}

// Tx is one atomic commit: new states, the projection items they imply,
// and counter deltas. Either all of it is applied or none.
type Tx struct {
	States []StatePut
	Items  []Item
	Deltas []Contribution
}

// Actions is the number of write actions the commit needs.
func (t Tx) Actions() int { return len(t.States) + len(t.Items) + len(t.Deltas) }

// Store persists aggregate states, projection items and counters.
// Implementations must make Commit atomic and check every state's expected
// version; Load must be strongly consistent. The conformance suite in
// projector/storetest holds every implementation to this.
type Store interface {
	Load(ctx context.Context, subjects []string) (map[string]StoredState, error)
	Commit(ctx context.Context, tx Tx) error
	// Derive reads a counter row (strongly consistent), computes derive(row)
	// and sets those attributes provided the named counters still hold the
	// values read. A failed condition is not an error: the commit that
	// changed them derives again.
	Derive(ctx context.Context, table string, key map[string]types.AttributeValue, counters []string, derive func(map[string]types.AttributeValue) map[string]types.AttributeValue) error
}

// DynamoAPI is the part of the DynamoDB client DynamoStore uses.
type DynamoAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// DynamoStore is the Store on DynamoDB: states in the aggregates table,
// commits as one TransactWriteItems.
type DynamoStore struct {
	api    DynamoAPI
	naming schema.Naming
	// Requests counts DynamoDB write requests (for the write-amplification benchmark).
	requests requestCounter
}

// NewDynamoStore returns a store writing to the tables of naming.
func NewDynamoStore(api DynamoAPI, naming schema.Naming) (*DynamoStore, error) {
	if err := naming.Validate(); err != nil {
		return nil, err
	}
	return &DynamoStore{api: api, naming: naming}, nil
}

// WriteRequests reports how many TransactWriteItems requests were sent.
func (s *DynamoStore) WriteRequests() int64 { return s.requests.load() }

// Load reads the stored states of subjects (absent ones are omitted), with
// strongly consistent reads, 100 keys per request.
func (s *DynamoStore) Load(ctx context.Context, subjects []string) (map[string]StoredState, error) {
	out := make(map[string]StoredState, len(subjects))
	table := s.naming.Table(schema.TableAggregates)
	for start := 0; start < len(subjects); start += 100 {
		end := min(start+100, len(subjects))
		keys := make([]map[string]types.AttributeValue, 0, end-start)
		for _, subj := range subjects[start:end] {
			keys = append(keys, map[string]types.AttributeValue{"subject": &types.AttributeValueMemberS{Value: subj}})
		}
		req := map[string]types.KeysAndAttributes{table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 20 {
				return nil, fmt.Errorf("projector: load states: unprocessed keys after %d attempts", attempt)
			}
			res, err := s.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("projector: load states: %w", err)
			}
			for _, it := range res.Responses[table] {
				st, err := decodeState(it)
				if err != nil {
					return nil, err
				}
				out[st.Subject] = st
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}

func decodeState(it map[string]types.AttributeValue) (StoredState, error) {
	var st StoredState
	subj, _ := it["subject"].(*types.AttributeValueMemberS)
	kind, _ := it["kind"].(*types.AttributeValueMemberS)
	state, _ := it["state"].(*types.AttributeValueMemberS)
	ver, _ := it["version"].(*types.AttributeValueMemberN)
	if subj == nil || kind == nil || state == nil || ver == nil {
		return st, fmt.Errorf("projector: malformed aggregate state item %v", keyString(it))
	}
	v, err := strconv.ParseInt(ver.Value, 10, 64)
	if err != nil {
		return st, fmt.Errorf("projector: aggregate %s: bad version %q", subj.Value, ver.Value)
	}
	return StoredState{Subject: subj.Value, Kind: AggregateKind(kind.Value), State: []byte(state.Value), Version: v}, nil
}

// Commit applies tx atomically with one TransactWriteItems.
func (s *DynamoStore) Commit(ctx context.Context, tx Tx) error {
	in, err := s.transactInput(tx)
	if err != nil {
		return err
	}
	s.requests.add(1)
	_, err = s.api.TransactWriteItems(ctx, in)
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			// A failed version check, or another transaction touching the
			// same item at the same moment (a shared counter row): reload,
			// fold again and retry.
			if code := aws.ToString(r.Code); code == "ConditionalCheckFailed" || code == "TransactionConflict" {
				return fmt.Errorf("%w: %w", ErrConflict, err)
			}
		}
	}
	return fmt.Errorf("projector: commit %d actions: %w", tx.Actions(), err)
}

// transactInput builds the TransactWriteItems request for tx (pure; tested).
func (s *DynamoStore) transactInput(tx Tx) (*dynamodb.TransactWriteItemsInput, error) {
	if n := tx.Actions(); n == 0 || n > MaxTxActions {
		return nil, fmt.Errorf("projector: a commit needs 1-%d actions, got %d", MaxTxActions, n)
	}
	var items []types.TransactWriteItem
	aggTable := s.naming.Table(schema.TableAggregates)
	for _, p := range tx.States {
		put := &types.Put{
			TableName: aws.String(aggTable),
			Item: map[string]types.AttributeValue{
				"subject": &types.AttributeValueMemberS{Value: p.Subject},
				"kind":    &types.AttributeValueMemberS{Value: string(p.Kind)},
				"state":   &types.AttributeValueMemberS{Value: string(p.State)},
				"version": &types.AttributeValueMemberN{Value: strconv.FormatInt(p.Version, 10)},
			},
		}
		if p.Expected == 0 {
			put.ConditionExpression = aws.String("attribute_not_exists(#s)")
			put.ExpressionAttributeNames = map[string]string{"#s": "subject"}
		} else {
			put.ConditionExpression = aws.String("#v = :v")
			put.ExpressionAttributeNames = map[string]string{"#v": "version"}
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(p.Expected, 10)}}
		}
		items = append(items, types.TransactWriteItem{Put: put})
	}
	for _, it := range tx.Items {
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.naming.Table(it.Table)), Item: it.Item}})
	}
	for _, d := range tx.Deltas {
		u, err := updateFor(d)
		if err != nil {
			return nil, err
		}
		u.TableName = aws.String(s.naming.Table(d.Table))
		items = append(items, types.TransactWriteItem{Update: u})
	}
	return &dynamodb.TransactWriteItemsInput{TransactItems: items}, nil
}

// updateFor renders a counter delta as "SET static attrs ADD counters".
func updateFor(d Contribution) (*types.Update, error) {
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var sets, adds []string
	i := 0
	for _, k := range sortedKeys(d.Attrs) {
		if _, isKey := d.Key[k]; isKey {
			continue
		}
		i++
		n, v := "#a"+strconv.Itoa(i), ":a"+strconv.Itoa(i)
		names[n], values[v] = k, d.Attrs[k]
		sets = append(sets, n+" = "+v)
	}
	for _, k := range sortedKeys(d.Counters) {
		if d.Counters[k] == 0 {
			continue
		}
		i++
		n, v := "#c"+strconv.Itoa(i), ":c"+strconv.Itoa(i)
		names[n] = k
		values[v] = &types.AttributeValueMemberN{Value: FormatScaled(d.Counters[k], d.Scale[k])}
		adds = append(adds, n+" "+v)
	}
	if len(adds) == 0 && len(sets) == 0 {
		return nil, fmt.Errorf("projector: empty delta for %s", d.RowID())
	}
	expr := ""
	if len(sets) > 0 {
		expr = "SET " + strings.Join(sets, ", ")
	}
	if len(adds) > 0 {
		expr = strings.TrimSpace(expr + " ADD " + strings.Join(adds, ", "))
	}
	u := &types.Update{Key: d.Key, UpdateExpression: aws.String(expr), ExpressionAttributeNames: names}
	if len(values) > 0 {
		u.ExpressionAttributeValues = values
	}
	return u, nil
}

// FormatScaled renders v / 10^scale as an exact decimal string.
func FormatScaled(v int64, scale int) string {
	if scale <= 0 {
		return strconv.FormatInt(v, 10)
	}
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	for len(s) <= scale {
		s = "0" + s
	}
	out := s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		out = "-" + out
	}
	return out
}

// Derive implements Store with GetItem and a conditional UpdateItem.
func (s *DynamoStore) Derive(ctx context.Context, table string, key map[string]types.AttributeValue, counters []string, derive func(map[string]types.AttributeValue) map[string]types.AttributeValue) error {
	name := s.naming.Table(table)
	got, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("projector: derive %s: %w", name, err)
	}
	if got.Item == nil {
		return nil
	}
	set := derive(got.Item)
	var remove []string
	for k, v := range set {
		cur, ok := got.Item[k]
		switch {
		case v == nil:
			if ok {
				remove = append(remove, k)
			}
			delete(set, k)
		case ok && sameItem(map[string]types.AttributeValue{k: cur}, map[string]types.AttributeValue{k: v}):
			delete(set, k) // already right: no write
		}
	}
	if len(set) == 0 && len(remove) == 0 {
		return nil
	}
	sort.Strings(remove)
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var sets, removes, conds []string
	for i, k := range sortedKeys(set) {
		n, v := "#d"+strconv.Itoa(i), ":d"+strconv.Itoa(i)
		names[n], values[v] = k, set[k]
		sets = append(sets, n+" = "+v)
	}
	for i, k := range remove {
		n := "#r" + strconv.Itoa(i)
		names[n] = k
		removes = append(removes, n)
	}
	cond := counterCondition(got.Item, counters)
	for i, k := range sortedKeys(cond) {
		n := "#k" + strconv.Itoa(i)
		names[n] = k
		if cond[k] == "" {
			conds = append(conds, "attribute_not_exists("+n+")")
			continue
		}
		v := ":k" + strconv.Itoa(i)
		values[v] = &types.AttributeValueMemberN{Value: cond[k]}
		conds = append(conds, n+" = "+v)
	}
	var expr []string
	if len(sets) > 0 {
		expr = append(expr, "SET "+strings.Join(sets, ", "))
	}
	if len(removes) > 0 {
		expr = append(expr, "REMOVE "+strings.Join(removes, ", "))
	}
	in := &dynamodb.UpdateItemInput{
		TableName: aws.String(name), Key: key,
		UpdateExpression:         aws.String(strings.Join(expr, " ")),
		ExpressionAttributeNames: names,
	}
	if len(values) > 0 {
		in.ExpressionAttributeValues = values
	}
	if len(conds) > 0 {
		in.ConditionExpression = aws.String(strings.Join(conds, " AND "))
	}
	_, err = s.api.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("projector: derive %s: %w", name, err)
	}
	return nil
}

package projector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/batchget"
	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/schema"
)

// ErrConflict is returned by Store.Commit when a state's or a counter row's
// stored version is not the one the commit expected (someone else wrote it
// since it was read), or when DynamoDB cancelled the transaction for a
// conflict with another one. Nothing of the commit was applied; read again
// and retry.
var ErrConflict = errors.New("projector: aggregate version conflict")

// StoredState is an aggregate's persisted state.
type StoredState struct {
	Subject string
	Kind    AggregateKind
	// State is the aggregate's fold as JSON (stores keep it compressed).
	State []byte
	// Applied are the counter contributions applied for this state; nil
	// with HasApplied false for a state written before they were recorded.
	Applied    []Contribution
	HasApplied bool
	// ItemVersions maps each item of the state (by ItemID) to the state
	// version its content was last written from; nil for a state written
	// before they were recorded.
	ItemVersions map[string]int64
	Version      int64 // 0 when the aggregate has never been stored
}

// StatePut writes an aggregate's new state if its stored version is still
// Expected (0: the aggregate must not exist yet).
type StatePut struct {
	StoredState
	Expected int64

	// rendered is the state's item as stored (stateItem), kept when the
	// fold already built it to size its commit, so that a commit does
	// not encode and compress the state a second time. Nil: rendered on
	// demand.
	rendered map[string]types.AttributeValue
}

// Tx is one atomic commit: new states and the counter rows their
// contributions moved, each conditioned on the version read. A Tx of one
// action is a single conditional write; more are one transaction (twice the
// write cost, which is why changes that move no counter commit alone).
type Tx struct {
	States []StatePut
	Rows   []RowPut
}

// Actions is the number of write actions the commit needs.
func (t Tx) Actions() int { return len(t.States) + len(t.Rows) }

// Store persists aggregate states, counter rows and projection items.
// The conformance suite in projector/storetest holds every implementation
// to this contract:
//   - Load and LoadRows return what is stored (consistent: strongly
//     consistent reads; otherwise possibly stale, which a version check at
//     commit catches);
//   - Commit is atomic, checks every expected version, fails with ErrConflict
//     when one does not hold, and refuses more than MaxTxActions actions,
//     MaxTxBytes bytes or an item over MaxItemBytes (ErrTooLarge);
//   - PutItems writes each item owned by owner at version unless the stored
//     item is owned by another subject (ErrItemOwned) or was written from a
//     newer version (then it is left alone, without error);
//   - ItemVersions returns the state version each item was written from
//     (0 when absent or written before versions were recorded), possibly
//     stale: a redelivery reads it to find items whose write failed after
//     their commit, and rewrites only those.
type Store interface {
	Load(ctx context.Context, subjects []string, consistent bool) (map[string]StoredState, error)
	LoadRows(ctx context.Context, rows []RowRef, consistent bool) (map[string]Row, error)
	Commit(ctx context.Context, tx Tx) error
	PutItems(ctx context.Context, owner string, version int64, items []Item) error
	ItemVersions(ctx context.Context, items []Item) ([]int64, error)
}

// DynamoAPI is the part of the DynamoDB client DynamoStore uses.
type DynamoAPI interface {
	ddbapi.PutItem
	ddbapi.BatchGetItem
	ddbapi.TransactWriteItems
}

// DynamoStore is the Store on DynamoDB: states in the aggregates table
// (zstd-compressed), counter rows and items in their projection tables.
type DynamoStore struct {
	api    DynamoAPI
	naming schema.Naming
	// requests counts DynamoDB write requests (for the write-amplification benchmark).
	requests requestCounter
}

// NewDynamoStore returns a store writing to the tables of naming.
func NewDynamoStore(api DynamoAPI, naming schema.Naming) (*DynamoStore, error) {
	if err := naming.Validate(); err != nil {
		return nil, err
	}
	return &DynamoStore{api: api, naming: naming}, nil
}

// WriteRequests reports how many write requests (PutItem and
// TransactWriteItems) were sent.
func (s *DynamoStore) WriteRequests() int64 { return s.requests.load() }

// batchGet reads keys of one table (batchget.Each); read sets the
// consistency and, if wanted, a projection.
func (s *DynamoStore) batchGet(ctx context.Context, table string, keys []map[string]types.AttributeValue, read types.KeysAndAttributes, each func(map[string]types.AttributeValue) error) error {
	if err := batchget.Each(ctx, s.api, table, keys, read, each); err != nil {
		return fmt.Errorf("projector: %w", err)
	}
	return nil
}

// Load reads the stored states of subjects (absent ones are omitted).
func (s *DynamoStore) Load(ctx context.Context, subjects []string, consistent bool) (map[string]StoredState, error) {
	out := make(map[string]StoredState, len(subjects))
	keys := make([]map[string]types.AttributeValue, len(subjects))
	for i, subj := range subjects {
		keys[i] = map[string]types.AttributeValue{"subject": avS(subj)}
	}
	err := s.batchGet(ctx, s.naming.Table(schema.TableAggregates), keys, types.KeysAndAttributes{ConsistentRead: aws.Bool(consistent)}, func(it map[string]types.AttributeValue) error {
		st, err := decodeState(it)
		if err == nil {
			out[st.Subject] = st
		}
		return err
	})
	return out, err
}

// LoadRows reads counter rows (absent ones are omitted), by RowID.
func (s *DynamoStore) LoadRows(ctx context.Context, rows []RowRef, consistent bool) (map[string]Row, error) {
	out := make(map[string]Row, len(rows))
	byTable := map[string][]map[string]types.AttributeValue{}
	for _, r := range rows {
		byTable[r.Table] = append(byTable[r.Table], r.Key)
	}
	for _, table := range sortedKeys(byTable) {
		spec, _ := schema.TableSpec(table)
		err := s.batchGet(ctx, s.naming.Table(table), byTable[table], types.KeysAndAttributes{ConsistentRead: aws.Bool(consistent)}, func(it map[string]types.AttributeValue) error {
			key, ok := spec.Key(it)
			if !ok {
				return fmt.Errorf("projector: %s row without its key", table)
			}
			r := Row{Table: table, Key: key, Item: it, Version: rowVersion(it)}
			out[r.RowID()] = r
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rowVersion is a counter row's version (0: absent or never versioned).
func rowVersion(it map[string]types.AttributeValue) int64 { return numAttr(it, schema.AttrRowVersion) }

// numAttr reads an integer attribute (0 when absent or not a number).
func numAttr(it map[string]types.AttributeValue, name string) int64 {
	if n, ok := it[name].(*types.AttributeValueMemberN); ok {
		v, _ := strconv.ParseInt(n.Value, 10, 64)
		return v
	}
	return 0
}

// stateItem renders a state for the aggregates table: the envelope's JSON
// as is when the item then fits one write unit (the least a write costs, so
// compressing could save nothing), else compressed (see envelope.go).
func stateItem(p StatePut) (map[string]types.AttributeValue, error) {
	if p.rendered != nil {
		return p.rendered, nil
	}
	env, err := encodeEnvelope(p.StoredState)
	if err != nil {
		return nil, err
	}
	state := &types.AttributeValueMemberB{Value: env}
	it := map[string]types.AttributeValue{
		"subject": avS(p.Subject),
		"kind":    avS(string(p.Kind)),
		"state":   state,
		"version": avN(p.Version),
	}
	if ItemSize(it) > schema.WriteUnitBytes {
		state.Value = compressState(env)
	}
	if _, err := checkSize("state of "+p.Subject, it); err != nil {
		return nil, err
	}
	return it, nil
}

func decodeState(it map[string]types.AttributeValue) (StoredState, error) {
	var st StoredState
	subj, _ := it["subject"].(*types.AttributeValueMemberS)
	kind, _ := it["kind"].(*types.AttributeValueMemberS)
	ver, _ := it["version"].(*types.AttributeValueMemberN)
	if subj == nil || kind == nil || ver == nil {
		return st, fmt.Errorf("projector: malformed aggregate state item %v", keyString(it))
	}
	v, err := strconv.ParseInt(ver.Value, 10, 64)
	if err != nil {
		return st, fmt.Errorf("projector: aggregate %s: bad version %q", subj.Value, ver.Value)
	}
	st = StoredState{Subject: subj.Value, Kind: AggregateKind(kind.Value), Version: v}
	switch s := it["state"].(type) {
	case *types.AttributeValueMemberB:
		if err := decodeEnvelope(s.Value, &st); err != nil {
			return st, err
		}
	case *types.AttributeValueMemberS: // written before states were compressed
		st.State = []byte(s.Value)
	default:
		return st, fmt.Errorf("projector: malformed aggregate state item %v", keyString(it))
	}
	return st, nil
}

// versionCondition is "attribute_not_exists(name)" for expected 0, else
// "versionAttr = expected".
func versionCondition(keyAttr, versionAttr string, expected int64) (string, map[string]string, map[string]types.AttributeValue) {
	if expected == 0 {
		return "attribute_not_exists(#k)", map[string]string{"#k": keyAttr}, nil
	}
	return "#v = :v", map[string]string{"#v": versionAttr}, map[string]types.AttributeValue{":v": avN(expected)}
}

// transactInput builds the writes of tx (pure; see commitInput): one Put
// per state and per row, each with its version condition.
func (s *DynamoStore) transactInput(tx Tx) ([]types.TransactWriteItem, error) {
	if n := tx.Actions(); n == 0 || n > MaxTxActions {
		return nil, fmt.Errorf("projector: a commit needs 1-%d actions, got %d", MaxTxActions, n)
	}
	var items []types.TransactWriteItem
	bytes := 0
	seen := map[string]bool{}
	once := func(id string) error {
		if seen[id] {
			return fmt.Errorf("projector: two actions on one item %s in a commit", id)
		}
		seen[id] = true
		return nil
	}
	for _, p := range tx.States {
		if err := once("\x00" + p.Subject); err != nil {
			return nil, err
		}
		it, err := stateItem(p)
		if err != nil {
			return nil, err
		}
		bytes += ItemSize(it)
		cond, names, values := versionCondition("subject", "version", p.Expected)
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.naming.Table(schema.TableAggregates)), Item: it,
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		}})
	}
	for _, r := range tx.Rows {
		row, err := rowItem(r)
		if err != nil {
			return nil, err
		}
		if err := once(r.Table + "\x00" + keyString(row.key)); err != nil {
			return nil, err
		}
		bytes += row.size
		cond, names, values := versionCondition(row.spec.Hash.Name, schema.AttrRowVersion, r.Expected)
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.naming.Table(r.Table)), Item: row.item,
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		}})
	}
	if bytes > MaxTxBytes {
		return nil, fmt.Errorf("%w: a commit of %d bytes exceeds the transaction limit of %d", ErrTooLarge, bytes, MaxTxBytes)
	}
	return items, nil
}

// commitRequest is the one request a Commit sends: a conditional PutItem
// for a commit of one action, else a TransactWriteItems. Exactly one field
// is set.
type commitRequest struct {
	Put      *dynamodb.PutItemInput
	Transact *dynamodb.TransactWriteItemsInput
}

// commitInput decides the request of tx (pure; its exact value, conditions
// included, is checked by golden tests under testdata/store): every state
// and row put carries its version condition (versionCondition), and a
// single action keeps its condition when sent as a PutItem.
func (s *DynamoStore) commitInput(tx Tx) (commitRequest, error) {
	items, err := s.transactInput(tx)
	if err != nil {
		return commitRequest{}, err
	}
	if len(items) == 1 {
		p := items[0].Put
		return commitRequest{Put: &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item,
			ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues}}, nil
	}
	return commitRequest{Transact: &dynamodb.TransactWriteItemsInput{TransactItems: items}}, nil
}

// Commit applies tx atomically: it sends the request commitInput decides
// and classifies the answer (a failed condition is ErrConflict).
func (s *DynamoStore) Commit(ctx context.Context, tx Tx) error {
	req, err := s.commitInput(tx)
	if err != nil {
		return err
	}
	s.requests.add(1)
	if req.Put != nil {
		_, err = s.api.PutItem(ctx, req.Put)
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return fmt.Errorf("%w: %w", ErrConflict, err)
		}
		if err != nil {
			return fmt.Errorf("projector: commit: %w", err)
		}
		return nil
	}
	_, err = s.api.TransactWriteItems(ctx, req.Transact)
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			// A failed version check, or another transaction touching the
			// same item at the same moment (a shared counter row): read
			// again, fold again and retry.
			if code := aws.ToString(r.Code); code == "ConditionalCheckFailed" || code == "TransactionConflict" {
				return fmt.Errorf("%w: %w", ErrConflict, err)
			}
		}
	}
	return fmt.Errorf("projector: commit %d actions: %w", tx.Actions(), err)
}

// keyed checks that item belongs to a known table and carries its key.
func keyed(what, table string, item map[string]types.AttributeValue) (schema.Table, map[string]types.AttributeValue, error) {
	spec, ok := schema.TableSpec(table)
	if !ok {
		return spec, nil, fmt.Errorf("projector: %s of unknown table %q", what, table)
	}
	key, ok := spec.Key(item)
	if !ok {
		return spec, nil, fmt.Errorf("projector: %s %s lacks its key attributes", table, what)
	}
	return spec, key, nil
}

// rendered is an item as a store writes it: the attributes, its table's
// spec, its key and its size (schema.ItemSize).
type rendered struct {
	item map[string]types.AttributeValue
	spec schema.Table
	key  map[string]types.AttributeValue
	size int
}

// rowItem renders a counter row as stored: the row at version
// Expected+1, size-checked.
func rowItem(r RowPut) (rendered, error) {
	spec, key, err := keyed("row", r.Table, r.Item)
	if err != nil {
		return rendered{}, err
	}
	it := copyItem(r.Item)
	it[schema.AttrRowVersion] = avN(r.Expected + 1)
	n, err := checkSize(r.Table+" row", it)
	if err != nil {
		return rendered{}, err
	}
	return rendered{item: it, spec: spec, key: key, size: n}, nil
}

// versionedItem renders a projection item as stored: with its version and,
// in a shared-key table, its owner; size-checked.
func versionedItem(owner string, version int64, it Item) (rendered, error) {
	spec, key, err := keyed("item", it.Table, it.Item)
	if err != nil {
		return rendered{}, err
	}
	item := copyItem(it.Item)
	item[schema.AttrItemVersion] = avN(version)
	if sharedKeyTables[it.Table] {
		item[schema.AttrItemOwner] = avS(owner)
	}
	n, err := checkSize(it.Table+" item of "+owner, item)
	if err != nil {
		return rendered{}, err
	}
	return rendered{item: item, spec: spec, key: key, size: n}, nil
}

// sharedKeyTables are the projection tables where aggregates of different
// kinds write items of one key space (seed 001's single table: executions,
// albums and tasks are all pk=<id>); their items record their owner (_o).
// Elsewhere an item's key is a function of its aggregate's subject, so the
// owner would be 30 bytes per item (and per GSI copy) saying nothing.
var sharedKeyTables = map[string]bool{schema.TableWorkflows: true}

// itemPut builds the conditional put of one projection item (pure; its
// exact value is checked by golden tests under testdata/store):
// written when absent, or (in a shared-key table) owned by owner or by
// nobody (items written before ownership was recorded), at a version not
// newer than version.
func (s *DynamoStore) itemPut(owner string, version int64, it Item) (*dynamodb.PutItemInput, error) {
	st, err := versionedItem(owner, version, it)
	if err != nil {
		return nil, err
	}
	names := map[string]string{"#k": st.spec.Hash.Name, "#v": schema.AttrItemVersion}
	values := map[string]types.AttributeValue{":v": avN(version)}
	cond := "attribute_not_exists(#k) OR attribute_not_exists(#v) OR #v <= :v"
	if sharedKeyTables[it.Table] {
		names["#o"] = schema.AttrItemOwner
		values[":o"] = avS(owner)
		cond = "attribute_not_exists(#k) OR ((attribute_not_exists(#o) OR #o = :o) AND (attribute_not_exists(#v) OR #v <= :v))"
	}
	return &dynamodb.PutItemInput{
		TableName:                 aws.String(s.naming.Table(it.Table)),
		Item:                      st.item,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		// On a failed condition, tell a newer version (fine) from another
		// owner (a collision) without a second read.
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, nil
}

// PutItems implements Store: one conditional PutItem per item, side by side.
func (s *DynamoStore) PutItems(ctx context.Context, owner string, version int64, items []Item) error {
	ins := make([]*dynamodb.PutItemInput, len(items))
	for i, it := range items {
		in, err := s.itemPut(owner, version, it)
		if err != nil {
			return err
		}
		ins[i] = in
	}
	errs := make([]error, len(ins))
	put := func(i int) {
		s.requests.add(1)
		_, err := s.api.PutItem(ctx, ins[i])
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			if o, ok := ccf.Item[schema.AttrItemOwner].(*types.AttributeValueMemberS); ok && o.Value != owner {
				errs[i] = fmt.Errorf("%w: %s item %s belongs to %s, not %s", ErrItemOwned, items[i].Table, keyString(keyOf(items[i].Table, items[i].Item)), o.Value, owner)
			}
			return // a newer version is stored: nothing to do
		}
		if err != nil {
			errs[i] = fmt.Errorf("projector: put %s item: %w", items[i].Table, err)
		}
	}
	// Side by side: every put but the first in a goroutine of its own, the
	// first in this one (a lone item, the usual case, starts none).
	var wg sync.WaitGroup
	for i := 1; i < len(ins); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			put(i)
		}()
	}
	if len(ins) > 0 {
		put(0)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ItemVersions implements Store with eventually consistent BatchGetItems
// (a stale answer only rewrites an item that was already right).
func (s *DynamoStore) ItemVersions(ctx context.Context, items []Item) ([]int64, error) {
	out := make([]int64, len(items))
	byTable := map[string][]int{}
	for i, it := range items {
		byTable[it.Table] = append(byTable[it.Table], i)
	}
	for _, table := range sortedKeys(byTable) {
		idx := byTable[table]
		keys := make([]map[string]types.AttributeValue, 0, len(idx))
		pos := map[string]int{}
		for _, i := range idx {
			k := keyOf(table, items[i].Item)
			if _, dup := pos[keyString(k)]; dup {
				continue
			}
			pos[keyString(k)] = i
			keys = append(keys, k)
		}
		spec, _ := schema.TableSpec(table)
		read := types.KeysAndAttributes{ProjectionExpression: aws.String(projectionOf(spec)), ExpressionAttributeNames: projectionNames(spec)}
		err := s.batchGet(ctx, s.naming.Table(table), keys, read, func(it map[string]types.AttributeValue) error {
			if key, ok := spec.Key(it); ok {
				if i, ok := pos[keyString(key)]; ok {
					out[i] = numAttr(it, schema.AttrItemVersion)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// projectionOf names a table's key attributes and the item version, for
// ItemVersions (#k0.. are the keys, #v the version).
func projectionOf(spec schema.Table) string {
	p := "#k0, #v"
	if spec.Range != nil {
		p += ", #k1"
	}
	return p
}

func projectionNames(spec schema.Table) map[string]string {
	names := map[string]string{"#k0": spec.Hash.Name, "#v": schema.AttrItemVersion}
	if spec.Range != nil {
		names["#k1"] = spec.Range.Name
	}
	return names
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

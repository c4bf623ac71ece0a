package capacity_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// table creates a pay-per-request table keyed (pk S, sk S), with a GSI
// "by-g" on (g S) projecting ALL when gsi is set, and deletes it at the end.
func table(t *testing.T, ddb *dynamodb.Client, gsi bool) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "cap-" + hex.EncodeToString(b[:])
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
	}
	if gsi {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("by-g"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}}
	}
	ctx := context.Background()
	if _, err := ddb.CreateTable(ctx, in); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// item is an item of exactly size bytes by DynamoDB's measure (attribute
// names plus values): pk, sk and a "data" string filling the rest.
func item(pk, sk string, size int, extra map[string]types.AttributeValue) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
	used := len("pk") + len(pk) + len("sk") + len(sk) + len("data")
	for k, v := range extra {
		it[k] = v
		used += len(k) + len(v.(*types.AttributeValueMemberS).Value)
	}
	it["data"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", size-used)}
	return it
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

// TestMeterOnDynamoDBLocal checks the units a metered client records for each
// kind of call against what AWS's rules say they cost: 1 write unit per
// started KB (twice in a transaction, plus each index's write), 1 read unit
// per started 4 KB read consistently (half eventually consistently), Query
// rounding the sum of the items it read, BatchGetItem each item.
func TestMeterOnDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	ctx := context.Background()
	a, b := table(t, c.DynamoDB, false), table(t, c.DynamoDB, true)
	const kb = 1024
	size := 2*kb + kb/2 // 2.5 KB: 3 write units, 1 consistent read unit

	steps := []struct {
		name string
		call func(ddb *dynamodb.Client) error
		want capacity.Snapshot // Units, ByTable and ByOperation only
	}{
		{
			name: "PutItem 2.5 KB",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(a), Item: item("p", "1", size, nil)})
				return err
			},
			want: snap(w(3), map[string]capacity.TableUnits{a: {Units: w(3)}}, map[string]capacity.Operation{"PutItem": {Units: w(3), Calls: 1}}),
		},
		{
			name: "TransactWriteItems with the same put: double",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{TableName: aws.String(a), Item: item("p", "2", size, nil)}},
				}})
				return err
			},
			want: snap(w(6), map[string]capacity.TableUnits{a: {Units: w(6)}}, map[string]capacity.Operation{"TransactWriteItems": {Units: w(6), Calls: 1}}),
		},
		{
			name: "GetItem consistent 2.5 KB",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a), Key: key("p", "1"), ConsistentRead: aws.Bool(true)})
				return err
			},
			want: snap(r(1), map[string]capacity.TableUnits{a: {Units: r(1)}}, map[string]capacity.Operation{"GetItem": {Units: r(1), Calls: 1}}),
		},
		{
			name: "GetItem eventually consistent 2.5 KB",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a), Key: key("p", "1")})
				return err
			},
			want: snap(r(0.5), map[string]capacity.TableUnits{a: {Units: r(0.5)}}, map[string]capacity.Operation{"GetItem": {Units: r(0.5), Calls: 1}}),
		},
		{
			name: "BatchWriteItem over two tables, one with a GSI",
			call: func(ddb *dynamodb.Client) error {
				g := map[string]types.AttributeValue{"g": &types.AttributeValueMemberS{Value: "G"}}
				_, err := ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
					a: {{PutRequest: &types.PutRequest{Item: item("p", "3", size, nil)}}},
					b: {
						{PutRequest: &types.PutRequest{Item: item("q", "1", size, g)}},
						{PutRequest: &types.PutRequest{Item: item("q", "2", size, g)}},
					},
				}})
				return err
			},
			// b: 2 items × (3 base + 3 index).
			want: snap(w(15), map[string]capacity.TableUnits{
				a: {Units: w(3)},
				b: {Units: w(12), Indexes: map[string]capacity.Units{"by-g": w(6)}},
			}, map[string]capacity.Operation{"BatchWriteItem": {Units: w(15), Calls: 1}}),
		},
		{
			name: "BatchGetItem consistent: each item rounded",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
					a: {Keys: []map[string]types.AttributeValue{key("p", "1"), key("p", "2"), key("p", "3")}, ConsistentRead: aws.Bool(true)},
					b: {Keys: []map[string]types.AttributeValue{key("q", "1")}, ConsistentRead: aws.Bool(true)},
				}})
				return err
			},
			want: snap(r(4), map[string]capacity.TableUnits{a: {Units: r(3)}, b: {Units: r(1)}}, map[string]capacity.Operation{"BatchGetItem": {Units: r(4), Calls: 1}}),
		},
		{
			name: "Query consistent: the sum of 3 × 2.5 KB rounded up to 4 KB",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(a), KeyConditionExpression: aws.String("pk = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}}, ConsistentRead: aws.Bool(true)})
				return err
			},
			want: snap(r(2), map[string]capacity.TableUnits{a: {Units: r(2)}}, map[string]capacity.Operation{"Query": {Units: r(2), Calls: 1}}),
		},
		{
			name: "Query a GSI (eventually consistent): charged to the index",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(b), IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g = :g"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "G"}}})
				return err
			},
			want: snap(r(1), map[string]capacity.TableUnits{b: {Units: r(1), Indexes: map[string]capacity.Units{"by-g": r(1)}}}, map[string]capacity.Operation{"Query": {Units: r(1), Calls: 1}}),
		},
		{
			name: "PutItem into the GSI table: base plus index",
			call: func(ddb *dynamodb.Client) error {
				g := map[string]types.AttributeValue{"g": &types.AttributeValueMemberS{Value: "H"}}
				_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(b), Item: item("q", "3", size, g)})
				return err
			},
			want: snap(w(6), map[string]capacity.TableUnits{b: {Units: w(6), Indexes: map[string]capacity.Units{"by-g": w(3)}}}, map[string]capacity.Operation{"PutItem": {Units: w(6), Calls: 1}}),
		},
		{
			name: "UpdateItem: the larger of the old and the new item",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(a), Key: key("p", "1"), UpdateExpression: aws.String("SET n = :n"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "1"}}})
				return err
			},
			want: snap(w(3), map[string]capacity.TableUnits{a: {Units: w(3)}}, map[string]capacity.Operation{"UpdateItem": {Units: w(3), Calls: 1}}),
		},
		{
			name: "a failed conditional put reports nothing and is counted as failed",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(a), Item: item("p", "1", size, nil), ConditionExpression: aws.String("attribute_not_exists(pk)")})
				var ccf *types.ConditionalCheckFailedException
				if !errors.As(err, &ccf) {
					return errors.New("want ConditionalCheckFailedException, got " + errString(err))
				}
				return nil
			},
			want: snap(capacity.Units{}, map[string]capacity.TableUnits{}, map[string]capacity.Operation{"PutItem": {Calls: 1, Failed: 1}}),
		},
	}
	// What DynamoDB Local under-reports (docs/cost.md): AWS charges a read
	// that finds nothing (GetItem and BatchGetItem per key, Query per
	// partition searched); Local charges a GetItem of a missing item as AWS
	// does, but reports 0 for an empty Query and for BatchGetItem's missing
	// keys. These steps pin that, so that the docs are corrected if a newer
	// Local changes it.
	steps = append(steps, []struct {
		name string
		call func(ddb *dynamodb.Client) error
		want capacity.Snapshot
	}{
		{
			name: "GetItem of a missing item: half a unit, as AWS",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a), Key: key("none", "1")})
				return err
			},
			want: snap(r(0.5), map[string]capacity.TableUnits{a: {Units: r(0.5)}}, map[string]capacity.Operation{"GetItem": {Units: r(0.5), Calls: 1}}),
		},
		{
			name: "Local: an empty Query reports 0 (AWS charges the minimum)",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(a), KeyConditionExpression: aws.String("pk = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "none"}}, ConsistentRead: aws.Bool(true)})
				return err
			},
			want: snap(capacity.Units{}, map[string]capacity.TableUnits{a: {}}, map[string]capacity.Operation{"Query": {Calls: 1}}),
		},
		{
			name: "Local: BatchGetItem reports 0 for missing keys (AWS charges each key)",
			call: func(ddb *dynamodb.Client) error {
				_, err := ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
					a: {Keys: []map[string]types.AttributeValue{key("p", "1"), key("none", "1"), key("none", "2")}, ConsistentRead: aws.Bool(true)},
				}})
				return err
			},
			want: snap(r(1), map[string]capacity.TableUnits{a: {Units: r(1)}}, map[string]capacity.Operation{"BatchGetItem": {Units: r(1), Calls: 1}}),
		},
	}...)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			m := capacity.NewMeter()
			ddb := dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(m))
			if err := st.call(ddb); err != nil {
				t.Fatal(err)
			}
			got := m.Snapshot()
			got.Dollars = 0
			if !equalJSON(t, got, st.want) {
				t.Fatalf("recorded\n%s\nwant\n%s", mustJSON(t, got), mustJSON(t, st.want))
			}
		})
	}

	t.Run("the caller's input is left as it was", func(t *testing.T) {
		m := capacity.NewMeter()
		ddb := dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(m))
		in := &dynamodb.GetItemInput{TableName: aws.String(a), Key: key("p", "1")}
		out, err := ddb.GetItem(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if in.ReturnConsumedCapacity != "" {
			t.Errorf("input's ReturnConsumedCapacity = %q, want it untouched", in.ReturnConsumedCapacity)
		}
		if out.ConsumedCapacity == nil {
			t.Error("the caller does not see the ConsumedCapacity the meter asked for")
		}
	})

	t.Run("a per-call meter on a metered client records into both", func(t *testing.T) {
		client, call := capacity.NewMeter(), capacity.NewMeter()
		ddb := dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(client))
		if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(a), Item: item("p", "9", size, nil)}, capacity.WithMeter(call)); err != nil {
			t.Fatal(err)
		}
		if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(a), Item: item("p", "9", size, nil)}); err != nil {
			t.Fatal(err)
		}
		if got := client.Snapshot().Write; got != 6 {
			t.Errorf("client meter: %v write units, want 6", got)
		}
		if got := call.Snapshot().Write; got != 3 {
			t.Errorf("per-call meter: %v write units, want 3", got)
		}
	})

	t.Run("concurrent calls add up", func(t *testing.T) {
		m := capacity.NewMeter()
		ddb := dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(m))
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		errs := make(chan error, 20)
		for i := range 20 {
			go func() {
				_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(a), Item: item("c", string(rune('a'+i)), size, nil)})
				errs <- err
			}()
		}
		for range 20 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if got := m.Snapshot(); got.Write != 60 || got.ByOperation["PutItem"].Calls != 20 {
			t.Errorf("20 concurrent 3-unit puts recorded %v write units in %d calls", got.Write, got.ByOperation["PutItem"].Calls)
		}
	})
}

func w(u float64) capacity.Units { return capacity.Units{Write: u} }
func r(u float64) capacity.Units { return capacity.Units{Read: u} }

func snap(u capacity.Units, tables map[string]capacity.TableUnits, ops map[string]capacity.Operation) capacity.Snapshot {
	return capacity.Snapshot{Units: u, ByTable: tables, ByOperation: ops}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

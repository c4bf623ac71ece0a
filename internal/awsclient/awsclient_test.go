package awsclient_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// TestMeteredDynamoDB: a metered client reaches the same endpoint and
// records into its own meter only; the plain client stays unmetered.
func TestMeteredDynamoDB(t *testing.T) {
	c := testenv.Clients(t)
	ctx := context.Background()
	var r [4]byte
	_, _ = rand.Read(r[:])
	table := "awsclient-" + hex.EncodeToString(r[:])
	if _, err := c.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DynamoDB.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})

	ma, mb := capacity.NewMeter(), capacity.NewMeter()
	a, b := c.MeteredDynamoDB(ma), c.MeteredDynamoDB(mb)
	put := func(ddb *dynamodb.Client, id string) *dynamodb.PutItemOutput {
		t.Helper()
		out, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"pk":  &types.AttributeValueMemberS{Value: id},
			"pad": &types.AttributeValueMemberS{Value: strings.Repeat("x", 1500)}, // 1.5 KB: 2 units
		}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	put(a, "1")
	put(a, "2")
	put(b, "3")
	if out := put(c.DynamoDB, "4"); out.ConsumedCapacity != nil {
		t.Error("the plain client asked for consumed capacity")
	}
	if got := ma.Snapshot(); got.Write != 4 || got.ByTable[table].Write != 4 {
		t.Errorf("meter a: %+v, want 4 write units on %s", got, table)
	}
	if got := mb.Snapshot(); got.Write != 2 {
		t.Errorf("meter b: %v write units, want 2", got.Write)
	}
}

package storetest_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/projector/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		m := projector.NewMemStore()
		return storetest.Harness{Store: m, Get: m.Get}
	})
}

func TestDynamoStore(t *testing.T) {
	c := testenv.Clients(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		n, _ := testenv.Tables(t, c)
		st, err := projector.NewDynamoStore(c.DynamoDB, n)
		if err != nil {
			t.Fatal(err)
		}
		get := func(ctx context.Context, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
			out, err := c.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(n.Table(table)), Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil {
				return nil, err
			}
			return out.Item, nil
		}
		return storetest.Harness{Store: st, Get: get}
	})
}

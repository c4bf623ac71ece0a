package awsclient_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// TestMissingTableIsNamed: a call on a table that does not exist fails
// with a *TableNotFoundError naming the operation and the table(s), on the
// plain and on a metered client; the service error stays in the chain.
func TestMissingTableIsNamed(t *testing.T) {
	c := testenv.Clients(t)
	ctx := context.Background()
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}
	calls := []struct {
		name   string
		call   func(*dynamodb.Client) error
		op     string
		tables []string
	}{
		{"GetItem", func(d *dynamodb.Client) error {
			_, err := d.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("nope-dev-events"), Key: key})
			return err
		}, "GetItem", []string{"nope-dev-events"}},
		{"PutItem on the metered client", func(d *dynamodb.Client) error {
			_, err := c.MeteredDynamoDB(capacity.NewMeter()).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("nope-dev-messages"), Item: key})
			return err
		}, "PutItem", []string{"nope-dev-messages"}},
		{"TransactWriteItems", func(d *dynamodb.Client) error {
			_, err := d.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String("nope-dev-aggregates"), Item: key}},
				{Delete: &types.Delete{TableName: aws.String("nope-dev-metrics"), Key: key}},
			}})
			return err
		}, "TransactWriteItems", []string{"nope-dev-aggregates", "nope-dev-metrics"}},
		{"BatchGetItem", func(d *dynamodb.Client) error {
			_, err := d.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				"nope-dev-workflow-jobs": {Keys: []map[string]types.AttributeValue{key}},
			}})
			return err
		}, "BatchGetItem", []string{"nope-dev-workflow-jobs"}},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(c.DynamoDB)
			var nf *awsclient.TableNotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("err = %v (%T), want a *TableNotFoundError", err, err)
			}
			if nf.Operation != tt.op || !reflect.DeepEqual(nf.Tables, tt.tables) {
				t.Fatalf("got operation %q tables %v, want %q %v", nf.Operation, nf.Tables, tt.op, tt.tables)
			}
			var rnf *types.ResourceNotFoundException
			if !errors.As(err, &rnf) {
				t.Fatalf("the service error is not in the chain: %v", err)
			}
			for _, name := range tt.tables {
				if !strings.Contains(err.Error(), name) {
					t.Fatalf("message %q does not name %s", err, name)
				}
			}
		})
	}
}

// Package batchget reads DynamoDB items by key: BatchGetItem requests of at
// most MaxKeys keys, the keys DynamoDB leaves unprocessed (throttling, the
// 16 MB response limit) asked again with jittered backoff.
//
// Items are handed over in the order DynamoDB returns them, which is not
// the order of the keys; a key without an item is simply not handed over.
package batchget

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/retry"
)

// MaxKeys is DynamoDB's limit of keys in one BatchGetItem request.
const MaxKeys = 100

// MaxRetries is how often one request's unprocessed keys are asked again
// before Each gives up.
const MaxRetries = 20

// API is the part of the DynamoDB client Each uses.
type API interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// Each reads keys of table and calls each with every item found. read
// gives the consistency and projection (its Keys are filled in). An error
// of each stops the read and is returned as is; errors of DynamoDB are
// returned as "read <table>: ...".
func Each(ctx context.Context, api API, table string, keys []map[string]types.AttributeValue, read types.KeysAndAttributes,
	each func(map[string]types.AttributeValue) error) error {
	for start := 0; start < len(keys); start += MaxKeys {
		ka := read
		ka.Keys = keys[start:min(start+MaxKeys, len(keys))]
		req := map[string]types.KeysAndAttributes{table: ka}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > MaxRetries {
				return fmt.Errorf("read %s: unprocessed keys after %d attempts", table, attempt)
			}
			if attempt > 0 {
				if err := retry.Sleep(ctx, retry.Full(10*time.Millisecond, time.Second, attempt)); err != nil {
					return err
				}
			}
			res, err := api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return fmt.Errorf("read %s: %w", table, err)
			}
			for _, it := range res.Responses[table] {
				if err := each(it); err != nil {
					return err
				}
			}
			req = res.UnprocessedKeys
		}
	}
	return nil
}

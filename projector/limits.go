package projector

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// DynamoDB's limits, which every Store (MemStore included) enforces and the
// projector plans around.
const (
	// MaxTxActions is the most actions one Commit may carry (TransactWriteItems).
	MaxTxActions = 100
	// MaxTxBytes is the most bytes of items one Commit may carry.
	MaxTxBytes = 4 << 20
	// MaxItemBytes is the largest item DynamoDB stores.
	MaxItemBytes = schema.MaxItemBytes
)

// ErrTooLarge is returned when a state, an item or a counter row would
// exceed MaxItemBytes. It is permanent: the aggregate's records are
// quarantined as poison, never retried.
var ErrTooLarge = errors.New("projector: item exceeds DynamoDB's 400 KB limit")

// ErrItemOwned is returned when a projection item's key is already held by
// another aggregate. It is permanent (the fold keys its items wrongly).
var ErrItemOwned = errors.New("projector: projection item owned by another aggregate")

// IsPermanent reports whether a commit error can never succeed on a retry,
// so that the aggregate's records are quarantined instead of redelivered:
// ErrTooLarge, ErrItemOwned, an item that breaks one of DynamoDB's limits
// (schema.ErrLimit, found by CheckItem before anything is committed), and a
// write DynamoDB refused as invalid (a ValidationException: the same write
// fails the same way on every attempt).
func IsPermanent(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrItemOwned) || errors.Is(err, schema.ErrLimit) || schema.IsRefusedByDynamoDB(err)
}

// ItemSize is an item's size by DynamoDB's rules (schema.ItemSize, checked
// against DynamoDB Local).
func ItemSize(item map[string]types.AttributeValue) int { return schema.ItemSize(item) }

// checkSize fails with ErrTooLarge when an item is over MaxItemBytes.
func checkSize(what string, item map[string]types.AttributeValue) (int, error) {
	n := ItemSize(item)
	if n > MaxItemBytes {
		return n, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, what, n)
	}
	return n, nil
}

package projector

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's limits, which every Store (MemStore included) enforces and the
// projector plans around.
const (
	// MaxTxActions is the most actions one Commit may carry (TransactWriteItems).
	MaxTxActions = 100
	// MaxTxBytes is the most bytes of items one Commit may carry.
	MaxTxBytes = 4 << 20
	// MaxItemBytes is the largest item DynamoDB stores.
	MaxItemBytes = 400 << 10
)

// ErrTooLarge is returned when a state, an item or a counter row would
// exceed MaxItemBytes. It is permanent: the aggregate's records are
// quarantined as poison, never retried.
var ErrTooLarge = errors.New("projector: item exceeds DynamoDB's 400 KB limit")

// ErrItemOwned is returned when a projection item's key is already held by
// another aggregate. It is permanent (the fold keys its items wrongly).
var ErrItemOwned = errors.New("projector: projection item owned by another aggregate")

// IsPermanent reports whether a commit error can never succeed on a retry,
// so that the aggregate's records are quarantined instead of redelivered.
func IsPermanent(err error) bool { return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrItemOwned) }

// ItemSize is an item's size by DynamoDB's rules: attribute names plus
// values (strings and binaries by length, numbers by significant digits,
// 3 bytes of overhead per list or map plus its elements).
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return len(t.Value)
	case *types.AttributeValueMemberN:
		return numberSize(t.Value)
	case *types.AttributeValueMemberB:
		return len(t.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range t.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range t.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range t.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range t.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range t.Value {
			n += len(b)
		}
		return n
	}
	return 0
}

// numberSize is about (significant digits)/2 + 1 bytes, at most 21.
func numberSize(s string) int {
	digits := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return min((digits+1)/2+1, 21)
}

// checkSize fails with ErrTooLarge when an item is over MaxItemBytes.
func checkSize(what string, item map[string]types.AttributeValue) (int, error) {
	n := ItemSize(item)
	if n > MaxItemBytes {
		return n, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, what, n)
	}
	return n, nil
}

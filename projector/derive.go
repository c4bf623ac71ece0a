package projector

import (
	"math/big"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A rowDeriver computes the attributes of a counter row of one table that
// are functions of its counters and cannot be maintained by ADD (for
// example an average, or a run's status). It returns nil for a row with
// nothing to derive; a nil value in its result means the attribute must be
// absent (it is removed). Each is registered by the fold whose
// contributions make the rows, from its own file (registerDeriver).
type rowDeriver func(row map[string]types.AttributeValue) map[string]types.AttributeValue

var derivers = map[string]rowDeriver{}

// registerDeriver registers the deriver of a table's counter rows.
func registerDeriver(table string, d rowDeriver) {
	if _, dup := derivers[table]; dup {
		panic("projector: two derivers for table " + table)
	}
	derivers[table] = d
}

// DeriveRow returns the attributes of a counter row that are functions of
// its counters and cannot be maintained by ADD: seed 001's averages on daily
// metrics rows (fold_albums.go) and seed 003's run status and conclusion
// (fold_github.go). It returns nil for rows with nothing to derive.
//
// The projector computes them in the same write that moves the counters
// (the row is written whole, compare-and-set on its version), so they are
// always consistent with the counters. A nil value means the attribute must
// be absent (it is removed).
func DeriveRow(table string, row map[string]types.AttributeValue) map[string]types.AttributeValue {
	if d, ok := derivers[table]; ok {
		return d(row)
	}
	return nil
}

// ratAttr reads a number attribute of a row as an exact rational (0 when
// absent).
func ratAttr(row map[string]types.AttributeValue, name string) *big.Rat {
	r := new(big.Rat)
	if n, ok := row[name].(*types.AttributeValueMemberN); ok {
		r.SetString(n.Value)
	}
	return r
}

// ratQuo renders a / b rounded to places decimals as a number attribute
// (0 when b is 0).
func ratQuo(a, b *big.Rat, places int) types.AttributeValue {
	if b.Sign() == 0 {
		return &types.AttributeValueMemberN{Value: "0"}
	}
	return &types.AttributeValueMemberN{Value: NormalizeNumber(new(big.Rat).Quo(a, b).FloatString(places))}
}

// ApplyDerived sets the attributes DeriveRow returned on row, removing those
// it returned as nil.
func ApplyDerived(row, derived map[string]types.AttributeValue) {
	for k, v := range derived {
		if v == nil {
			delete(row, k)
			continue
		}
		row[k] = v
	}
}

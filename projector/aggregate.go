package projector

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Aggregate is the folded state of one subject (a job, an execution, a
// message, ...). Implementations are plain structs that marshal to JSON: the
// state is stored as JSON text in the aggregates table and read back before
// the next fold.
//
// Apply must be a join: idempotent (applying an event twice equals applying
// it once), commutative and associative (any order of any multiset of the
// same events gives the same state). Every field is therefore a max by
// precedence, a min or max of times, a last-writer-wins register ordered by
// (event time, event id), or a map of such. This is what makes duplicates,
// redeliveries and out-of-order arrival harmless.
type Aggregate interface {
	// Apply folds one validated event of this aggregate's subject.
	Apply(e schema.Event, p schema.Payload)
	// Items returns the projection items the state implies (full items, keys
	// included), to be written as puts. An empty result writes nothing (for
	// example a non-agent execution).
	Items() []Item
	// Contributions returns what this state adds to shared counter rows. The
	// projector writes contributions(new) - contributions(old) as ADD deltas,
	// so a counter row always equals the sum over aggregates of their current
	// contributions.
	Contributions() []Contribution
}

// Item is one projection item to put.
type Item struct {
	// Table is the logical table name (schema.Table*).
	Table string
	Item  map[string]types.AttributeValue
}

// Contribution is one aggregate's share of one counter row.
type Contribution struct {
	// Table is the logical table name of the counter row.
	Table string
	// Key is the row's primary key.
	Key map[string]types.AttributeValue
	// Attrs are static attributes set on the row, e.g. entityType, date, a
	// run's workflow name. Several aggregates contribute to one row, so each
	// attribute is a join over its contributors: the value with the greatest
	// stamp in Stamps wins (an attribute without a stamp is a function of
	// the key, the same from every contributor). An attribute a contributor
	// does not know is left out, never written as absent.
	Attrs map[string]types.AttributeValue
	// Stamps orders the values of Attrs across contributors (see Attrs).
	Stamps map[string]Stamp
	// Counters are integer counters to ADD. A counter listed in Scale is a
	// fixed-point decimal: value 6000 with scale 6 is written as 0.006000
	// (money is kept in micro- or nano-dollars, see Micros and Nanos), so
	// sums stay exact. The scale is the counter's unit: values of one
	// counter at different scales are combined at the larger one (see
	// scale.go), so a deploy may change a counter's scale.
	Counters map[string]int64
	Scale    map[string]int
}

// RowID identifies a counter row: its table and key, rendered canonically.
func (c Contribution) RowID() string { return c.Table + "\x00" + keyString(c.Key) }

// Micros converts dollars to integer micro-dollars, rounding half away from zero.
func Micros(dollars float64) int64 {
	if dollars < 0 {
		return -int64(-dollars*1e6 + 0.5)
	}
	return int64(dollars*1e6 + 0.5)
}

// Nanos converts dollars with at most 9 decimal places (schema's
// MaxCostDecimals) to integer nano-dollars exactly, from the shortest
// decimal form of the float, never by float multiplication.
func Nanos(dollars float64) int64 {
	s := strconv.FormatFloat(dollars, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 9 {
		frac = frac[:9] // validation refuses more; never reached for valid events
	}
	frac += strings.Repeat("0", 9-len(frac))
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	n := w*1_000_000_000 + f
	if neg {
		return -n
	}
	return n
}

// AggregateKind names an aggregate type. It is stored next to the state so
// that the state can be decoded again.
type AggregateKind string

// The aggregate kinds, one per kind of subject; each is declared by its
// domain in schema (schema.Aggregate) and its fold registers under it.
const (
	KindAgentExecution AggregateKind = schema.AggregateAgentExecution // states/execution/<arn>
	KindAlbumExecution AggregateKind = schema.AggregateAlbumExecution // albums/execution/<id> (execution + its albums)
	KindTask           AggregateKind = schema.AggregateTask           // albums/task/<id>
	KindJob            AggregateKind = schema.AggregateJob            // github/<inst>/job/<id> (webhooks + runner events)
	KindDeployment     AggregateKind = schema.AggregateDeployment     // github/<inst>/deployment/<id>
	KindMessage        AggregateKind = schema.AggregateMessage        // messages/<id>
)

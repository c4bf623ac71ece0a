package projector

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// The folds are pure: Apply, Items and Contributions read nothing but the
// state and the event, never the clock. Every state field is one of
//
//   - a constant of the subject (an ARN, an id) joined with keepLeast, so that
//     even a producer that disagrees with itself gives one answer;
//   - a min or max of times (keepEarliest, keepLatest);
//   - an LWW register, ordered by Stamp: (rank, event time, event id);
//   - a status register, an LWW whose rank is the status's Precedence, so a
//     later status of a lower rank never overwrites a higher one;
//   - a map or a set of the above.
//
// Each is a join (idempotent, commutative, associative), so a state folds to
// the same value from any order of any multiset of the same events.

// folds holds each aggregate kind's constructor. Every fold registers itself
// from its own file (registerFold); the event types that reach it are the
// ones its domain declares in schema (schema.Kind.Aggregate).
var folds = map[AggregateKind]func() Aggregate{}

// registerFold registers the fold of an aggregate kind. It panics for a kind
// no schema domain declares and for a kind registered twice, so a fold
// without events, or a domain without a fold, fails at start-up (and in
// TestEveryTypeHasAFold), never on the first event.
func registerFold(k AggregateKind, newState func() Aggregate) {
	if _, ok := schema.AggregateOf(string(k)); !ok {
		panic("projector: no schema domain declares aggregate " + string(k))
	}
	if _, dup := folds[k]; dup {
		panic("projector: fold " + string(k) + " registered twice")
	}
	folds[k] = newState
}

// KindFor returns the aggregate kind an event type folds into, as its
// schema domain declares it.
func KindFor(eventType string) (AggregateKind, bool) {
	k, ok := schema.KindOf(eventType)
	if !ok {
		return "", false
	}
	_, folded := folds[AggregateKind(k.Aggregate)]
	return AggregateKind(k.Aggregate), folded
}

// NewAggregate returns an empty aggregate of a kind (nil for an unknown kind).
// Its state is a pointer to a struct that marshals to JSON; unmarshal stored
// state into it to resume folding.
func NewAggregate(k AggregateKind) Aggregate {
	if f, ok := folds[k]; ok {
		return f()
	}
	return nil
}

// lifecycleOf is an aggregate kind's lifecycle, as its schema domain
// declares it.
func lifecycleOf(k AggregateKind) schema.Lifecycle {
	a, ok := schema.AggregateOf(string(k))
	if !ok {
		panic("projector: no schema domain declares aggregate " + string(k))
	}
	return a.Lifecycle
}

// precedenceOf is the Precedence of an aggregate kind's lifecycle, as its
// schema domain declares it.
func precedenceOf(k AggregateKind) Precedence {
	p := Precedence{}
	for _, st := range lifecycleOf(k) {
		p[st.Name] = st.Rank
	}
	return p
}

// Stamp orders the writes of LWW registers: by Rank, then event time, then
// event id. Rank is 0 for plain last-writer-wins and the status's precedence
// for status registers. Within one subject (time, id) identifies an event,
// and an event writes a register at most once, so the order is total.
type Stamp struct {
	Rank int       `json:"r,omitempty"`
	Time time.Time `json:"t"`
	ID   string    `json:"id"`
}

// StampOf is the rank-0 stamp of an event.
func StampOf(e schema.Event) Stamp { return Stamp{Time: e.Time.UTC(), ID: e.ID} }

// Ranked returns the stamp with another rank.
func (s Stamp) Ranked(rank int) Stamp {
	s.Rank = rank
	return s
}

// Compare returns -1, 0 or +1 as s orders before, equal to or after o.
func (s Stamp) Compare(o Stamp) int {
	switch {
	case s.Rank != o.Rank:
		if s.Rank < o.Rank {
			return -1
		}
		return 1
	case !s.Time.Equal(o.Time):
		return s.Time.Compare(o.Time)
	}
	return strings.Compare(s.ID, o.ID)
}

// IsZero reports an unset stamp (no event has written the register).
func (s Stamp) IsZero() bool { return s.Rank == 0 && s.Time.IsZero() && s.ID == "" }

// LWW is a last-writer-wins register: it holds the value written with the
// greatest Stamp. It marshals as {"r":rank,"t":time,"id":id,"v":value}.
type LWW[T any] struct {
	Stamp
	V T `json:"v"`
}

// Set writes v if s orders after the current stamp (or the register is unset).
func (r *LWW[T]) Set(s Stamp, v T) {
	if r.Stamp.IsZero() || s.Compare(r.Stamp) > 0 {
		r.Stamp, r.V = s, v
	}
}

// Known reports whether any event has written the register.
func (r LWW[T]) Known() bool { return !r.Stamp.IsZero() }

// IsZero reports an unset register (for the omitzero JSON option).
func (r LWW[T]) IsZero() bool { return r.Stamp.IsZero() }

// Precedence ranks the statuses of a lifecycle: a status register moves only
// to a status of a higher rank, or of the same rank with a later stamp (for
// example two terminal statuses, or running and waiting that alternate).
type Precedence map[string]int

// Offer writes status into r if its precedence allows it; an unknown status
// is ignored. It returns the ranked stamp it used (for registers that must
// follow the status, such as a terminal status's stop time) and whether the
// status was known.
func (p Precedence) Offer(r *LWW[string], status string, s Stamp) (Stamp, bool) {
	rank, ok := p[status]
	if !ok {
		return s, false
	}
	s = s.Ranked(rank)
	r.Set(s, status)
	return s, true
}

// keepLeast joins a constant of the subject: the least non-empty value.
func keepLeast(dst *string, v string) {
	if v != "" && (*dst == "" || v < *dst) {
		*dst = v
	}
}

// keepMax joins a non-negative integer constant of the subject.
func keepMax[T int | int64](dst *T, v T) {
	if v > *dst {
		*dst = v
	}
}

// keepEarliest keeps the earliest non-zero time.
func keepEarliest(dst *time.Time, t time.Time) {
	if t.IsZero() {
		return
	}
	t = t.UTC()
	if dst.IsZero() || t.Before(*dst) {
		*dst = t
	}
}

// keepLatest keeps the latest non-zero time.
func keepLatest(dst *time.Time, t time.Time) {
	if t.IsZero() {
		return
	}
	t = t.UTC()
	if dst.IsZero() || t.After(*dst) {
		*dst = t
	}
}

// recordedTime is when the writer appended the event, or its time when the
// event was never appended (unit tests, replays of raw files).
func recordedTime(e schema.Event) time.Time {
	if e.RecordedAt != nil && !e.RecordedAt.IsZero() {
		return e.RecordedAt.UTC()
	}
	return e.Time.UTC()
}

// statusOf is the status an event moves its subject to, as its domain
// declares it ("" when the payload decides).
func statusOf(e schema.Event) string {
	st, _ := schema.StatusOf(e.Type)
	return st
}

// payloadOf returns the typed payload, decoding the event when none is given.
func payloadOf(e schema.Event, p schema.Payload) schema.Payload {
	if p != nil {
		return p
	}
	p, err := schema.Decode(e)
	if err != nil {
		return nil
	}
	return p
}

// ttlOf is the expiry (epoch seconds) of an item of a table whose
// aggregate's events were last recorded at t (retention policy: see
// docs/projector.md, "Retention"): the table's TTLDays after t.
func ttlOf(table string, t time.Time) int64 {
	spec, _ := schema.TableSpec(table)
	return t.AddDate(0, 0, spec.TTLDays).Unix()
}

// rowTTL is the expiry a contributor gives a counter row with a TTL: its
// own item's expiry rounded up to the next UTC midnight. The row keeps the
// greatest among its contributors (a join by stamp, see ttlAttr), so it
// expires with the last of them, at most a day later; the rounding keeps
// the row's ttl from moving, and the row from being rewritten, with every
// event of a job recorded on the same day.
func rowTTL(itemTTL int64) int64 { return schema.RowTTL(itemTTL) }

// ttlAttr sets a row's ttl attribute in a contribution, stamped with the
// expiry itself so that the row keeps the greatest.
func ttlAttr(attrs map[string]types.AttributeValue, stamps map[string]Stamp, ttl int64) {
	attrs[schema.AttrTTL] = avN(ttl)
	stamps[schema.AttrTTL] = Stamp{Time: time.Unix(ttl, 0).UTC()}
}

// dayOf is the UTC date of t, "2006-01-02".
func dayOf(t time.Time) string { return t.UTC().Format("2006-01-02") }

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

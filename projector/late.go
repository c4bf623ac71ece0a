package projector

import (
	"cmp"
	"slices"
	"strings"
)

// Late events: the one rule for an event that arrives after its
// aggregate's projection has expired (docs/projector.md, "Late events").
//
// An aggregate's expiry is the greatest expiry among its items and its
// contributions to counter rows with a TTL, under the retention
// (Config.RetentionDays): for a job, its run row's (which outlives the job
// item by at most a day); for a message or a deployment, its item's. An
// aggregate with nothing that expires (executions, albums, tasks) never
// expires.
//
// An event recorded (recordedat) at or after the expiry of its aggregate,
// as folded from the events recorded before it, is late: it is not
// applied. The state stays as it was, no item or counter row is written,
// and Outcome.Late counts it; the archive keeps it like every event. Since
// the state does not move, the expiry does not either: every later event
// of that aggregate is late too. So DynamoDB's TTL deleting a run row, a
// job item or a message item is final: nothing recreates them half-empty
// (a run row holding a late job's attributes and no total_jobs, a message
// whose only stage is a late "failed").
//
// The rule is a function of the aggregate's events and their recordedat
// alone (the fold applies a subject's inputs in (recordedat, id) order,
// which a join allows), never of the clock, so a rebuild or a verify that
// folds the archive decides exactly what the stream projector decided.

// expiryOf is the greatest expiry, under the retention, of items and of
// contributions to rows with a TTL; has is false when none has a TTL.
func (r retention) expiryOf(items []Item, cs []Contribution) (exp int64, has bool) {
	for _, it := range items {
		if ttl, ok, _ := r.expiry(it.Table, it.Item); ok && (!has || ttl > exp) {
			exp, has = ttl, true
		}
	}
	for _, c := range cs {
		if ttl, ok, _ := r.expiry(c.Table, c.Attrs); ok && (!has || ttl > exp) {
			exp, has = ttl, true
		}
	}
	return exp, has
}

// applyInTime applies inputs to agg in (recordedat, id) order, leaving out
// the late ones: those recorded at or after the expiry of agg as folded so
// far. items and cs are agg's items and contributions before any input
// (the stored state's). It returns the inputs applied, in the order
// applied, and how many were late.
//
// Recomputing the expiry costs an Items and a Contributions call, so it is
// done only when an input could be late. Every item and row with a TTL
// counts from its aggregate's latest recordedat, at least a day ahead
// (a retention is whole days), so once an input recorded at t is applied
// nothing recorded before t + 1 day can be late; and the expiry only grows
// as events are applied. A fold whose events were recorded within a day of
// each other, or within the stored state's expiry, pays nothing more.
func (r retention) applyInTime(agg Aggregate, inputs []Input, items []Item, cs []Contribution) ([]Input, int) {
	const day = 86400
	ordered := slices.Clone(inputs)
	slices.SortStableFunc(ordered, func(a, b Input) int {
		return cmp.Or(recordedTime(a.Event).Compare(recordedTime(b.Event)), strings.Compare(a.Event.ID, b.Event.ID))
	})
	exp, has := r.expiryOf(items, cs)
	applied := false
	// safe: once something is applied, an input recorded before it is not late.
	var safe int64
	kept := ordered[:0]
	late := 0
	for _, in := range ordered {
		at := recordedTime(in.Event).Unix()
		isLate := false
		switch {
		case !applied:
			isLate = has && at >= exp
		case at < safe:
		default:
			exp, has = r.expiryOf(itemsOf(agg), contributionsOf(agg))
			isLate = has && at >= exp
		}
		if isLate {
			late++
			continue
		}
		agg.Apply(in.Event, in.Payload)
		kept = append(kept, in)
		applied = true
		safe = max(safe, at+day)
		if has {
			safe = max(safe, exp)
		}
	}
	return kept, late
}

package projector

import "github.com/streamfold/streamfold/schema"

// Exposed to the external tests.
var (
	NextRowForTest = nextRow
	RescaleForTest = rescale
	// RowDeltasCheckedForTest and MergeRowDeltaCheckedForTest return the
	// error a counter out of range gives; the unchecked forms panic on it.
	RowDeltasCheckedForTest     = rowDeltas
	MergeRowDeltaCheckedForTest = mergeRowDelta
)

// RowDeltasForTest is rowDeltas for inputs that cannot overflow.
func RowDeltasForTest(applied, prev, next []Contribution) []Contribution {
	d, err := rowDeltas(applied, prev, next)
	if err != nil {
		panic(err)
	}
	return d
}

// MergeRowDeltaForTest is mergeRowDelta for inputs that cannot overflow.
func MergeRowDeltaForTest(acc *Contribution, d Contribution) {
	if err := mergeRowDelta(acc, d); err != nil {
		panic(err)
	}
}

// SetContributionsHookForTest rewrites every aggregate's contributions
// until the returned function is called: a stand-in for a deploy that
// changes the counting rules.
func SetContributionsHookForTest(h func(Aggregate, []Contribution) []Contribution) (restore func()) {
	prev := contributionsHook
	contributionsHook = h
	return func() { contributionsHook = prev }
}

// InputUnchecked is an input from an event already decoded into payload,
// without Validate's limits: the projector's own guards (a row past 400 KB)
// are reached only by events the limits at the door now refuse, so tests
// of those guards build them past the door.
func InputUnchecked(ev schema.Event, payload schema.Payload, seq string) (Input, bool, error) {
	return inputFrom(ev, payload, seq)
}

// SetItemsHookForTest rewrites every aggregate's items until the returned
// function is called (with SetContributionsHookForTest: a projector of
// another version).
func SetItemsHookForTest(h func(Aggregate, []Item) []Item) (restore func()) {
	prev := itemsHook
	itemsHook = h
	return func() { itemsHook = prev }
}

// LegacyRunContributionsForTest is what a projector before run job items
// applied to a job's run summary row (nil for other aggregates).
func LegacyRunContributionsForTest(a Aggregate) []Contribution {
	if j, ok := a.(*JobState); ok {
		return j.legacyContributions()
	}
	return nil
}

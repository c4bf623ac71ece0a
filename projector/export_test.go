package projector

// Exposed to the external tests.
var (
	MergeRowDeltaForTest = mergeRowDelta
	NextRowForTest       = nextRow
	RowDeltasForTest     = rowDeltas
)

// SetContributionsHookForTest rewrites every aggregate's contributions
// until the returned function is called: a stand-in for a deploy that
// changes the counting rules.
func SetContributionsHookForTest(h func(Aggregate, []Contribution) []Contribution) (restore func()) {
	prev := contributionsHook
	contributionsHook = h
	return func() { contributionsHook = prev }
}

package projector

// MergeDeltasForTest exposes mergeDeltas to the external tests.
var MergeDeltasForTest = mergeDeltas

package schema

import "strings"

// Attributes the projector keeps on projection items and counter rows for
// its own bookkeeping. They are not part of any seed's item shape: readers
// (query, the API, the CLI, verify) drop them with StripInternal.
const (
	// AttrItemOwner is the subject (aggregate) that owns a projection item:
	// two aggregates can never write the same item.
	AttrItemOwner = "_o"
	// AttrItemVersion is the version of the owner's state the item was
	// written from: an older state never overwrites a newer item.
	AttrItemVersion = "_v"
	// AttrRowVersion counts the writes of a counter row; every write is
	// conditioned on the version it read (compare-and-set).
	AttrRowVersion = "_rv"
	// AttrRowStamps maps each static attribute of a counter row to the
	// stamp of the value it holds (the greatest among its contributors).
	AttrRowStamps = "_at"
	// AttrCountsInRun marks a workflow-jobs item that counts in its run's
	// summary by itself (JobItem.CountsInRun, SummarizeRun).
	AttrCountsInRun = "_r"
)

// IsInternalAttribute reports whether an attribute name is projector
// bookkeeping (it starts with an underscore) or the write shard of a sharded
// index (AttrGSIShard) rather than part of the item.
func IsInternalAttribute(name string) bool {
	return strings.HasPrefix(name, "_") || name == AttrGSIShard
}

// StripInternal deletes the projector's bookkeeping attributes from item in
// place and returns it.
func StripInternal[V any](item map[string]V) map[string]V {
	for k := range item {
		if IsInternalAttribute(k) {
			delete(item, k)
		}
	}
	return item
}

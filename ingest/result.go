package ingest

// Outcome is what happened to one event handed to Append.
type Outcome int

// Outcomes of an append.
const (
	// Accepted: the event was new and is now in the event table.
	Accepted Outcome = iota + 1
	// Duplicate: an event with the same subject and id was already there; nothing was written.
	Duplicate
	// Rejected: the event failed validation; nothing was written.
	Rejected
	// Failed: the write failed (after retries); the event may be retried.
	Failed
	// Conflict: an event with the same subject and id but different content
	// (schema.ContentHash) was already there; nothing was written, the
	// stored event stays (ErrConflict, *ConflictError).
	Conflict
)

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Duplicate:
		return "duplicate"
	case Rejected:
		return "rejected"
	case Failed:
		return "failed"
	case Conflict:
		return "conflict"
	}
	return "unknown"
}

// Result reports an Append call, one entry per input event, in input order.
type Result struct {
	Outcomes []Outcome
	// Errors holds, for Rejected, Failed and Conflict events, why; nil
	// otherwise.
	Errors []error
}

// Count returns how many events had the outcome.
func (r Result) Count(o Outcome) int {
	n := 0
	for _, x := range r.Outcomes {
		if x == o {
			n++
		}
	}
	return n
}

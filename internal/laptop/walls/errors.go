package walls

import "errors"

// Sentinel errors. Match them with errors.Is.
var (
	// ErrUnknownRoot: a rule's root is not in the graph (a typo, or a
	// package that was moved without its rule).
	ErrUnknownRoot = errors.New("walls: root package not in the graph")
	// ErrBadRule: a rule does not validate; the error names the field.
	ErrBadRule = errors.New("walls: bad rule")
	// ErrGoList: `go list` failed; the error carries its standard error.
	ErrGoList = errors.New("walls: go list failed")
)

package rebuild

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrTargetNotEmpty is returned (wrapped in a *NotEmptyError) by
// PrepareFresh when a target table already holds items and force is off.
var ErrTargetNotEmpty = errors.New("rebuild: target tables are not empty")

// ErrIncomplete is returned (wrapped in an *IncompleteError) when some
// subjects could not be projected after every retry round. The others were
// committed; running Rebuild again retries the rest (it is idempotent).
var ErrIncomplete = errors.New("rebuild: some subjects were not projected")

// NotEmptyError names the target tables that hold items.
type NotEmptyError struct {
	Tables []string // physical names
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("rebuild: target tables already hold items: %s (choose an empty target or force)", strings.Join(e.Tables, ", "))
}

// Unwrap makes errors.Is(err, ErrTargetNotEmpty) hold.
func (e *NotEmptyError) Unwrap() error { return ErrTargetNotEmpty }

// IncompleteError lists the subjects that were not projected and why.
type IncompleteError struct {
	Failed map[string]error
}

func (e *IncompleteError) Error() string {
	subjects := make([]string, 0, len(e.Failed))
	for s := range e.Failed {
		subjects = append(subjects, s)
	}
	sort.Strings(subjects)
	const show = 3
	var parts []string
	for i, s := range subjects {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(subjects)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %v", s, e.Failed[s]))
	}
	return fmt.Sprintf("rebuild: %d subjects not projected: %s", len(subjects), strings.Join(parts, "; "))
}

// Unwrap makes errors.Is(err, ErrIncomplete) hold.
func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

package projector

import (
	"errors"
	"fmt"
	"math"
)

// A counter's scale is its unit: value v at scale s means v / 10^s (cost
// 500000 at scale 6, micro-dollars, and 500000000 at scale 9, nano-dollars,
// are both 0.5). Every contribution records the scale of each of its
// counters, and the applied contributions a state keeps record theirs
// (absent: scale 0), so a deploy that changes a counter's scale never mixes
// units: two values of one counter are added only once both are at the
// larger of their scales (exactly: a value is multiplied by a power of ten,
// never divided). The counter rows themselves hold decimals, which need no
// rescaling.

// ErrCounterRange is returned when a counter's value, brought to a larger
// scale to be added to another, no longer fits an int64. It is permanent:
// the aggregate is quarantined, never retried.
var ErrCounterRange = errors.New("projector: counter out of range at its scale")

// MaxScale is the largest counter scale (10^18 still fits an int64).
const MaxScale = 18

// rescale returns v at scale to (to >= from), or ErrCounterRange.
func rescale(v int64, from, to int) (int64, error) {
	if from < 0 || to > MaxScale || to < from {
		return 0, fmt.Errorf("%w: scale %d to %d", ErrCounterRange, from, to)
	}
	for range to - from {
		if v > math.MaxInt64/10 || v < math.MinInt64/10 {
			return 0, fmt.Errorf("%w: %d at scale %d overflows at scale %d", ErrCounterRange, v, from, to)
		}
		v *= 10
	}
	return v, nil
}

// addCounter adds v at scale to counter k of counters/scales, first
// bringing both to the larger of the two scales; scales records the result's.
func addCounter(counters map[string]int64, scales map[string]int, k string, v int64, scale int) error {
	cur, have := counters[k]
	at := scales[k]
	if !have {
		cur, at = 0, scale
	}
	to := max(at, scale)
	a, err := rescale(cur, at, to)
	if err != nil {
		return fmt.Errorf("counter %s: %w", k, err)
	}
	b, err := rescale(v, scale, to)
	if err != nil {
		return fmt.Errorf("counter %s: %w", k, err)
	}
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return fmt.Errorf("counter %s: %w: %d + %d at scale %d", k, ErrCounterRange, a, b, to)
	}
	counters[k] = a + b
	if to != 0 {
		scales[k] = to
	} else {
		delete(scales, k)
	}
	return nil
}

// Package retry holds the pauses streamfold's retry loops share: exponential
// growth to a ceiling, two kinds of jitter, and a sleep that ends with its
// context. The functions are safe for concurrent use (math/rand/v2's
// global source).
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Exp is the pause after the attempt-th failure: min(ceiling,
// base*2^(attempt-1)), attempt counted from 1 (a smaller attempt counts as
// 1). The doubling stops after 20 steps; a pause that overflows, or a base
// of 0, is the ceiling.
func Exp(base, ceiling time.Duration, attempt int) time.Duration {
	d := base << min(max(attempt-1, 0), 20)
	if d > ceiling || d <= 0 {
		d = ceiling
	}
	return d
}

// Full is full-jitter backoff: a random pause in [0, Exp(base, ceiling,
// attempt)]. Many clients retrying the same resource spread out the most.
func Full(base, ceiling time.Duration, attempt int) time.Duration {
	return time.Duration(rand.Int64N(int64(Exp(base, ceiling, attempt)) + 1))
}

// Half is equal-jitter backoff: a random pause in [Exp/2, Exp], never much
// shorter than the exponential pause.
func Half(base, ceiling time.Duration, attempt int) time.Duration {
	d := Exp(base, ceiling, attempt)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Sleep pauses for d or until ctx is done, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

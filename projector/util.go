package projector

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"
)

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type requestCounter struct{ n atomic.Int64 }

func (c *requestCounter) add(n int64) { c.n.Add(n) }
func (c *requestCounter) load() int64 { return c.n.Load() }

// expBackoff is the pause before attempt (1-based): doubling from 10 ms, at
// most 1 s, with full jitter drawn from seed (0: the time).
func expBackoff(attempt int, seed int64) time.Duration {
	d := 10 * time.Millisecond << min(attempt-1, 7)
	d = min(d, time.Second)
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	return time.Duration(rand.New(rand.NewPCG(uint64(seed), uint64(attempt))).Int64N(int64(d)) + 1)
}

// sleepCtx pauses for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

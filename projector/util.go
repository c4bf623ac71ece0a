package projector

import (
	"context"
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

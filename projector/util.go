package projector

import (
	"cmp"
	"slices"
	"sync/atomic"
)

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type requestCounter struct{ n atomic.Int64 }

func (c *requestCounter) add(n int64) { c.n.Add(n) }
func (c *requestCounter) load() int64 { return c.n.Load() }

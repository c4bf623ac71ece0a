package projector

import (
	"sort"
	"sync/atomic"
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

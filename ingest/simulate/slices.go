package simulate

import (
	"math/bits"
	"time"
)

// OrderTime lays the events out as one slice of a busy, steady stream per
// day of the window. A day's slice takes its share of Config.Events (by
// dayWeight) at Config.Rate events per second, centred on sliceCentre.
// Aggregates start at that pace from a warm-up before the slice, so that the
// slice opens on the aggregates a steady stream has in flight; their
// deliveries that arrive before the slice are dropped (flush), like those
// still to come once the day's share has been emitted (startSlice).

// Bounds of a day's slice.
const (
	sliceCentre  = 13 * time.Hour   // the middle of the weekday working hours of hourWeight
	maxSlice     = 20 * time.Hour   // a longer slice is squeezed, at a higher rate
	maxWarmup    = 90 * time.Minute // longer than nearly every lifecycle
	warmupFactor = 30               // the warm-up is at most this many times the slice
)

// daySlice is one day's slice of the stream.
type daySlice struct {
	from   time.Time     // when its first aggregates start: start minus the warm-up
	start  time.Time     // events before it are dropped
	length time.Duration // share events at the slice's rate
	share  int           // events emitted in the slice
	quota  int           // events emitted by the end of the slice, from the first day on
}

// dayWeight weighs the days of the window: weekdays are busier.
func dayWeight(day time.Time) int64 {
	switch day.Weekday() {
	case time.Saturday:
		return 45
	case time.Sunday:
		return 40
	}
	return 100
}

// planSlices shares cfg.Events among the days of the window by dayWeight;
// a day whose share rounds to zero gets no slice, and the last slice's
// quota is cfg.Events.
func planSlices(cfg Config) []daySlice {
	var total int64
	for d := range cfg.Days {
		total += dayWeight(cfg.Start.AddDate(0, 0, d))
	}
	var slices []daySlice
	var cum int64
	prev := 0
	for d := range cfg.Days {
		day := cfg.Start.AddDate(0, 0, d)
		cum += dayWeight(day)
		quota := int(mulDiv(uint64(cfg.Events), uint64(cum), uint64(total)))
		if quota == prev {
			continue
		}
		s := daySlice{share: quota - prev, quota: quota}
		prev = quota
		ms := min(mulDiv(uint64(s.share), 1000, uint64(cfg.Rate)), uint64(maxSlice/time.Millisecond))
		s.length = time.Duration(max(ms, 1)) * time.Millisecond
		s.start = day.Add(sliceCentre - s.length/2).Truncate(time.Millisecond)
		s.from = s.start.Add(-min(maxWarmup, warmupFactor*s.length))
		slices = append(slices, s)
	}
	return slices
}

// startSlice ends the current slice, dropping the aggregates in flight, and
// starts slice d's clock at its warm-up.
func (g *gen) startSlice(d int) {
	g.day = d
	g.queue = eventHeap{}
	g.cut = g.slices[d].start
	g.progress = uint64(g.r.IntN(1000))
	g.next = g.clock()
}

// sliceClock maps the progress onto the current slice: the slice's share
// of the events (in thousandths) per slice length, from the warm-up on. It
// never goes past two minutes before the end of the window.
func (g *gen) sliceClock() time.Time {
	s := g.slices[g.day]
	limit := g.end.Add(-2 * time.Minute)
	ms := mulDiv(g.progress, uint64(s.length/time.Millisecond), uint64(s.share)*1000)
	if ms >= uint64(limit.Sub(s.from)/time.Millisecond) {
		return limit
	}
	return s.from.Add(time.Duration(ms) * time.Millisecond)
}

// mulDiv returns a*b/c (c > 0), or the largest uint64 when that overflows.
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}

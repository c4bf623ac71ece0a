package simulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// Generate produces cfg.Events events in arrival order, every one checked
// with schema.Validate. See the package documentation for the contract.
func Generate(cfg Config) ([]schema.Event, Stats, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, Stats{}, err
	}
	out := make([]schema.Event, 0, cfg.Events)
	st, err := Stream(cfg, func(e schema.Event) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// Stream is the memory-bounded form of Generate: it calls emit for each event
// in arrival order and keeps only the events not yet emitted of the
// aggregates in flight. An error from emit stops the stream and is returned,
// wrapped, with the Stats of the events emitted so far.
func Stream(cfg Config, emit func(schema.Event) error) (Stats, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	if emit == nil {
		return Stats{}, errors.New("simulate: emit is nil")
	}
	g := newGen(cfg)
	return g.run(emit)
}

// gen is one simulation run.
type gen struct {
	cfg        Config
	r          *rand.Rand
	start, end time.Time
	err        error // first marshalling error, reported by run

	// The spawn clock: progress counts planned events in thousandths and is
	// mapped onto time: in OrderSubject through the activity curve onto
	// [start, end), in OrderTime onto the current day's slice.
	curve    activity
	progress uint64
	target   uint64
	next     time.Time // when the next aggregate starts

	// OrderTime: the day slices, the current one, and its start: deliveries
	// that arrive before cut are dropped (the stream before the slice).
	slices []daySlice
	day    int
	cut    time.Time

	domains []*domain
	build   []pev // events of the aggregate being built
	queue   eventHeap
	seq     uint64

	gh  ghState
	sfn sfnState
}

// domain is one of the four workloads and its share of the spawned aggregates.
type domain struct {
	name   schema.Domain
	weight int
	spawn  func(at time.Time)
	// running mean of planned events per aggregate, in hundredths, seeded
	// with a prior so that the first picks are sensible.
	sum, n int
}

func (d *domain) meanSize() int { return (d.sum + 8*priorSize[d.name]*100) / (d.n + 8) }

// priorSize is the typical number of events of one aggregate per domain.
var priorSize = map[schema.Domain]int{
	schema.DomainGitHub:   20,
	schema.DomainStates:   2,
	schema.DomainAlbums:   20,
	schema.DomainMessages: 4,
}

// pev is a planned event: happen is when its producer sends it (which, for a
// second delivery or a late webhook, can be long after its time), lat how
// long the transport takes, redeliver the delay of a redelivery (0: none).
type pev struct {
	happen    time.Time
	lat       time.Duration
	redeliver time.Duration
	draft
}

// draft is an event whose payload is not marshalled yet: run marshals it
// when it emits the event, so a payload must not change once event has been
// called.
type draft struct {
	ev      schema.Event
	payload any
}

// aggState follows one aggregate's emitted events, to count out-of-order
// arrivals. Its subjects belong to no other aggregate.
type aggState struct {
	subjects []string
	maxTime  []time.Time
}

func (a *aggState) observe(subject string, t time.Time) (outOfOrder bool) {
	for i, s := range a.subjects {
		if s == subject {
			if t.Before(a.maxTime[i]) {
				return true
			}
			a.maxTime[i] = t
			return false
		}
	}
	a.subjects = append(a.subjects, subject)
	a.maxTime = append(a.maxTime, t)
	return false
}

func newGen(cfg Config) *gen {
	g := &gen{
		cfg:    cfg,
		r:      newRand(cfg.Seed),
		start:  cfg.Start,
		end:    cfg.Start.AddDate(0, 0, cfg.Days),
		target: uint64(cfg.Events) * 1000,
	}
	if cfg.Order == OrderSubject {
		g.curve = newActivity(cfg.Start, cfg.Days)
	} else {
		g.slices = planSlices(cfg)
	}
	g.gh.init(g)
	g.sfn.init()
	for _, d := range []*domain{
		{name: schema.DomainGitHub, weight: cfg.Mix.Jobs, spawn: g.githubRun},
		{name: schema.DomainStates, weight: cfg.Mix.Agents, spawn: g.stateMachineExecution},
		{name: schema.DomainAlbums, weight: cfg.Mix.Albums, spawn: g.albumExecution},
		{name: schema.DomainMessages, weight: cfg.Mix.Messages, spawn: g.message},
	} {
		if d.weight > 0 {
			g.domains = append(g.domains, d)
		}
	}
	if g.slices != nil {
		g.startSlice(0)
		return g
	}
	g.progress = uint64(g.r.IntN(1000))
	g.next = g.clock()
	return g
}

// clock maps the current progress to a time. Past the target (when more
// events were lost to the window's end than planned for) aggregates start
// two minutes before the end of the window.
func (g *gen) clock() time.Time {
	if g.slices != nil {
		return g.sliceClock()
	}
	if g.progress >= g.target {
		return later(g.next, g.end.Add(-2*time.Minute))
	}
	return g.curve.at(g.progress, g.target)
}

func (g *gen) run(emit func(schema.Event) error) (Stats, error) {
	st := Stats{PerDomain: map[schema.Domain]int{}, PerType: map[string]int{}}
	for st.Events < g.cfg.Events {
		// OrderTime: once a day's share is emitted, its slice ends; the
		// aggregates then in flight are cut.
		if g.slices != nil && g.day < len(g.slices)-1 && st.Events >= g.slices[g.day].quota {
			g.startSlice(g.day + 1)
			continue
		}
		// Past the target (OrderSubject) or at the end of the window
		// (OrderTime) the clock stands still: drain the queue, and only
		// start another aggregate when it is empty.
		drain := g.progress >= g.target
		if g.slices != nil {
			drain = !g.next.Before(g.end.Add(-2 * time.Minute))
		}
		if g.queue.Len() > 0 && (drain || !g.queue.min().arrival.After(g.next)) {
			it := g.queue.pop()
			if it.ev.Data == nil { // a redelivery finds its original's
				g.marshal(it.ev, it.payload)
				if g.err != nil {
					return st, g.err
				}
			}
			ev := *it.ev
			if _, err := schema.Validate(&ev); err != nil {
				return st, fmt.Errorf("simulate: generated an invalid %s event (id %s): %w", ev.Type, ev.ID, err)
			}
			if it.dup {
				st.Redeliveries++
			} else if it.agg.observe(ev.Subject, ev.Time) {
				st.OutOfOrder++
			}
			if k, ok := schema.KindOf(ev.Type); ok {
				st.PerDomain[k.Domain]++
			}
			st.PerType[ev.Type]++
			st.Events++
			if err := emit(ev); err != nil {
				return st, fmt.Errorf("simulate: emit: %w", err)
			}
			continue
		}
		n := g.spawn()
		if g.err != nil {
			return st, g.err
		}
		g.progress += uint64(max(n, 1)) * uint64(g.r.IntN(2000)+1)
		g.next = g.clock()
	}
	return st, nil
}

// spawn starts one aggregate of a domain drawn so that, in events, the
// domains follow the mix. It returns how many events it queued.
func (g *gen) spawn() int {
	weights := make([]int, len(g.domains))
	for i, d := range g.domains {
		weights[i] = d.weight * 10000 / max(d.meanSize(), 1)
		if weights[i] == 0 {
			weights[i] = 1
		}
	}
	d := g.domains[g.weighted(weights)]
	g.build = g.build[:0]
	d.spawn(g.next)
	d.sum += len(g.build) * 100
	d.n++
	return g.flush()
}

// add plans one event of the aggregate being built.
func (g *gen) add(d draft, happen time.Time, lat, redeliver time.Duration) {
	g.build = append(g.build, pev{happen: happen, lat: lat, redeliver: redeliver, draft: d})
}

// event builds an envelope around a payload.
func (g *gen) event(id, source, typ, subject string, t time.Time, payload any) draft {
	return draft{
		ev:      schema.Event{SpecVersion: schema.SpecVersion, ID: id, Source: source, Type: typ, Subject: subject, Time: t.UTC()},
		payload: payload,
	}
}

// mayArrive reports whether an event sent at happen can arrive in the
// current slice, itself or redelivered: the chain of a subject's arrivals
// adds at most maxLatency, a redelivery at most maxRedelivery.
func (g *gen) mayArrive(happen time.Time) bool {
	return !happen.Add(maxLatency + maxRedelivery).Before(g.cut)
}

// Upper bounds of a delivery's latency (GitHub's) and of OrderTime's
// redelivery delays (GitHub's).
const (
	maxLatency    = 2 * time.Second
	maxRedelivery = time.Minute
)

// flush queues the aggregate being built: events that happen (or are sent)
// at or after the end of the window are dropped, the rest get arrival times
// that keep each subject in send order, and redeliveries are queued after
// their original. In OrderTime, deliveries that arrive before the current
// slice are not queued either (a redelivery whose original came before it
// is then the first delivery). It returns how many deliveries the aggregate
// planned in the window, queued or not.
func (g *gen) flush() int {
	planned := 0
	kept := g.build[:0]
	for _, p := range g.build {
		if p.ev.Time.Before(g.end) && p.happen.Before(g.end) {
			kept = append(kept, p)
			planned++
			if p.redeliver > 0 {
				planned++
			}
		}
	}
	if len(kept) == 0 {
		return planned
	}
	slices.SortStableFunc(kept, func(a, b pev) int { return a.happen.Compare(b.happen) })
	evs := make([]schema.Event, len(kept))
	agg := &aggState{}
	var lastSubject []string
	var lastArrival []time.Time
	for i, p := range kept {
		evs[i] = p.ev
		arrival := p.happen.Add(p.lat)
		j := slices.Index(lastSubject, p.ev.Subject)
		if j < 0 {
			lastSubject = append(lastSubject, p.ev.Subject)
			lastArrival = append(lastArrival, arrival)
		} else {
			if arrival.Before(lastArrival[j]) {
				arrival = lastArrival[j]
			}
			lastArrival[j] = arrival
		}
		again := arrival.Add(p.redeliver)
		switch {
		case !arrival.Before(g.cut):
			g.push(item{arrival: arrival, ev: &evs[i], payload: p.payload, agg: agg})
			if p.redeliver > 0 {
				g.push(item{arrival: again, ev: &evs[i], payload: p.payload, agg: agg, dup: true})
			}
		case p.redeliver > 0 && !again.Before(g.cut):
			g.push(item{arrival: again, ev: &evs[i], payload: p.payload, agg: agg})
		}
	}
	return planned
}

// marshal sets the event's data; the first error is kept in g.err.
func (g *gen) marshal(ev *schema.Event, payload any) {
	if payload == nil {
		if g.err == nil {
			g.err = fmt.Errorf("simulate: %s event %s has no payload", ev.Type, ev.ID)
		}
		return
	}
	data, err := json.Marshal(payload)
	if err != nil && g.err == nil {
		g.err = fmt.Errorf("simulate: marshal %s: %w", ev.Type, err)
	}
	ev.Data = data
}

func (g *gen) push(it item) {
	g.seq++
	it.seq = g.seq
	g.queue.push(it)
}

// item is a queued delivery; arrival then seq is the emission order.
type item struct {
	arrival time.Time
	seq     uint64
	ev      *schema.Event // Data nil until the first of its deliveries is emitted
	payload any
	agg     *aggState
	dup     bool
}

func (a *item) less(b *item) bool {
	if c := a.arrival.Compare(b.arrival); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

// eventHeap is a binary min-heap of items.
type eventHeap struct{ items []item }

func (h *eventHeap) Len() int   { return len(h.items) }
func (h *eventHeap) min() *item { return &h.items[0] }

func (h *eventHeap) push(it item) {
	h.items = append(h.items, it)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].less(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) pop() item {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = item{}
	h.items = h.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.items[l].less(&h.items[m]) {
			m = l
		}
		if r < last && h.items[r].less(&h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// activity is the workload's density over the window: busier on weekday
// working hours (UTC), quieter at night and on weekends. It maps a fraction
// of the total work onto a time, in integer arithmetic.
type activity struct {
	start  time.Time
	weight []int64 // per hour
	cum    []int64 // cum[h] = sum of weight[:h] * msPerHour
}

const msPerHour = int64(time.Hour / time.Millisecond)

var hourWeight = [24]int64{30, 25, 20, 20, 25, 35, 50, 70, 90, 100, 100, 100, 95, 100, 100, 95, 90, 80, 70, 60, 50, 45, 40, 35}

func newActivity(start time.Time, days int) activity {
	a := activity{start: start, weight: make([]int64, days*24), cum: make([]int64, days*24+1)}
	for d := range days {
		dw := dayWeight(start.AddDate(0, 0, d))
		for h := range 24 {
			i := d*24 + h
			a.weight[i] = dw * hourWeight[h]
			a.cum[i+1] = a.cum[i] + a.weight[i]*msPerHour
		}
	}
	return a
}

// at returns the time by which num/den of the work has started (num < den).
func (a activity) at(num, den uint64) time.Time {
	total := uint64(a.cum[len(a.cum)-1])
	hi, lo := bits.Mul64(num, total)
	pos, _ := bits.Div64(hi, lo, den) // num < den, so hi < den: no overflow
	// The hour in which pos falls: the first one whose end is past it.
	h := sort.Search(len(a.weight), func(i int) bool { return uint64(a.cum[i+1]) > pos })
	h = min(h, len(a.weight)-1)
	offset := (int64(pos) - a.cum[h]) / a.weight[h]
	return a.start.Add(time.Duration(int64(h)*msPerHour+offset) * time.Millisecond)
}

package simulate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
)

// TestOrderInterleaving pins what a stream consumer's batches see: in
// OrderTime (the default) a batch of 100 records holds at least 80 distinct
// subjects and fewer than 5% of consecutive events share a subject; in
// OrderSubject most of an aggregate's events are next to each other.
func TestOrderInterleaving(t *testing.T) {
	tests := []struct {
		name            string
		cfg             simulate.Config
		maxShare        float64 // consecutive pairs sharing a subject
		minDistinct     float64 // distinct subjects per 100 records, mean
		maxDistinct     float64
		minDistinctEach int // in every batch
	}{
		{"time 5000", simulate.Config{Seed: 1, Events: 5000}, .05, 80, 100, 60},
		{"time 5000 seed 2", simulate.Config{Seed: 2, Events: 5000}, .05, 80, 100, 60},
		{"time 20000 over 3 days", simulate.Config{Seed: 3, Events: 20000, Days: 3}, .05, 80, 100, 60},
		{"time 5000 at 20/s", simulate.Config{Seed: 1, Events: 5000, Rate: 20}, .05, 65, 80, 45},
		{"subject 5000", simulate.Config{Seed: 1, Events: 5000, Order: simulate.OrderSubject}, 1, 0, 40, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, _ := generate(t, tt.cfg)
			s := simulate.MeasureShape(evs, 100)
			if s.SameSubjectShare >= tt.maxShare {
				t.Errorf("%.1f%% of consecutive events share a subject (%d pairs), want under %.0f%%", 100*s.SameSubjectShare, s.SameSubjectPairs, 100*tt.maxShare)
			}
			if s.DistinctPerWindow < tt.minDistinct || s.DistinctPerWindow > tt.maxDistinct {
				t.Errorf("%.1f distinct subjects per 100 records, want %.0f-%.0f", s.DistinctPerWindow, tt.minDistinct, tt.maxDistinct)
			}
			if s.MinDistinctPerWindow < tt.minDistinctEach {
				t.Errorf("a batch of 100 records holds %d distinct subjects, want at least %d", s.MinDistinctPerWindow, tt.minDistinctEach)
			}
		})
	}
	// The old order coalesces: in 5,000 events, about half of the
	// consecutive pairs share a subject (the issue measured 2,311).
	evs, _ := generate(t, simulate.Config{Seed: 1, Events: 5000, Order: simulate.OrderSubject})
	if s := simulate.MeasureShape(evs, 100); s.SameSubjectShare < .3 {
		t.Errorf("OrderSubject: %.1f%% of consecutive events share a subject, want the old order's 30%% or more", 100*s.SameSubjectShare)
	}
}

// TestOrderTimeRate checks that a slice lasts its share of the events
// divided by the rate: the middle 90% of the events' times span about 90% of
// Events/Rate.
func TestOrderTimeRate(t *testing.T) {
	for _, rate := range []int{10, 100} {
		evs, _ := generate(t, simulate.Config{Seed: 5, Events: 5000, Rate: rate})
		times := make([]time.Time, len(evs))
		for i, e := range evs {
			times[i] = e.Time
		}
		slices.SortFunc(times, time.Time.Compare)
		span := times[len(times)*95/100].Sub(times[len(times)*5/100])
		want := time.Duration(len(evs)) * time.Second / time.Duration(rate) * 9 / 10
		if span < want*7/10 || span > want*13/10 {
			t.Errorf("rate %d: the middle 90%% of the events span %s, want about %s", rate, span, want)
		}
		// The slice is centred on 13:00 UTC.
		if mid := times[len(times)/2]; mid.Sub(simulate.DefaultStart.Add(13*time.Hour)).Abs() > want {
			t.Errorf("rate %d: the median event is at %s, want about 13:00", rate, mid)
		}
	}
}

// TestOrderTimeDays checks that the days share the events by activity,
// exactly: a weekday 100, Saturday 45, Sunday 40.
func TestOrderTimeDays(t *testing.T) {
	cfg := simulate.Config{Seed: 6, Events: 1170, Days: 7} // Monday to Sunday: 585 weight units, 2 events each
	evs, _ := generate(t, cfg)
	perDay := map[time.Weekday]int{}
	for _, e := range evs {
		perDay[e.Time.Weekday()]++
	}
	want := map[time.Weekday]int{time.Monday: 200, time.Tuesday: 200, time.Wednesday: 200, time.Thursday: 200, time.Friday: 200,
		time.Saturday: 90, time.Sunday: 80}
	for d, n := range want {
		if perDay[d] != n {
			t.Errorf("%s: %d events, want %d (all: %v)", d, perDay[d], n, perDay)
		}
	}
}

// TestOrderTimeSteadyState checks that a slice opens on a steady stream: a
// 5,000-event run (50 seconds) holds every stage of the long lifecycles,
// about as many completed jobs as queued ones.
func TestOrderTimeSteadyState(t *testing.T) {
	_, st := generate(t, simulate.Config{Seed: 8, Events: 5000})
	for _, typ := range []string{schema.TypeJobQueued, schema.TypeJobInProgress, schema.TypeJobCompleted, schema.TypeRunnerTerminated,
		schema.TypeDeploymentApproved, schema.TypeTaskCompleted, schema.TypeAlbumExecutionCompleted, schema.TypeMessageCompleted} {
		if st.PerType[typ] == 0 {
			t.Errorf("no %s events (%v)", typ, st.PerType)
		}
	}
	if q, c := st.PerType[schema.TypeJobQueued], st.PerType[schema.TypeJobCompleted]; c*10 < q*7 || c*10 > q*13 {
		t.Errorf("%d completed jobs for %d queued deliveries: the slice is not steady", c, q)
	}
	if st.Redeliveries == 0 || st.OutOfOrder == 0 {
		t.Errorf("%d redeliveries, %d out of order; want both", st.Redeliveries, st.OutOfOrder)
	}
}

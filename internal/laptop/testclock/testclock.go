// Package testclock is the one clock that tests anchor wall-clock workloads
// at, so that no test depends on the day it runs.
//
// Now is the current time, unless the environment variable
// STREAMFOLD_TEST_NOW holds an RFC 3339 time: then every call returns that
// time, so that a whole `make test` can be run "on" another day
// (STREAMFOLD_TEST_NOW=2026-11-26T09:30:00Z make test). A test that needs a
// time "recent enough" (projection TTLs are enforced by DynamoDB Local, and
// the event table keeps 14 days) takes it from here; a test that needs a
// fixed date uses a literal. Durations (time.Since, deadlines) stay on the
// real clock: they measure, they do not anchor.
//
// STREAMFOLD_TEST_NOW is meant for dates near today (within a week or so):
// stores and servers stamp what they record with the real clock, and a test
// clock weeks away from it would make DynamoDB Local expire items the test
// has just written.
package testclock

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Env is the environment variable that fixes Now.
const Env = "STREAMFOLD_TEST_NOW"

var (
	once  sync.Once
	fixed time.Time
	err   error
)

func load() {
	v := os.Getenv(Env)
	if v == "" {
		return
	}
	fixed, err = time.Parse(time.RFC3339Nano, v)
	if err != nil {
		err = fmt.Errorf("testclock: %s=%q: want an RFC 3339 time such as 2026-11-26T09:30:00Z: %w", Env, v, err)
	}
}

// Now is the test clock's time in UTC: STREAMFOLD_TEST_NOW when it is set,
// the real time otherwise. It panics, naming the variable, when
// STREAMFOLD_TEST_NOW is set but is not an RFC 3339 time, so that a typo
// never silently runs the suite on today's date.
func Now() time.Time {
	once.Do(load)
	if err != nil {
		panic(err)
	}
	if !fixed.IsZero() {
		return fixed.UTC()
	}
	return time.Now().UTC()
}

// Today is the UTC midnight that starts Now's day.
func Today() time.Time { return Now().Truncate(24 * time.Hour) }

// DaysAgo is the UTC midnight n days before Today.
func DaysAgo(n int) time.Time { return Today().AddDate(0, 0, -n) }

// WeekdayOnOrBefore is the latest UTC midnight at or before t that falls on
// weekday d. Tests whose workload depends on the weekday (the simulator
// weighs weekdays over weekends) anchor at one so that the same workload is
// generated whatever day they run.
func WeekdayOnOrBefore(t time.Time, d time.Weekday) time.Time {
	day := t.UTC().Truncate(24 * time.Hour)
	back := (int(day.Weekday()) - int(d) + 7) % 7
	return day.AddDate(0, 0, -back)
}

// RecentMonday is the latest Monday at least n days before Today: recent
// enough for the tables' TTLs, and always a Monday, so that a workload
// started there is the same whatever day the suite runs.
func RecentMonday(n int) time.Time { return WeekdayOnOrBefore(DaysAgo(n), time.Monday) }

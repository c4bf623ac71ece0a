package testclock

import (
	"sync"
	"testing"
	"time"
)

func TestWeekdayOnOrBefore(t *testing.T) {
	thu := time.Date(2026, time.November, 26, 0, 0, 0, 0, time.UTC) // a Thursday
	for i := range 14 {
		at := thu.AddDate(0, 0, i).Add(13 * time.Hour)
		for d := time.Sunday; d <= time.Saturday; d++ {
			got := WeekdayOnOrBefore(at, d)
			if got.Weekday() != d || got.After(at) || at.Sub(got) >= 7*24*time.Hour || got.Truncate(24*time.Hour) != got {
				t.Fatalf("WeekdayOnOrBefore(%v, %v) = %v", at, d, got)
			}
		}
	}
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		env     string
		want    time.Time
		wantErr bool
	}{
		{env: "2026-11-21T10:00:00Z", want: time.Date(2026, time.November, 21, 10, 0, 0, 0, time.UTC)},
		{env: "2026-11-21T10:00:00+02:00", want: time.Date(2026, time.November, 21, 8, 0, 0, 0, time.UTC)},
		{env: "2026-11-21", wantErr: true},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			fixed, err = time.Time{}, nil
			load()
			defer func() { fixed, err = time.Time{}, nil; once = sync.Once{} }()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && !fixed.Equal(tc.want) {
				t.Fatalf("fixed = %v, want %v", fixed, tc.want)
			}
		})
	}
}

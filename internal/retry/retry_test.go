package retry

import (
	"context"
	"testing"
	"time"
)

func TestExp(t *testing.T) {
	cases := []struct {
		base, ceiling time.Duration
		attempt       int
		want          time.Duration
	}{
		{10 * time.Millisecond, time.Second, 1, 10 * time.Millisecond},
		{10 * time.Millisecond, time.Second, 0, 10 * time.Millisecond},
		{10 * time.Millisecond, time.Second, 3, 40 * time.Millisecond},
		{10 * time.Millisecond, time.Second, 8, time.Second},
		{10 * time.Millisecond, time.Second, 1000, time.Second},
		{0, time.Second, 2, time.Second},
		{time.Duration(1) << 62, time.Hour, 5, time.Hour},
	}
	for _, c := range cases {
		if got := Exp(c.base, c.ceiling, c.attempt); got != c.want {
			t.Errorf("Exp(%v, %v, %d) = %v, want %v", c.base, c.ceiling, c.attempt, got, c.want)
		}
	}
}

func TestJitterBounds(t *testing.T) {
	for attempt := 1; attempt < 12; attempt++ {
		e := Exp(time.Millisecond, 100*time.Millisecond, attempt)
		for range 200 {
			if f := Full(time.Millisecond, 100*time.Millisecond, attempt); f < 0 || f > e {
				t.Fatalf("Full attempt %d = %v, outside [0, %v]", attempt, f, e)
			}
			if h := Half(time.Millisecond, 100*time.Millisecond, attempt); h < e/2 || h > e {
				t.Fatalf("Half attempt %d = %v, outside [%v, %v]", attempt, h, e/2, e)
			}
		}
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a done context = %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("Sleep on a done context waited")
	}
}

package periodic

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestStartCallsUntilStop(t *testing.T) {
	var n atomic.Int64
	stop := Start(time.Millisecond, func() { n.Add(1) })
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	got := n.Load()
	if got < 3 {
		t.Fatalf("%d calls in 5 s, want at least 3", got)
	}
	time.Sleep(10 * time.Millisecond)
	if after := n.Load(); after != got {
		t.Errorf("%d calls after stop returned", after-got)
	}
}

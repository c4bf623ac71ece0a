package periodic

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestStartCallsUntilStop: f is called again and again until stop, and
// never after stop returned. It waits for calls, not for a wall-clock
// deadline, so a loaded machine only makes it slower (go test's -timeout
// bounds a Start that never calls).
func TestStartCallsUntilStop(t *testing.T) {
	var n atomic.Int64
	calls := make(chan struct{}, 1)
	stop := Start(time.Millisecond, func() {
		n.Add(1)
		select {
		case calls <- struct{}{}:
		default:
		}
	})
	for range 3 {
		<-calls
	}
	stop()
	got := n.Load()
	if got < 3 {
		t.Fatalf("%d calls seen, want at least 3", got)
	}
	time.Sleep(10 * time.Millisecond)
	if after := n.Load(); after != got {
		t.Errorf("%d calls after stop returned", after-got)
	}
}

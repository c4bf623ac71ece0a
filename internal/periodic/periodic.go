// Package periodic calls a function at a fixed interval on its own
// goroutine: the progress reports of long runs.
package periodic

import (
	"sync"
	"time"
)

// Start calls f every interval, the first time one interval from now,
// until stop is called. stop waits for a call in progress to return, and no
// call starts after it; it must be called once.
func Start(interval time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// Package opsrectest provides an in-memory stand-in for the operations
// records store (opsrec.Store) for the tests of the code that writes gaps
// and heartbeats: the local runner (streamrun.OpsStore) and the Lambda
// watcher (opswatch.Recorder).
package opsrectest

import (
	"context"
	"sync"

	"github.com/streamfold/streamfold/internal/opsrec"
)

// Recorder keeps the gaps and heartbeats written to it. Like opsrec.Store
// it refuses a record that does not validate; then, when Err is set, it
// fails every write with Err and keeps nothing. Progresses returns Prior.
// It is safe for concurrent use; set Err and Prior before the first call.
type Recorder struct {
	// Err, when set, is returned by every write.
	Err error
	// Prior is what Progresses returns: the heartbeats of an earlier run.
	Prior []opsrec.Progress

	mu    sync.Mutex
	gaps  []opsrec.Gap
	beats []opsrec.Progress
}

// PutGap keeps g.
func (r *Recorder) PutGap(_ context.Context, g opsrec.Gap) error {
	if err := g.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		return r.Err
	}
	r.gaps = append(r.gaps, g)
	return nil
}

// PutProgress keeps p.
func (r *Recorder) PutProgress(_ context.Context, p opsrec.Progress) error {
	if err := p.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		return r.Err
	}
	r.beats = append(r.beats, p)
	return nil
}

// Progresses returns Prior.
func (r *Recorder) Progresses(context.Context) ([]opsrec.Progress, error) {
	return r.Prior, nil
}

// Gaps returns a copy of the gaps kept so far, in write order.
func (r *Recorder) Gaps() []opsrec.Gap {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]opsrec.Gap(nil), r.gaps...)
}

// Beats returns a copy of the heartbeats kept so far, in write order.
func (r *Recorder) Beats() []opsrec.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]opsrec.Progress(nil), r.beats...)
}

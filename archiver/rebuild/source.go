package rebuild

import (
	"context"

	"github.com/streamfold/streamfold/schema"
)

// Source yields every archived event exactly once, in any order.
// *archiver.Archive implements it; so does Events (in memory, for tests).
// fn's error stops the iteration and is returned. fn may be called from
// several goroutines; the fold serialises the calls. Yielding an event
// twice is harmless (folds are idempotent), only slower.
type Source interface {
	Events(ctx context.Context, fn func(schema.Event) error) error
}

// Events is an in-memory Source over a slice of events.
type Events []schema.Event

// Events implements Source.
func (s Events) Events(ctx context.Context, fn func(schema.Event) error) error {
	for _, e := range s {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Package repair provides the workflows that check and repair the
// projections against the Parquet archive, the history the stream (24
// hours) and the event table (14 days) no longer hold: Verify recomputes
// the counter rows from the archive and lists every difference with the
// live tables; Rebuild folds the archive into fresh tables or into the
// live ones. Both fold the archive with archiver/rebuild, whose
// guarantees they keep: folds are joins, so the archive's order does not
// matter and running a rebuild again changes nothing; it is safe beside
// the stream projector.
//
// Each workflow first decides (NewRebuildPlan, a plain value a test can
// assert) and then does.
package repair

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// Fold tunes the fold of the archive. DefaultFold gives the defaults;
// every count must be at least 1.
type Fold struct {
	// ChunkEvents bounds the events of one projector call (whole subjects).
	ChunkEvents int
	// Workers is the projector calls at once (at most 64).
	Workers int
	// BufferEvents is the events held in memory before they are grouped
	// by subject and projected; at least ChunkEvents.
	BufferEvents int
	// RetentionDays is how long an item with a TTL lives after its events
	// were recorded; zero is the table's (90 days for jobs, runs,
	// deployments and messages). What would be born expired is skipped
	// and counted.
	RetentionDays int
	// GSIShards is the deployment's write sharding (0 or 1: off).
	GSIShards int
	// Progress, when set, gets a progress line at most once a second and
	// the last one when the fold ends.
	Progress io.Writer
}

// DefaultFold is archiver/rebuild's defaults.
func DefaultFold() Fold {
	var d rebuild.Options
	d.SetDefaults()
	return Fold{ChunkEvents: d.ChunkEvents, Workers: d.Workers, BufferEvents: d.BufferEvents}
}

// validate names the field at fault, for workflow.
func (f Fold) validate(workflow string) error {
	for _, c := range []struct {
		field string
		v     int
	}{{"ChunkEvents", f.ChunkEvents}, {"Workers", f.Workers}, {"BufferEvents", f.BufferEvents}} {
		if c.v < 1 {
			return toolkit.Invalid(workflow, c.field, nil, fmt.Sprintf("must be at least 1, got %d", c.v))
		}
	}
	if f.BufferEvents < f.ChunkEvents {
		return toolkit.Invalid(workflow, "BufferEvents", nil, fmt.Sprintf("must be at least ChunkEvents (%d), got %d", f.ChunkEvents, f.BufferEvents))
	}
	if d := f.RetentionDays; d < 0 || d > projector.MaxRetentionDays {
		return toolkit.Invalid(workflow, "RetentionDays", nil, fmt.Sprintf("must be between 1 and %d days, got %d", projector.MaxRetentionDays, d))
	}
	if err := schema.ValidateGSIShards("shards", f.GSIShards); err != nil {
		return toolkit.Invalid(workflow, "GSIShards", err, "")
	}
	o, _ := f.options("")
	o.SetDefaults()
	if err := o.Validate(); err != nil {
		return toolkit.Invalid(workflow, "Fold", err, "")
	}
	return nil
}

// options are f as archiver/rebuild's, reporting progress as name; done
// prints the last progress report held back.
func (f Fold) options(name string) (o rebuild.Options, done func()) {
	o = rebuild.Options{ChunkEvents: f.ChunkEvents, Workers: f.Workers, BufferEvents: f.BufferEvents,
		Projector: projector.Config{RetentionDays: f.RetentionDays, GSIShards: f.GSIShards}}
	if f.Progress == nil {
		return o, func() {}
	}
	p := &progress{w: f.Progress, name: name}
	o.Progress = p.report
	return o, p.flush
}

// progress prints fold progress at most once a second.
type progress struct {
	w       io.Writer
	name    string
	mu      sync.Mutex
	last    time.Time
	pending *rebuild.Progress
}

func (p *progress) report(r rebuild.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < time.Second {
		p.pending = &r
		return
	}
	p.last, p.pending = time.Now(), nil
	p.print(r)
}

// flush prints the report held back, if any.
func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != nil {
		p.print(*p.pending)
	}
}

func (p *progress) print(r rebuild.Progress) {
	fmt.Fprintf(p.w, "%s: %d events read, %d projected, %d subjects (%d changed), %.0f events/s\n",
		p.name, r.Read, r.Projected, r.Subjects, r.Changed, r.EventsPerSecond)
}

// foldWarnings are the notes on the fold of an archive that holds no
// event or events that could not be projected.
func foldWarnings(name, archive string, st rebuild.Stats) []string {
	var out []string
	if st.Events == 0 {
		out = append(out, fmt.Sprintf("%s: the archive %s holds no event (wrong --from-archive?)", name, archive))
	}
	if st.Invalid > 0 {
		out = append(out, fmt.Sprintf("%s: %d archived events could not be projected, e.g. %s", name, st.Invalid, st.InvalidSamples[0]))
	}
	return out
}

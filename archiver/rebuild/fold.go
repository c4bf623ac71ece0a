package rebuild

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Options configures how the archive is folded into a store (Rebuild and
// Verify). The zero value is usable: SetDefaults fills it.
type Options struct {
	// ChunkEvents bounds the events of one Project call. A chunk holds whole
	// subjects (a subject with more events is a chunk of its own). Default 2000.
	ChunkEvents int
	// BufferEvents is how many events are held in memory before they are
	// grouped by subject and projected. Default 1,000,000.
	BufferEvents int
	// Workers is how many chunks are projected at once. Default 2.
	Workers int
	// Rounds is how many times subjects that failed (version conflicts with
	// a concurrent writer, throttling) are projected again before Rebuild
	// gives up on them with an *IncompleteError. Default 5.
	Rounds int
	// Projector configures the projector (commit concurrency within a chunk,
	// conflict retries within a round, retention). Its ExpiredBefore
	// defaults to the time the fold starts: history older than the
	// retention is not projected into items that would be born expired
	// (Stats.Expired counts them); a longer Projector.RetentionDays keeps
	// it.
	Projector projector.Config
	// Progress, when set, is called after every chunk, never concurrently.
	Progress func(Progress)
}

// SetDefaults fills zero fields.
func (o *Options) SetDefaults() {
	o.ChunkEvents = cmp.Or(o.ChunkEvents, 2000)
	o.BufferEvents = cmp.Or(o.BufferEvents, 1_000_000)
	o.Workers = cmp.Or(o.Workers, 2)
	o.Rounds = cmp.Or(o.Rounds, 5)
	o.Projector.SetDefaults()
}

// Validate names the bad field.
func (o Options) Validate() error {
	switch {
	case o.ChunkEvents < 1:
		return fmt.Errorf("rebuild: Options.ChunkEvents: must be at least 1, got %d", o.ChunkEvents)
	case o.BufferEvents < o.ChunkEvents:
		return fmt.Errorf("rebuild: Options.BufferEvents: must be at least ChunkEvents (%d), got %d", o.ChunkEvents, o.BufferEvents)
	case o.Workers < 1 || o.Workers > 64:
		return fmt.Errorf("rebuild: Options.Workers: must be between 1 and 64, got %d", o.Workers)
	case o.Rounds < 1:
		return fmt.Errorf("rebuild: Options.Rounds: must be at least 1, got %d", o.Rounds)
	}
	return o.Projector.Validate()
}

// maxInvalidSamples bounds Stats.InvalidSamples.
const maxInvalidSamples = 10

// Stats reports one fold of the archive.
type Stats struct {
	// Events is how many events the source yielded.
	Events int `json:"events"`
	// Projected is how many were handed to the projector.
	Projected int `json:"projected"`
	// NonAgent counts Step Functions events of state machines that are not
	// agents: not projected, as in the stream projector.
	NonAgent int `json:"nonAgent"`
	// Invalid counts events that fail validation or have no projection
	// (the stream projector dead-letters those); InvalidSamples says why for
	// the first few.
	Invalid        int      `json:"invalid"`
	InvalidSamples []string `json:"invalidSamples,omitempty"`
	// Subjects counts subject groups projected (a subject whose events
	// straddle two buffers counts twice).
	Subjects int `json:"subjects"`
	// Changed and Unchanged count aggregates whose stored state did or did
	// not change; a repeated rebuild has Changed == 0.
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	// Commits counts commits (single writes and transactions); Poison
	// counts subjects that can never be projected (projector.Outcome.Poison:
	// a state or item over DynamoDB's item limit, an item owned by another
	// subject); they are among the failed subjects.
	Commits int `json:"commits"`
	Poison  int `json:"poison"`
	// Expired counts the items left out because they would be born
	// expired: their aggregate's events were recorded longer ago than the
	// retention (projector.Config.ExpiredBefore).
	Expired int `json:"expired"`
	// Late counts events not projected because they were recorded at or
	// after their aggregate's expiry (projector.Outcome.Late), as the
	// stream projector leaves them out; Quarantined counts events the
	// stream projector dead-letters alone (projector.Outcome.Quarantined:
	// dated too far ahead of their recordedat, a task whose id is its
	// execution's). Neither fails the rebuild.
	Late        int `json:"late"`
	Quarantined int `json:"quarantined"`
	// Chunks counts Project calls; Retried subjects projected again after a
	// failure; Failed subjects that were still failing after every round.
	Chunks  int `json:"chunks"`
	Retried int `json:"retried"`
	Failed  int `json:"failed"`
	// Seconds is the wall time; EventsPerSecond is Events / Seconds.
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"eventsPerSecond"`
}

// Progress is reported after every chunk.
type Progress struct {
	// Read is how many events the source has yielded so far; Projected how
	// many of them have been projected (committed or found unchanged).
	Read, Projected int
	// Subjects and Changed count subjects projected and changed so far.
	Subjects, Changed int
	Elapsed           time.Duration
	// EventsPerSecond is Projected / Elapsed.
	EventsPerSecond float64
}

// folder folds a source into a store.
type folder struct {
	proj  *projector.Projector
	opts  Options
	start time.Time

	mu     sync.Mutex // guards st, failed and Progress calls
	st     Stats
	failed map[string]error
	buf    []projector.Input // appended under mu by the reader; flush owns it while it runs
}

// foldArchive folds every event of src into store.
func foldArchive(ctx context.Context, src Source, store projector.Store, opts Options) (Stats, error) {
	opts.SetDefaults()
	if err := opts.Validate(); err != nil {
		return Stats{}, err
	}
	if opts.Projector.ExpiredBefore.IsZero() {
		opts.Projector.ExpiredBefore = time.Now()
	}
	proj, err := projector.New(store, opts.Projector)
	if err != nil {
		return Stats{}, err
	}
	f := &folder{proj: proj, opts: opts, start: time.Now(), failed: map[string]error{}}
	var serial sync.Mutex // a Source may call fn from several goroutines
	readErr := src.Events(ctx, func(e schema.Event) error {
		serial.Lock()
		defer serial.Unlock()
		in, ok, err := projector.InputOf(e, "")
		f.mu.Lock()
		f.st.Events++
		switch {
		case err != nil:
			f.st.Invalid++
			if len(f.st.InvalidSamples) < maxInvalidSamples {
				f.st.InvalidSamples = append(f.st.InvalidSamples, err.Error())
			}
		case !ok:
			f.st.NonAgent++
		default:
			f.buf = append(f.buf, in)
		}
		full := len(f.buf) >= opts.BufferEvents
		f.mu.Unlock()
		if full {
			return f.flush(ctx)
		}
		return nil
	})
	if readErr == nil {
		readErr = f.flush(ctx)
	} else if !errors.Is(readErr, context.Canceled) && !errors.Is(readErr, context.DeadlineExceeded) {
		readErr = fmt.Errorf("rebuild: read archive: %w", readErr)
	}
	f.st.Seconds = time.Since(f.start).Seconds()
	if f.st.Seconds > 0 {
		f.st.EventsPerSecond = float64(f.st.Events) / f.st.Seconds
	}
	f.st.Failed = len(f.failed)
	if readErr != nil {
		return f.st, readErr
	}
	if len(f.failed) > 0 {
		return f.st, &IncompleteError{Failed: f.failed}
	}
	return f.st, nil
}

// group is one subject's inputs.
type group struct {
	subject string
	inputs  []projector.Input
}

// groupBySubject groups inputs by subject, subjects sorted, each subject's
// inputs in (time, id) order (the order does not change the fold; a fixed
// one makes runs reproducible).
func groupBySubject(inputs []projector.Input) []group {
	by := map[string][]projector.Input{}
	for _, in := range inputs {
		by[in.Event.Subject] = append(by[in.Event.Subject], in)
	}
	out := make([]group, 0, len(by))
	for s, ins := range by {
		sort.Slice(ins, func(i, j int) bool {
			if c := ins[i].Event.Time.Compare(ins[j].Event.Time); c != 0 {
				return c < 0
			}
			return ins[i].Event.ID < ins[j].Event.ID
		})
		out = append(out, group{subject: s, inputs: ins})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].subject < out[j].subject })
	return out
}

// chunk packs groups into chunks of at most max events; a group larger
// than max is a chunk of its own.
func chunk(groups []group, max int) [][]group {
	var out [][]group
	var cur []group
	n := 0
	for _, g := range groups {
		if len(cur) > 0 && n+len(g.inputs) > max {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, g)
		n += len(g.inputs)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// flush projects the buffered inputs, retrying failed subjects for up to
// Options.Rounds rounds. Subjects still failing are recorded in f.failed.
func (f *folder) flush(ctx context.Context) error {
	groups := groupBySubject(f.buf)
	f.buf = f.buf[:0]
	f.mu.Lock()
	f.st.Subjects += len(groups)
	f.mu.Unlock()
	for round := 0; len(groups) > 0; round++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if round > 0 {
			f.mu.Lock()
			f.st.Retried += len(groups)
			f.mu.Unlock()
			if err := retry.Sleep(ctx, retry.Exp(100*time.Millisecond, 3200*time.Millisecond, round)); err != nil {
				return err
			}
		}
		failed := f.projectChunks(ctx, chunk(groups, f.opts.ChunkEvents), round+1 == f.opts.Rounds)
		if err := ctx.Err(); err != nil {
			return err
		}
		if round+1 == f.opts.Rounds {
			break
		}
		groups = failed
	}
	return nil
}

// projectChunks projects chunks with Options.Workers at once and returns
// the groups that failed. When last is set, their errors are recorded as
// final failures.
func (f *folder) projectChunks(ctx context.Context, chunks [][]group, last bool) []group {
	work := make(chan []group)
	var failed []group
	var wg sync.WaitGroup
	for range min(f.opts.Workers, len(chunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				var inputs []projector.Input
				for _, g := range c {
					inputs = append(inputs, g.inputs...)
				}
				out := f.proj.Project(ctx, inputs)
				f.mu.Lock()
				f.st.Chunks++
				f.st.Changed += out.Changed
				f.st.Unchanged += out.Unchanged
				f.st.Commits += out.Commits
				f.st.Expired += out.Expired
				f.st.Poison += len(out.Poison)
				f.st.Late += out.Late
				f.st.Quarantined += len(out.Quarantined)
				quarantined := map[string]int{}
				for i := range out.Quarantined {
					quarantined[inputs[i].Event.Subject]++
				}
				for _, g := range c {
					err, bad := out.Failed[g.subject]
					if perr, poison := out.Poison[g.subject]; poison {
						// Can never be projected: no round will change that.
						f.failed[g.subject] = perr
						continue
					}
					if bad {
						failed = append(failed, g)
						if last {
							f.failed[g.subject] = err
						}
						continue
					}
					f.st.Projected += len(g.inputs) - quarantined[g.subject]
				}
				if f.opts.Progress != nil {
					el := time.Since(f.start)
					f.opts.Progress(Progress{
						Read: f.st.Events, Projected: f.st.Projected, Subjects: f.st.Changed + f.st.Unchanged,
						Changed: f.st.Changed, Elapsed: el, EventsPerSecond: float64(f.st.Projected) / max(el.Seconds(), 1e-9),
					})
				}
				f.mu.Unlock()
			}
		}()
	}
sending:
	for _, c := range chunks {
		select {
		case work <- c:
		case <-ctx.Done():
			break sending
		}
	}
	close(work)
	wg.Wait()
	sort.Slice(failed, func(i, j int) bool { return failed[i].subject < failed[j].subject })
	return failed
}

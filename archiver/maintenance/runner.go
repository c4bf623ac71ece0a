package maintenance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
)

// DefaultDaysAgo: compact works on the day before yesterday.
const DefaultDaysAgo = 2

// Compactor compacts one day of one archive table and runs a table's
// Iceberg maintenance (archiver.Archive).
type Compactor interface {
	Compact(ctx context.Context, table, date string, opts archiver.CompactOptions) (archiver.CompactStats, error)
	Maintain(ctx context.Context, table string, opts archiver.MaintainOptions) (archiver.MaintainStats, error)
}

// Verifier compares the projections with the archive (ArchiveVerifier).
type Verifier interface {
	Verify(ctx context.Context) (rebuild.Report, error)
}

// ArchiveVerifier is the Verifier of rebuild.Verify over an archive and
// the live tables.
type ArchiveVerifier struct {
	Source  rebuild.Source
	Live    rebuild.Live
	Options rebuild.VerifyOptions
}

// Verify runs rebuild.Verify.
func (v ArchiveVerifier) Verify(ctx context.Context) (rebuild.Report, error) {
	return rebuild.Verify(ctx, v.Source, v.Live, v.Options)
}

// Config configures a Runner.
type Config struct {
	// Deployment names the deployment in the metrics' "Deployment"
	// dimension: "<prefix>-<stage>" (required).
	Deployment string
	// DaysAgo: compact works on the UTC day this many days before the
	// invocation's (default DefaultDaysAgo; at least 1: today's partition
	// is still being written).
	DaysAgo int
	// Tables to compact and maintain; empty means every table
	// (archiver.Tables()).
	Tables []string
	// Compact tunes the compactions (zero value: archiver's defaults).
	Compact archiver.CompactOptions
	// Maintain tunes snapshot expiry and orphan cleanup (zero value:
	// archiver's defaults: snapshots older than 7 days, keeping 10; orphans
	// older than 3 days).
	Maintain archiver.MaintainOptions
}

// Validate names the bad field (call after SetDefaults).
func (c Config) Validate() error {
	switch {
	case c.Deployment == "":
		return errors.New("maintenance: Config.Deployment is required")
	case c.DaysAgo < 1:
		return fmt.Errorf("maintenance: Config.DaysAgo: must be at least 1 (today is still being written), got %d", c.DaysAgo)
	}
	known := map[string]bool{}
	for _, t := range archiver.Tables() {
		known[t.Name] = true
	}
	for _, t := range c.Tables {
		if !known[t] {
			return fmt.Errorf("maintenance: Config.Tables: unknown table %q", t)
		}
	}
	if err := c.Maintain.Validate(); err != nil {
		return err
	}
	return c.Compact.Validate()
}

// SetDefaults fills in the zero fields.
func (c *Config) SetDefaults() {
	c.DaysAgo = cmp.Or(c.DaysAgo, DefaultDaysAgo)
	if len(c.Tables) == 0 {
		for _, t := range archiver.Tables() {
			c.Tables = append(c.Tables, t.Name)
		}
	}
}

// Runner runs maintenance events.
type Runner struct {
	cfg       Config
	compactor Compactor
	verifier  Verifier
	metrics   io.Writer
	log       *slog.Logger
	// Now is the clock (tests set it); default time.Now.
	Now func() time.Time
}

// New returns a Runner. metrics receives the EMF lines (the function's
// standard output); log may be nil.
func New(cfg Config, c Compactor, v Verifier, metrics io.Writer, log *slog.Logger) (*Runner, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c == nil || v == nil || metrics == nil {
		return nil, errors.New("maintenance: New: the compactor, the verifier and the metrics writer are required")
	}
	if log == nil {
		log = slog.Default()
	}
	return &Runner{cfg: cfg, compactor: c, verifier: v, metrics: metrics, log: log, Now: time.Now}, nil
}

// Result is what a task did; the function returns it as JSON.
type Result struct {
	Task string `json:"task"`
	// Date is the day compact worked on.
	Date      string                  `json:"date,omitempty"`
	Compacted []archiver.CompactStats `json:"compacted,omitempty"`
	// Maintained is what snapshot expiry and orphan cleanup did, per table
	// (compact runs them after compacting).
	Maintained []archiver.MaintainStats `json:"maintained,omitempty"`
	// Differences is verify's difference count.
	Differences *int `json:"differences,omitempty"`
	// Events is how many archived events verify folded.
	Events int `json:"events,omitempty"`
}

// CompactDate is the day compact works on at now: DaysAgo UTC days before.
func (r *Runner) CompactDate(now time.Time) string {
	return now.UTC().AddDate(0, 0, -r.cfg.DaysAgo).Format(time.DateOnly)
}

// Run runs ev. It returns an error when the task could not be done (the
// invocation then fails, and Lambda retries it); differences found by
// verify are a result, not an error.
func (r *Runner) Run(ctx context.Context, ev Event) (Result, error) {
	if err := ev.Validate(); err != nil {
		return Result{}, err
	}
	now := r.Now()
	res := Result{Task: ev.Task}
	var err error
	switch ev.Task {
	case TaskCompact:
		res.Date = ev.Date
		res.Date = cmp.Or(res.Date, r.CompactDate(now))
		err = r.compact(ctx, &res)
	case TaskVerify:
		err = r.verify(ctx, now, &res)
	}
	if err != nil {
		r.log.Error("maintenance failed", "task", ev.Task, "date", res.Date, "err", err)
		return res, err
	}
	if err := writeMetric(r.metrics, r.Now(), r.dims(ev.Task), MetricSucceeded, 1); err != nil {
		return res, fmt.Errorf("maintenance: metric: %w", err)
	}
	r.log.Info("maintenance done", "task", ev.Task, "date", res.Date)
	return res, nil
}

func (r *Runner) dims(task string) map[string]string {
	return map[string]string{"Deployment": r.cfg.Deployment, "Task": task}
}

func (r *Runner) compact(ctx context.Context, res *Result) error {
	for _, t := range r.cfg.Tables {
		st, err := r.compactor.Compact(ctx, t, res.Date, r.cfg.Compact)
		if err != nil {
			return fmt.Errorf("maintenance: compact %s %s: %w", t, res.Date, err)
		}
		res.Compacted = append(res.Compacted, st)
	}
	// Then the Iceberg upkeep: expire old snapshots and delete orphan files
	// (never a file any metadata file at the table's location references).
	// A table Maintain refuses (archiver.ErrShortHistory: its catalog entry
	// is not the whole history at its location) fails the task, naming it,
	// after the other tables are maintained: one lost catalog entry does not
	// stop the upkeep of the rest.
	var errs []error
	for _, t := range r.cfg.Tables {
		st, err := r.compactor.Maintain(ctx, t, r.cfg.Maintain)
		if err != nil {
			errs = append(errs, fmt.Errorf("maintenance: maintain %s: %w", t, err))
			continue
		}
		res.Maintained = append(res.Maintained, st)
	}
	return errors.Join(errs...)
}

func (r *Runner) verify(ctx context.Context, now time.Time, res *Result) error {
	rep, err := r.verifier.Verify(ctx)
	if err != nil {
		return fmt.Errorf("maintenance: verify: %w", err)
	}
	n := len(rep.Differences)
	res.Differences, res.Events = &n, rep.Archive.Events
	if n > 0 {
		r.log.Warn("verify: the projections differ from the archive", "differences", n, "first", rep.Differences[0])
	}
	if err := writeMetric(r.metrics, now, map[string]string{"Deployment": r.cfg.Deployment}, MetricVerifyDifferences, float64(n)); err != nil {
		return fmt.Errorf("maintenance: metric: %w", err)
	}
	return nil
}

// Package audit provides the operator's reconcile workflow ("streamfold
// reconcile"): prove that every event the event table recorded in a window
// was applied by the projector and is held by the archive, and, with Heal,
// feed exactly the missing events through the consumers' own idempotent
// paths (reconcile.Reconcile does the work).
//
// Options name the window as an operator does (the last Since, or From and
// To); Options.Window resolves it against a clock, a pure step a test can
// assert. Run wires the projector, the archive and the operations record
// from conn.Settings and reconciles; the report renders as text (WriteText,
// with the exact heal command) or marshals as JSON. Run is safe to repeat
// and to run while the consumers run.
package audit

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// DefaultSince is the window without Since, From and To.
const DefaultSince = 24 * time.Hour

// Options are one reconcile's settings. Zero Segments, IDsPerKind and
// BucketEvents take reconcile's defaults.
type Options struct {
	// Since is the window's length before now minus Settle, a duration or
	// a number of days ("14d"); empty is DefaultSince. It excludes From
	// and To.
	Since string
	// From and To bound the window [From, To): RFC 3339 or a date
	// (midnight UTC); To defaults to now minus Settle and needs From.
	From, To string
	// Settle leaves the events recorded this recently to the consumers.
	Settle time.Duration
	// Segments are the parallel Scan segments.
	Segments int
	// IDsPerKind are the event ids listed per row and kind in the text.
	IDsPerKind int
	// BucketEvents are the most events the archive comparison holds in
	// memory at once.
	BucketEvents int
	// Heal feeds the missing events through the projector and the archive,
	// then checks them again.
	Heal bool
	// ArchiveURI is the archive (s3://BUCKET/PREFIX); empty is the
	// naming's default. NoArchive compares with the projections only.
	ArchiveURI string
	NoArchive  bool
	// Progress, when set, is called as the run goes.
	Progress func(reconcile.Progress)
	// Logger gets the gaps the consumers noticed; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func invalid(field, problem string, err error) error {
	return toolkit.Invalid("reconcile", field, err, problem)
}

// Window is the window [from, to) the options name at now.
func (o Options) Window(now time.Time) (from, to time.Time, err error) {
	if o.Since != "" && (o.From != "" || o.To != "") {
		return from, to, invalid("Since", "goes without From and To", nil)
	}
	end := now.Add(-o.Settle)
	switch {
	case o.From != "":
		if from, err = ParseWhen(o.From); err != nil {
			return from, to, invalid("From", "", err)
		}
		to = end
		if o.To != "" {
			if to, err = ParseWhen(o.To); err != nil {
				return from, to, invalid("To", "", err)
			}
		}
	case o.To != "":
		return from, to, invalid("To", "needs From", nil)
	default:
		d := DefaultSince
		if o.Since != "" {
			if d, err = ParseSince(o.Since); err != nil {
				return from, to, invalid("Since", "", err)
			}
		}
		from, to = end.Add(-d), end
	}
	if !to.After(from) {
		return from, to, invalid("To", fmt.Sprintf("the window [%s, %s) is empty", from.Format(time.RFC3339), to.Format(time.RFC3339)), nil)
	}
	return from, to, nil
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now().UTC()
	}
	return o.Now().UTC()
}

// Plan is reconcile's options for o at now: the window resolved, the
// defaults filled in. Its errors name the field at fault.
func (o Options) Plan(now time.Time) (reconcile.Options, error) {
	p := reconcile.Options{
		Segments: o.Segments, IDsPerKind: o.IDsPerKind, BucketEvents: o.BucketEvents,
		Settle: o.Settle, Heal: o.Heal, Progress: o.Progress,
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"Segments", &p.Segments, reconcile.DefaultSegments}, {"IDsPerKind", &p.IDsPerKind, reconcile.DefaultIDsPerKind}, {"BucketEvents", &p.BucketEvents, reconcile.DefaultBucketEvents}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 1 {
			return p, invalid(f.name, fmt.Sprintf("must be at least 1, got %d", *f.v), nil)
		}
	}
	if o.Settle < 0 {
		return p, invalid("Settle", fmt.Sprintf("must not be negative, got %s", o.Settle), nil)
	}
	var err error
	if p.From, p.To, err = o.Window(now); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, invalid("Options", "", err)
	}
	if o.ArchiveURI != "" {
		if _, _, err := archiver.ParseURI(o.ArchiveURI); err != nil {
			return p, invalid("ArchiveURI", "", err)
		}
	}
	return p, nil
}

// Validate checks the options at the current time.
func (o Options) Validate() error {
	_, err := o.Plan(o.now())
	return err
}

// Run reconciles s's event table with its projections and archive. Its
// errors start with "reconcile: ".
func Run(ctx context.Context, s conn.Settings, o Options) (reconcile.Report, error) {
	plan, err := o.Plan(o.now())
	if err != nil {
		return reconcile.Report{}, err
	}
	n, err := s.Naming()
	if err != nil {
		return reconcile.Report{}, invalid("Settings", "", err)
	}
	shards, err := s.Shards()
	if err != nil {
		return reconcile.Report{}, invalid("Settings", "", err)
	}
	clients, err := s.Clients(ctx)
	if err != nil {
		return reconcile.Report{}, fmt.Errorf("reconcile: %w", err)
	}
	meter := capacity.NewMeter()
	ddb := clients.MeteredDynamoDB(meter)
	store, err := projector.NewDynamoStore(ddb, n)
	if err != nil {
		return reconcile.Report{}, invalid("Settings", "", err)
	}
	proj, err := projector.New(store, projector.Config{GSIShards: shards})
	if err != nil {
		return reconcile.Report{}, invalid("Settings", "", err)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := reconcile.Config{
		DynamoDB: ddb, Naming: n, Projector: proj, Meter: meter,
		Ops:    &opsrec.Store{API: ddb, Table: n.Table(schema.TableCheckpoints)},
		Logger: logger, Now: o.now,
	}
	if !o.NoArchive {
		a, err := s.OpenArchive(clients, n, o.ArchiveURI)
		if err != nil {
			return reconcile.Report{}, invalid("ArchiveURI", "", err)
		}
		defer a.Close()
		cfg.Archive = a
	}
	rep, err := reconcile.Reconcile(ctx, cfg, plan)
	if err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	return rep, nil
}

// ParseWhen reads an RFC 3339 time or a date (midnight UTC).
func ParseWhen(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("want RFC 3339 (2026-03-01T00:00:00Z) or a date (2026-03-01), got %q", s)
}

// ParseSince reads a positive duration; "14d" is 14 days.
func ParseSince(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err = fmt.Sscanf(days, "%d", &n); err == nil && fmt.Sprint(n) == days {
			d = time.Duration(n) * 24 * time.Hour
		} else {
			err = fmt.Errorf("not a number of days: %q", s)
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive, got %s", s)
	}
	return d, nil
}

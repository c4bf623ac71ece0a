package archivetools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/toolkit"
)

// CompactOptions are one compaction's settings.
type CompactOptions struct {
	Target
	// Date is the event date to compact, YYYY-MM-DD (required).
	Date string
	// MinAge leaves files younger than it alone; zero takes every file
	// (unlike archiver.CompactOptions, where zero is the default).
	MinAge time.Duration
	// DryRun plans only.
	DryRun bool
}

// Validate checks the options; its errors name the field at fault.
func (o CompactOptions) Validate() error {
	if _, err := time.Parse(time.DateOnly, o.Date); err != nil {
		return toolkit.Invalid("archive compact", "Date", nil, fmt.Sprintf("must be YYYY-MM-DD, got %q", o.Date))
	}
	if o.MinAge < 0 {
		return toolkit.Invalid("archive compact", "MinAge", nil, fmt.Sprintf("must not be negative, got %s", o.MinAge))
	}
	_, err := o.tables("archive compact")
	return err
}

// plan is the archiver's options for o.
func (o CompactOptions) plan() archiver.CompactOptions {
	minAge := o.MinAge
	if minAge == 0 {
		minAge = -1 // archiver: negative takes every object, zero is the default
	}
	return archiver.CompactOptions{MinAge: minAge, DryRun: o.DryRun}
}

// Compacted is what Compact did (or, in a dry run, would do); its JSON is
// the stats.
type Compacted struct {
	Stats  []archiver.CompactStats
	DryRun bool
}

// Compact merges the date's small data files of each target table into few
// large ones, one snapshot per table. An error wrapping
// archiver.ErrCompactionConflict means a concurrent compaction committed
// first: run again.
func Compact(ctx context.Context, o CompactOptions) (*Compacted, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	stats, err := perTable(ctx, o.Target, "archive compact", func(a *archiver.Archive, name string) (archiver.CompactStats, error) {
		st, err := a.Compact(ctx, name, o.Date, o.plan())
		if errors.Is(err, archiver.ErrCompactionConflict) {
			return st, fmt.Errorf("%s: %w (another compaction committed first; run again)", o.Date, err)
		}
		return st, err
	})
	return &Compacted{Stats: stats, DryRun: o.DryRun}, err
}

// MarshalJSON is the stats.
func (c *Compacted) MarshalJSON() ([]byte, error) { return json.Marshal(c.Stats) }

// WriteText prints one row per table.
func (c *Compacted) WriteText(w io.Writer) error {
	err := table(w, "TABLE\tDATE\tFILES BEFORE\tAFTER\tMERGED\tWRITTEN\tROWS\tDUPLICATES\tBYTES IN\tBYTES OUT\tSKIPPED", func(w io.Writer) {
		for _, s := range c.Stats {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Table, s.Date, s.ObjectsBefore, s.ObjectsAfter, s.Inputs, s.Outputs, s.Rows, s.Duplicates, s.InputBytes, s.OutputBytes, s.Skipped)
		}
	})
	dryRunNote(w, c.DryRun, "")
	return err
}

// MaintainOptions are one maintenance run's settings.
type MaintainOptions struct {
	Target
	archiver.MaintainOptions
}

// Validate checks the options; its errors name the field at fault.
func (o MaintainOptions) Validate() error {
	if err := o.MaintainOptions.Validate(); err != nil {
		return toolkit.Invalid("archive maintain", "MaintainOptions", err, "")
	}
	_, err := o.tables("archive maintain")
	return err
}

// Maintained is what Maintain did; its JSON is the stats.
type Maintained struct {
	Stats  []archiver.MaintainStats
	DryRun bool
}

// Maintain expires old snapshots and deletes orphan files of each target
// table (archiver.Archive.Maintain).
func Maintain(ctx context.Context, o MaintainOptions) (*Maintained, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	stats, err := perTable(ctx, o.Target, "archive maintain", func(a *archiver.Archive, name string) (archiver.MaintainStats, error) {
		return a.Maintain(ctx, name, o.MaintainOptions)
	})
	return &Maintained{Stats: stats, DryRun: o.DryRun}, err
}

// MarshalJSON is the stats.
func (m *Maintained) MarshalJSON() ([]byte, error) { return json.Marshal(m.Stats) }

// WriteText prints one row per table.
func (m *Maintained) WriteText(w io.Writer) error {
	err := table(w, "TABLE\tSNAPSHOTS\tEXPIRED\tORPHAN FILES\tORPHAN BYTES", func(w io.Writer) {
		for _, s := range m.Stats {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\n", s.Table, s.SnapshotsBefore, s.SnapshotsExpired, s.OrphansDeleted, s.OrphanBytes)
		}
	})
	dryRunNote(w, m.DryRun, " (orphan files are those that would be deleted)")
	return err
}

// RegisterOptions are one registration run's settings.
type RegisterOptions struct {
	Target
	// All says every table, explicitly; it excludes Table.
	All bool
	archiver.RegisterOptions
}

// Validate checks the options; its errors name the field at fault.
func (o RegisterOptions) Validate() error {
	if o.All && o.Table != "" {
		return toolkit.Invalid("archive register", "All", nil, "excludes Table: give one")
	}
	_, err := o.tables("archive register")
	return err
}

// Registered is what Register did; its JSON is the registrations.
type Registered struct {
	Registrations []archiver.Registration
	DryRun        bool
}

// Behind counts the tables the catalog has at an older metadata file
// than their location's newest (left so without Replace).
func (r *Registered) Behind() int {
	n := 0
	for _, reg := range r.Registrations {
		if reg.Action == "behind" {
			n++
		}
	}
	return n
}

// Found is an error when a table is behind (see Behind).
func (r *Registered) Found() error {
	if n := r.Behind(); n > 0 {
		return fmt.Errorf("archive register: %d tables behind their location in the catalog: --replace points them at the newest metadata", n)
	}
	return nil
}

// MarshalJSON is the registrations.
func (r *Registered) MarshalJSON() ([]byte, error) { return json.Marshal(r.Registrations) }

// Register registers each target table the catalog lacks from its newest
// metadata file in the archive (archiver.Archive.Register).
func Register(ctx context.Context, o RegisterOptions) (*Registered, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	regs, err := perTable(ctx, o.Target, "archive register", func(a *archiver.Archive, name string) (archiver.Registration, error) {
		return a.Register(ctx, name, o.RegisterOptions)
	})
	return &Registered{Registrations: regs, DryRun: o.DryRun}, err
}

// WriteText prints one row per table, then ties and tables behind.
func (r *Registered) WriteText(w io.Writer) error {
	err := table(w, "TABLE\tACTION\tVERSION\tSNAPSHOTS\tMETADATA FILES\tMETADATA", func(w io.Writer) {
		for _, r := range r.Registrations {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\n", r.Table, r.Action, r.Version, r.Snapshots, r.MetadataFiles, r.Metadata)
		}
	})
	for _, r := range r.Registrations {
		if len(r.Tied) > 0 {
			fmt.Fprintf(w, "%s: %d other metadata files of version %d were not chosen: %v\n", r.Table, len(r.Tied), r.Version, r.Tied)
		}
		if r.Action == "behind" {
			fmt.Fprintf(w, "%s: the catalog points at %s, older than the newest at %s: --replace points it at the newest\n", r.Table, r.Previous, r.Location)
		}
	}
	dryRunNote(w, r.DryRun, " (actions are what would be done)")
	return err
}

// perTable calls f on each of t's tables in t's archive and collects what
// it returns (never nil); an error names its table.
func perTable[S any](ctx context.Context, t Target, workflow string, f func(a *archiver.Archive, name string) (S, error)) ([]S, error) {
	all := []S{}
	_, err := t.each(ctx, workflow, func(a *archiver.Archive, name string) error {
		st, err := f(a, name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all = append(all, st)
		return nil
	})
	return all, err
}

package repair

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// Where a rebuild writes (RebuildOptions.Into).
const (
	// Fresh is a new set of tables (RebuildOptions.TargetPrefix and
	// TargetStage), the repair for a projection Verify finds wrong.
	Fresh = string(rebuild.Fresh)
	// InPlace is the live tables: it restores history, it cannot undo a
	// row changed behind the projector's back.
	InPlace = string(rebuild.InPlace)
)

// RebuildOptions are one rebuild's settings.
type RebuildOptions struct {
	// Archive is the archive, s3://BUCKET/PREFIX. Required.
	Archive string
	// Into is Fresh (empty is Fresh) or InPlace.
	Into string
	// TargetPrefix and TargetStage name Fresh's tables; empty are
	// PREFIX-rebuild and the live stage. Fresh only.
	TargetPrefix, TargetStage string
	// Force makes Fresh go on when its tables hold items: the archive is
	// then joined into what they hold. Fresh only.
	Force bool
	// Fold tunes the fold of the archive (DefaultFold).
	Fold Fold
}

// RebuildPlan is a rebuild decided: which archive goes into which tables.
type RebuildPlan struct {
	Archive string
	Mode    rebuild.Mode
	// Live are the live tables; Tables those written (Live for InPlace).
	Live, Tables schema.Naming
	Force        bool
	Fold         Fold
}

// NewRebuildPlan checks o against the live tables and decides the rebuild;
// its errors (*toolkit.OptionsError) name the field at fault.
func NewRebuildPlan(live schema.Naming, o RebuildOptions) (RebuildPlan, error) {
	p := RebuildPlan{Archive: o.Archive, Mode: rebuild.Mode(o.Into), Live: live, Tables: live, Force: o.Force, Fold: o.Fold}
	if err := live.Validate(); err != nil {
		return p, toolkit.Invalid("rebuild", "Live", err, "")
	}
	if o.Archive == "" {
		return p, toolkit.Invalid("rebuild", "Archive", nil, "required, e.g. "+conn.DefaultArchive(live))
	}
	if _, _, err := archiver.ParseURI(o.Archive); err != nil {
		return p, toolkit.Invalid("rebuild", "Archive", err, "")
	}
	switch o.Into {
	case "", Fresh:
		p.Mode, p.Tables = rebuild.Fresh, rebuild.FreshTarget(live, o.TargetPrefix, o.TargetStage)
		if err := p.Tables.Validate(); err != nil {
			return p, toolkit.Invalid("rebuild", "Target", err, "")
		}
		if p.Tables == live {
			return p, toolkit.Invalid("rebuild", "Into", nil, fmt.Sprintf("fresh: the target %s-%s-* are the live tables; use in-place", live.Prefix, live.Stage))
		}
	case InPlace:
		if o.TargetPrefix != "" || o.TargetStage != "" || o.Force {
			return p, toolkit.Invalid("rebuild", "TargetPrefix, TargetStage, Force", nil, "go with fresh only")
		}
	default:
		return p, toolkit.Invalid("rebuild", "Into", nil, fmt.Sprintf("must be fresh or in-place, got %q", o.Into))
	}
	return p, o.Fold.validate("rebuild")
}

// RebuildResult is rebuild's summary.
type RebuildResult struct {
	Archive string `json:"archive"`
	Into    string `json:"into"`
	Prefix  string `json:"prefix"`
	Stage   string `json:"stage"`
	// TablesCreated lists the tables Fresh created.
	TablesCreated []string `json:"tablesCreated"`
	rebuild.Stats
}

// Rebuild decides (NewRebuildPlan) and executes a rebuild of the tables
// of s.
func Rebuild(ctx context.Context, c *awsclient.Clients, s conn.Settings, o RebuildOptions) (*RebuildResult, error) {
	live, err := s.Naming()
	if err != nil {
		return nil, toolkit.Invalid("rebuild", "Live", err, "")
	}
	p, err := NewRebuildPlan(live, o)
	if err != nil {
		return nil, err
	}
	return p.Execute(ctx, c, s)
}

// Execute folds the archive into p.Tables (archiver/rebuild.Run): Fresh
// first creates its tables and refuses them when they hold items, unless
// Force (an error wrapping rebuild.ErrTargetNotEmpty, no result). The
// result is set whenever the fold ran, also with an error wrapping
// rebuild.ErrIncomplete (some subjects not projected: run it again).
func (p RebuildPlan) Execute(ctx context.Context, c *awsclient.Clients, s conn.Settings) (*RebuildResult, error) {
	arch, err := s.OpenArchive(c, p.Live, p.Archive)
	if err != nil {
		return nil, toolkit.Invalid("rebuild", "Archive", err, "")
	}
	defer arch.Close()
	opts, done := p.Fold.options("rebuild")
	cfg := rebuild.Config{Archive: arch, DynamoDB: c.DynamoDB, Mode: p.Mode, Live: p.Live, Force: p.Force, Options: opts}
	if p.Mode == rebuild.Fresh {
		cfg.Target = p.Tables
	}
	res, err := rebuild.Run(ctx, cfg)
	done()
	if err != nil && !errors.Is(err, rebuild.ErrIncomplete) {
		return nil, err
	}
	return &RebuildResult{Archive: arch.URI(), Into: string(p.Mode), Prefix: p.Tables.Prefix, Stage: p.Tables.Stage,
		TablesCreated: append([]string{}, res.TablesCreated...), Stats: res.Stats}, err
}

// Warnings are the notes on a rebuild: an archive without events, events
// that could not be projected, items not written as born expired.
func (r RebuildResult) Warnings() []string {
	out := foldWarnings("rebuild", r.Archive, r.Stats)
	if r.Expired > 0 {
		out = append(out, fmt.Sprintf("rebuild: %d items were not written: their events were recorded longer ago than the retention; --retention DAYS keeps them", r.Expired))
	}
	return out
}

// WriteText prints the summary as text.
func (r RebuildResult) WriteText(w io.Writer) error {
	if len(r.TablesCreated) > 0 {
		fmt.Fprintf(w, "created %d tables %s-%s-*\n", len(r.TablesCreated), r.Prefix, r.Stage)
	}
	_, err := fmt.Fprintf(w, "rebuilt %s-%s-* %s from %s: %d events (%d projected, %d non-agent, %d invalid), %d subjects: %d changed, %d unchanged, %d failed; %d items born expired (skipped); %d commits in %.1fs (%.0f events/s)\n",
		r.Prefix, r.Stage, r.Into, r.Archive, r.Events, r.Projected, r.NonAgent, r.Invalid,
		r.Subjects, r.Changed, r.Unchanged, r.Failed, r.Expired, r.Commits, r.Seconds, r.EventsPerSecond)
	return err
}

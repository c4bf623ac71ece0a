package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/toolkit/audit"
)

type reconcileCmd struct {
	globals
	Since        string        `help:"Check the events recorded in this long before now minus --settle, e.g. 24h, 90m, 14d (default 24h)."`
	From         string        `placeholder:"T" help:"Check the events recorded at or after T (RFC 3339, or YYYY-MM-DD for midnight UTC)."`
	To           string        `placeholder:"T" help:"... and before T (default: now minus --settle)."`
	Heal         bool          `help:"Feed the missing events through the projector and the archive, then check them again."`
	Segments     int           `default:"4" help:"Parallel Scan segments."`
	Settle       time.Duration `default:"2m" help:"Leave the events recorded this recently to the consumers."`
	IDs          int           `name:"ids" default:"20" help:"Event ids listed per row and kind in the text output."`
	BucketEvents int           `name:"bucket-events" default:"200000" help:"Most events the archive comparison holds in memory at once."`
	ArchiveURI   string        `name:"archive-uri" placeholder:"URI" help:"The archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)."`
	NoArchive    bool          `name:"no-archive" help:"Compare with the projections only."`
}

func (reconcileCmd) Help() string { return longHelp("reconcile") }

func (c *reconcileCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	o := audit.Options{Since: c.Since, From: c.From, To: c.To, Heal: c.Heal, Segments: c.Segments, Settle: c.Settle, IDsPerKind: c.IDs, BucketEvents: c.BucketEvents,
		ArchiveURI: c.ArchiveURI, NoArchive: c.NoArchive, Now: env.now, Logger: slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if !out.Quiet {
		o.Progress = func(p reconcile.Progress) {
			fmt.Fprintf(env.stderr, "reconcile: %s: %d items read, %d events in the window, %d checked, gaps %d projection %d archive, %.0f items/s\n",
				p.Phase, p.Scanned, p.Events, p.Checked, p.MissingProjection, p.MissingArchive, p.EventsPerSecond)
		}
	}
	rep, err := audit.Run(ctx, c.settings(), o)
	if err != nil {
		return fail(exitUsageOr(err), "%w", err)
	}
	n, _ := c.naming()
	if err := env.render(out, rep, func(w io.Writer) error { return audit.WriteText(w, rep, n) }); err != nil || rep.Gaps() == 0 {
		return err
	}
	return exitStatus(exitFailed)
}

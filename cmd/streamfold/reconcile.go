package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "reconcile", summary: "prove every event of the event table was projected and archived; --heal what was not", run: runReconcile})
}

const reconcileHelp = `Usage: streamfold reconcile [--since DURATION | --from T --to T] [--heal] [--json] [flags]

Reads the events the event table recorded in a window (a parallel,
eventually consistent Scan) and compares them with what the projector
applied and what the archive holds:

  missing projection  the event's fold into its subject's stored state
                      changes it: the projector never applied it
  missing archive     the archive's table has no row with its id on its day
  conflict            the archive holds that id with other content
  dead-lettered       refused by the consumers' rules (future-dated,
                      invalid, poison): in the dead letters, not a gap
  late                recorded after its aggregate expired: not projected
                      by rule, archived
  archive-only        archived events of the window the table no longer
                      holds (informational)

Rows are per domain and event day (UTC); each lists up to --ids event ids
per kind (--json: every id). The result is also recorded in the
checkpoints table, where the operations page shows it.

--heal feeds exactly the missing events through the consumers' own
idempotent paths (the projector's commit, the archive's batch), then checks
them again: safe while the consumers run, and never double counting however
often it runs. Conflicts are not healed.

Events recorded in the last --settle are left to the consumers. Gaps the
consumers noticed (a trimmed stream, a restart at LATEST) are logged; the
whole window is checked either way. Memory stays bounded whatever the
window (the events are spilled to temporary files per day).

Examples:
  streamfold reconcile --since 24h
  streamfold reconcile --from 2026-03-01T00:00:00Z --to 2026-03-02T00:00:00Z --json
  streamfold reconcile --since 72h --heal
  streamfold reconcile --stage prod --since 14d --segments 16

Exit status: 0 no gap; 1 gaps found (after --heal: gaps remaining); 2
usage; 3 a table or the archive could not be read or written.

Flags:
`

func runReconcile(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	since := fs.String("since", "", "check the events recorded in this long before now minus --settle, e.g. 24h, 90m, 14d (default 24h)")
	from := fs.String("from", "", "check the events recorded at or after T (RFC 3339, or YYYY-MM-DD for midnight UTC)")
	to := fs.String("to", "", "... and before T (default: now minus --settle)")
	heal := fs.Bool("heal", false, "feed the missing events through the projector and the archive, then check them again")
	asJSON := fs.Bool("json", false, "print the full report (every gap id) as JSON")
	var opts reconcile.Options
	fs.IntVar(&opts.Segments, "segments", reconcile.DefaultSegments, "parallel Scan segments")
	fs.DurationVar(&opts.Settle, "settle", reconcile.DefaultSettle, "leave the events recorded this recently to the consumers")
	fs.IntVar(&opts.IDsPerKind, "ids", reconcile.DefaultIDsPerKind, "event ids listed per row and kind in the text output")
	fs.IntVar(&opts.BucketEvents, "bucket-events", reconcile.DefaultBucketEvents, "most events the archive comparison holds in memory at once")
	archiveURI := fs.String("archive-uri", "", "the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	noArchive := fs.Bool("no-archive", false, "compare with the projections only")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	fs.Usage = func() { fmt.Fprint(env.stderr, reconcileHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "reconcile: unexpected argument %q", fs.Arg(0))
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "reconcile: %v", err)
	}
	now := env.clock()
	if err := reconcileWindow(&opts, now, *since, *from, *to); err != nil {
		return errorf(env, exitUsage, "reconcile: %v", err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--segments", opts.Segments}, {"--ids", opts.IDsPerKind}, {"--bucket-events", opts.BucketEvents}} {
		if f.v < 1 {
			return errorf(env, exitUsage, "reconcile: %s: must be at least 1, got %d", f.name, f.v)
		}
	}
	if opts.Settle < 0 {
		return errorf(env, exitUsage, "reconcile: --settle: must not be negative, got %s", opts.Settle)
	}
	opts.Heal = *heal
	if err := opts.Validate(); err != nil {
		return errorf(env, exitUsage, "reconcile: %v", err)
	}
	if *archiveURI != "" {
		if _, _, err := archiver.ParseURI(*archiveURI); err != nil {
			return errorf(env, exitUsage, "reconcile: --archive-uri: %v", err)
		}
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "reconcile: %v", err)
	}
	meter := capacity.NewMeter()
	ddb := clients.MeteredDynamoDB(meter)
	store, err := projector.NewDynamoStore(ddb, n)
	if err != nil {
		return errorf(env, exitUsage, "reconcile: %v", err)
	}
	shards, err := g.gsiShards()
	if err != nil {
		return errorf(env, exitUsage, "reconcile: %v", err)
	}
	proj, err := projector.New(store, projector.Config{GSIShards: shards})
	if err != nil {
		return errorf(env, exitUsage, "reconcile: %v", err)
	}
	cfg := reconcile.Config{
		DynamoDB: ddb, Naming: n, Projector: proj, Meter: meter,
		Ops:    &opsrec.Store{API: ddb, Table: n.Table(schema.TableCheckpoints)},
		Logger: slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Now:    env.clock,
	}
	if !*noArchive {
		a, err := g.openArchive(clients, n, *archiveURI)
		if err != nil {
			return errorf(env, exitUsage, "reconcile: --archive-uri: %v", err)
		}
		defer a.Close()
		cfg.Archive = a
	}
	if !*quiet {
		opts.Progress = func(p reconcile.Progress) {
			fmt.Fprintf(env.stderr, "reconcile: %s: %d items read, %d events in the window, %d checked, gaps %d projection %d archive, %.0f items/s\n",
				p.Phase, p.Scanned, p.Events, p.Checked, p.MissingProjection, p.MissingArchive, p.EventsPerSecond)
		}
	}
	rep, err := reconcile.Reconcile(ctx, cfg, opts)
	if err != nil {
		return errorf(env, exitRuntime, "reconcile: %v", err)
	}
	code := exitOK
	if rep.Gaps() > 0 {
		code = exitFailed
	}
	if *asJSON {
		if err := writeJSON(env.stdout, rep); err != nil {
			return errorf(env, exitRuntime, "reconcile: %v", err)
		}
		return code
	}
	if err := printReconcile(env.stdout, rep, n, healCommand(g, n, rep)); err != nil {
		return errorf(env, exitRuntime, "reconcile: %v", err)
	}
	return code
}

// reconcileWindow sets opts.From and To from --since or --from/--to.
func reconcileWindow(opts *reconcile.Options, now time.Time, since, from, to string) error {
	if since != "" && (from != "" || to != "") {
		return fmt.Errorf("--since goes without --from and --to")
	}
	end := now.Add(-opts.Settle)
	switch {
	case from != "":
		f, err := parseWhen(from)
		if err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		opts.From = f
		if to != "" {
			if opts.To, err = parseWhen(to); err != nil {
				return fmt.Errorf("--to: %w", err)
			}
		} else {
			opts.To = end
		}
	case to != "":
		return fmt.Errorf("--to needs --from")
	default:
		d := 24 * time.Hour
		if since != "" {
			var err error
			if d, err = parseSince(since); err != nil {
				return fmt.Errorf("--since: %w", err)
			}
		}
		opts.From, opts.To = end.Add(-d), end
	}
	if !opts.To.After(opts.From) {
		return fmt.Errorf("the window [%s, %s) is empty", opts.From.Format(time.RFC3339), opts.To.Format(time.RFC3339))
	}
	return nil
}

// parseWhen reads an RFC 3339 time or a date (midnight UTC).
func parseWhen(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("want RFC 3339 (2026-03-01T00:00:00Z) or a date (2026-03-01), got %q", s)
}

// parseSince reads a positive duration; "14d" is 14 days.
func parseSince(s string) (time.Duration, error) {
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

// healCommand is the command that heals exactly this report's window.
func healCommand(g globals, n schema.Naming, rep reconcile.Report) string {
	cmd := "streamfold reconcile"
	if n.Prefix != "streamfold" {
		cmd += " --prefix " + n.Prefix
	}
	if n.Stage != "dev" {
		cmd += " --stage " + n.Stage
	}
	return cmd + " --from " + rep.From.Format(time.RFC3339Nano) + " --to " + rep.To.Format(time.RFC3339Nano) + " --heal"
}

// printReconcile prints the report for people: a line on the window, the
// rows with their ids, and what to do.
func printReconcile(w io.Writer, rep reconcile.Report, n schema.Naming, heal string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "reconciled %s: %d events recorded in [%s, %s); %.1f read + %.1f write units\n",
		n.Table(schema.TableEvents), rep.Events, rep.From.Format(time.RFC3339), rep.To.Format(time.RFC3339), rep.ReadUnits, rep.WriteUnits)
	if len(rep.Rows) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DOMAIN\tDAY\tEVENTS\tMISSING-PROJECTION\tMISSING-ARCHIVE\tCONFLICTS\tDEAD-LETTERED\tLATE\tARCHIVE-ONLY\tHEALED")
		for _, d := range rep.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", d.Domain, d.Day, d.Events, d.MissingProjection, d.MissingArchive, d.Conflicts, d.DeadLettered, d.Late, d.ArchiveOnly, d.Healed)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, d := range rep.Rows {
			for _, kind := range []string{reconcile.KindProjection, reconcile.KindArchive, reconcile.KindConflict, reconcile.KindHealed} {
				ids := d.IDs[kind]
				if len(ids) == 0 {
					continue
				}
				total := map[string]int{reconcile.KindProjection: d.MissingProjection, reconcile.KindArchive: d.MissingArchive, reconcile.KindConflict: d.Conflicts, reconcile.KindHealed: d.Healed}[kind]
				more := ""
				if total > len(ids) {
					more = fmt.Sprintf(" (and %d more: --json lists them all)", total-len(ids))
				}
				fmt.Fprintf(&b, "  %s %s %s: %s%s\n", d.Domain, d.Day, kind, strings.Join(ids, " "), more)
			}
		}
	}
	switch gaps := rep.Gaps(); {
	case gaps == 0:
		fmt.Fprintln(&b, "no gap")
	case rep.Heal:
		fmt.Fprintf(&b, "%d gaps remain after healing (conflicts are never healed); run it again, or look at the ids above\n", gaps)
	default:
		fmt.Fprintf(&b, "%d gaps; to heal them:\n  %s\n", gaps, heal)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

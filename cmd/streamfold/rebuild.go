package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "rebuild", summary: "rebuild the projections from the Parquet archive, into fresh tables or in place", run: runRebuild})
}

const rebuildHelp = `Usage: streamfold rebuild --from-archive s3://BUCKET/PREFIX [--into fresh|in-place] [flags]

Rebuilds the projections (aggregate states, projection items, daily counter
rows, run summaries) from the Parquet archive: the history the stream (24
hours) and the event table (14 days) no longer hold. Every archived event is
folded by the same projector the stream runs. Folds are joins, so the order
of the archive does not matter, and running it again changes nothing.

--into fresh (the default) creates a new set of tables, named by
--target-prefix and --target-stage (default: PREFIX-rebuild and the current
stage), and rebuilds there. It refuses when their event, aggregate or
projection tables already hold items, unless --force (the archive is then
joined into what they hold). Compare the new tables with "streamfold verify
--prefix TARGET", then point readers at them. This is the repair for a
projection that verify finds wrong.

--into in-place folds the archive into the live tables (--prefix, --stage).
It is safe while the projector runs (commits are version-checked, conflicts
retried), but it only adds what the archive holds and the stored states
lack: it restores history, it cannot undo a row changed behind the
projector's back.

Retention: jobs, runs, deployments and messages expire 90 days after their
events were recorded (recordedat), as in the stream. History recorded longer
ago would be born expired: it is skipped and counted ("born expired" in the
summary), not written. --retention DAYS keeps items that long after their
recording instead, e.g. --retention 400 to look at last year's jobs; tables
without a TTL (executions, sf/ldf workflows, daily metrics) are rebuilt in
full either way.

Progress goes to standard error, the summary to standard output.

Examples:
  streamfold rebuild --from-archive s3://streamfold-prod-archive/archive --stage prod --target-prefix sf-rebuilt
  streamfold rebuild --from-archive s3://streamfold-dev-archive/archive --into in-place --json
  streamfold rebuild --from-archive s3://streamfold-prod-archive/archive --stage prod --retention 400

Exit status: 0 rebuilt; 1 the fresh target is not empty, or some aggregates
could not be projected (run it again: it is idempotent); 2 usage; 3 the
archive or a table could not be read or written.

Flags:
`

// rebuildSummary is what rebuild prints.
type rebuildSummary struct {
	Archive string `json:"archive"`
	Into    string `json:"into"`
	Prefix  string `json:"prefix"`
	Stage   string `json:"stage"`
	// TablesCreated lists the tables --into fresh created.
	TablesCreated []string `json:"tablesCreated"`
	rebuild.Stats
}

// foldProgress returns a rebuild.Progress callback printing at most once
// a second, and a function printing the last report.
func foldProgress(w io.Writer, cmd string) (func(rebuild.Progress), func()) {
	var mu sync.Mutex
	var last time.Time
	var pending *rebuild.Progress
	print := func(p rebuild.Progress) {
		fmt.Fprintf(w, "%s: %d events read, %d projected, %d subjects (%d changed), %.0f events/s\n",
			cmd, p.Read, p.Projected, p.Subjects, p.Changed, p.EventsPerSecond)
	}
	return func(p rebuild.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if time.Since(last) < time.Second {
				pending = &p
				return
			}
			last, pending = time.Now(), nil
			print(p)
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			if pending != nil {
				print(*pending)
			}
		}
}

// foldFlags registers the flags that tune the fold of the archive, with
// rebuild.Options' defaults.
func foldFlags(fs *flag.FlagSet, o *rebuild.Options) {
	var d rebuild.Options
	d.SetDefaults()
	fs.IntVar(&o.ChunkEvents, "chunk", d.ChunkEvents, "events per projector call (whole subjects)")
	fs.IntVar(&o.Workers, "workers", d.Workers, "projector calls at once")
	fs.IntVar(&o.BufferEvents, "buffer", d.BufferEvents, "events held in memory before they are grouped by subject and projected")
	fs.IntVar(&o.Projector.RetentionDays, "retention", 0, "days an item with a TTL lives after its events were recorded (default: the table's, 90 for jobs, runs, deployments and messages); what would be born expired is skipped and counted")
	fs.IntVar(&o.Projector.GSIShards, "gsi-shards", 0, "write shards of the sharded indexes, as the deployment's gsi_shards (0 or 1: off, the seeds' items; 2-16: items carry gsiShard; docs/deployment.md)")
}

// checkFoldFlags rejects values the options would silently replace by
// their defaults (zero) or refuse later.
func checkFoldFlags(o rebuild.Options) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"--chunk", o.ChunkEvents}, {"--workers", o.Workers}, {"--buffer", o.BufferEvents}} {
		if f.v < 1 {
			return fmt.Errorf("%s: must be at least 1, got %d", f.name, f.v)
		}
	}
	if d := o.Projector.RetentionDays; d < 0 || d > projector.MaxRetentionDays {
		return fmt.Errorf("--retention: must be between 1 and %d days, got %d", projector.MaxRetentionDays, d)
	}
	if err := schema.ValidateGSIShards("--gsi-shards", o.Projector.GSIShards); err != nil {
		return err
	}
	o.SetDefaults()
	return o.Validate()
}

func runRebuild(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("rebuild", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	from := fs.String("from-archive", "", "the archive, s3://BUCKET/PREFIX (required)")
	into := fs.String("into", "fresh", "fresh: new tables (--target-prefix, --target-stage); in-place: the live tables")
	targetPrefix := fs.String("target-prefix", "", "--into fresh: table prefix of the new tables (default PREFIX-rebuild)")
	targetStage := fs.String("target-stage", "", "--into fresh: stage of the new tables (default --stage)")
	force := fs.Bool("force", false, "--into fresh: rebuild even when the target tables hold items")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	var opts rebuild.Options
	foldFlags(fs, &opts)
	fs.Usage = func() { fmt.Fprint(env.stderr, rebuildHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "rebuild: unexpected argument %q", fs.Arg(0))
	}
	live, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "rebuild: %v", err)
	}
	if *from == "" {
		return errorf(env, exitUsage, "rebuild: --from-archive: required, e.g. --from-archive %s", defaultArchive(live))
	}
	if _, _, err := archiver.ParseURI(*from); err != nil {
		return errorf(env, exitUsage, "rebuild: --from-archive: %v", err)
	}
	cfg := rebuild.Config{Mode: rebuild.Mode(*into), Live: live, Force: *force, Options: opts}
	switch cfg.Mode {
	case rebuild.Fresh:
		cfg.Target = rebuild.FreshTarget(live, *targetPrefix, *targetStage)
		if err := cfg.Target.Validate(); err != nil {
			return errorf(env, exitUsage, "rebuild: --target-prefix/--target-stage: %v", err)
		}
		if cfg.Target == live {
			return errorf(env, exitUsage, "rebuild: --into fresh: the target %s-%s-* are the live tables; use --into in-place", cfg.Target.Prefix, cfg.Target.Stage)
		}
	case rebuild.InPlace:
		if *targetPrefix != "" || *targetStage != "" || *force {
			return errorf(env, exitUsage, "rebuild: --target-prefix, --target-stage and --force go with --into fresh only")
		}
	default:
		return errorf(env, exitUsage, "rebuild: --into: must be fresh or in-place, got %q", *into)
	}
	if err := checkFoldFlags(opts); err != nil {
		return errorf(env, exitUsage, "rebuild: %v", err)
	}
	c, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "rebuild: %v", err)
	}
	arch, err := g.openArchive(c, live, *from)
	if err != nil {
		return errorf(env, exitUsage, "rebuild: --from-archive: %v", err)
	}
	defer arch.Close()
	cfg.Archive, cfg.DynamoDB = arch, c.DynamoDB
	if err := cfg.Validate(); err != nil {
		return errorf(env, exitUsage, "%v", err)
	}
	flush := func() {}
	if !*quiet {
		cfg.Options.Progress, flush = foldProgress(env.stderr, "rebuild")
	}
	res, err := rebuild.Run(ctx, cfg)
	flush()
	target, st := cfg.Tables(), res.Stats
	sum := rebuildSummary{Archive: arch.URI(), Into: *into, Prefix: target.Prefix, Stage: target.Stage, TablesCreated: append([]string{}, res.TablesCreated...), Stats: st}
	code := exitOK
	switch {
	case errors.Is(err, rebuild.ErrTargetNotEmpty):
		return errorf(env, exitFailed, "%v", err)
	case errors.Is(err, rebuild.ErrIncomplete):
		code = errorf(env, exitFailed, "%v", err)
	case err != nil:
		return errorf(env, exitRuntime, "%v", err)
	}
	if st.Events == 0 {
		fmt.Fprintf(env.stderr, "rebuild: the archive %s holds no event (wrong --from-archive?)\n", arch.URI())
	}
	if st.Invalid > 0 {
		fmt.Fprintf(env.stderr, "rebuild: %d archived events could not be projected, e.g. %s\n", st.Invalid, st.InvalidSamples[0])
	}
	if *asJSON {
		if err := writeJSON(env.stdout, sum); err != nil {
			return errorf(env, exitRuntime, "rebuild: %v", err)
		}
		return code
	}
	if len(sum.TablesCreated) > 0 {
		fmt.Fprintf(env.stdout, "created %d tables %s-%s-*\n", len(sum.TablesCreated), target.Prefix, target.Stage)
	}
	fmt.Fprintf(env.stdout, "rebuilt %s-%s-* %s from %s: %d events (%d projected, %d non-agent, %d invalid), %d subjects: %d changed, %d unchanged, %d failed; %d items born expired (skipped); %d commits in %.1fs (%.0f events/s)\n",
		target.Prefix, target.Stage, *into, sum.Archive, st.Events, st.Projected, st.NonAgent, st.Invalid,
		st.Subjects, st.Changed, st.Unchanged, st.Failed, st.Expired, st.Commits, st.Seconds, st.EventsPerSecond)
	if st.Expired > 0 {
		fmt.Fprintf(env.stderr, "rebuild: %d items were not written: their events were recorded longer ago than the retention; --retention DAYS keeps them\n", st.Expired)
	}
	return code
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/queries"
)

func init() {
	register(command{name: "archive", summary: "inspect and compact the Parquet archive on S3; print its Glue schema and named queries", run: runArchive})
}

const archiveHelp = `Usage:
  streamfold archive ls [flags]              partitions per table with their object counts (from the manifests)
  streamfold archive compact --date D [flags] merge a day's small objects into few large ones
  streamfold archive errors [flags]          poison records kept under the archive's errors/ prefix
  streamfold archive glue                    the Glue table definitions (JSON) Terraform builds from
  streamfold archive queries [NAME]          the named Athena queries, or one query's SQL

The archive is s3://BUCKET/PREFIX (--archive-uri; default
s3://PREFIX-STAGE-archive/archive, where the local stack and Terraform put it).
Data objects live under PREFIX/<table>/event_date=YYYY-MM-DD/; what readers
(Athena, DuckDB, rebuild, verify) see of a partition is exactly what its
manifest PREFIX/_symlink/<table>/event_date=D/manifest lists.

compact writes the merged objects first, then swaps the manifest in one
conditional PUT, and only then deletes the replaced objects (after --grace):
a reader sees every event exactly once at every moment (docs/archiver.md).
Objects younger than --min-age are left alone, because a batch that wrote
them might still be retried; --min-age 0s takes every object (safe once the
archiver is stopped or caught up).

Examples:
  streamfold archive ls
  streamfold archive compact --date 2026-11-20
  streamfold archive compact --date 2026-11-20 --table github_jobs --dry-run --json
  streamfold archive errors --json
  streamfold archive queries sf_vs_ldf_cost_per_execution

Exit status: 0 ok; 1 errors lists poison records; 2 usage; 3 S3 error.

Flags:
`

// partitionInfo is one partition in "archive ls".
type partitionInfo struct {
	Table   string `json:"table"`
	Date    string `json:"date"`
	Objects int    `json:"objects"`
}

func runArchive(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "archive", args, archiveHelp, "ls", "compact", "errors", "glue", "queries")
	if !ok {
		return code
	}
	fs := flag.NewFlagSet("archive "+sub, flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	uri := fs.String("archive-uri", "", "the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	asJSON := fs.Bool("json", false, "print JSON")
	table := fs.String("table", "", "only this table (agent_executions, album_workflow, github_jobs, messages)")
	date := fs.String("date", "", "compact: the event date YYYY-MM-DD (required); ls: only this date")
	minAge := fs.Duration("min-age", archiver.DefaultCompactMinAge, "compact: leave objects younger than this alone (0s: every object)")
	grace := fs.Duration("grace", 0, "compact: keep replaced objects this long for readers of the previous manifest")
	dryRun := fs.Bool("dry-run", false, "compact: plan only, change nothing")
	fs.Usage = func() { fmt.Fprint(env.stderr, archiveHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	switch sub {
	case "glue":
		b, err := archiver.GlueJSON()
		if err != nil {
			return errorf(env, exitRuntime, "archive glue: %v", err)
		}
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	case "queries":
		return archiveQueries(env, fs.Args(), *asJSON)
	}
	tables, err := archiveTables(*table)
	if err != nil {
		return errorf(env, exitUsage, "archive %s: --table: %v", sub, err)
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "archive %s: %v", sub, err)
	}
	c, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "archive %s: %v", sub, err)
	}
	a, err := openArchive(c, n, *uri)
	if err != nil {
		return errorf(env, exitUsage, "archive %s: --archive-uri: %v", sub, err)
	}
	switch sub {
	case "ls":
		return archiveLs(ctx, env, a, tables, *date, *asJSON)
	case "errors":
		return archiveErrors(ctx, env, a, *asJSON)
	}
	if *date == "" {
		return errorf(env, exitUsage, "archive compact: --date: required (YYYY-MM-DD), e.g. --date %s", time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02"))
	}
	if _, err := time.Parse("2006-01-02", *date); err != nil {
		return errorf(env, exitUsage, "archive compact: --date: must be YYYY-MM-DD, got %q", *date)
	}
	if *minAge == 0 {
		*minAge = -1 // CompactOptions: negative takes every object, zero means the default
	}
	opts := archiver.CompactOptions{MinAge: *minAge, Grace: *grace, DryRun: *dryRun}
	var all []archiver.CompactStats
	for _, t := range tables {
		st, err := a.Compact(ctx, t, *date, opts)
		if err != nil {
			if errors.Is(err, archiver.ErrCompactionLocked) {
				return errorf(env, exitFailed, "archive compact %s %s: %v (another compaction runs; retry later)", t, *date, err)
			}
			return errorf(env, exitRuntime, "archive compact %s %s: %v", t, *date, err)
		}
		all = append(all, st)
	}
	if *asJSON {
		if err := writeJSON(env.stdout, all); err != nil {
			return errorf(env, exitRuntime, "archive compact: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tDATE\tOBJECTS BEFORE\tAFTER\tMERGED\tWRITTEN\tROWS\tBYTES IN\tBYTES OUT\tSKIPPED\tDELETED")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Table, s.Date, s.ObjectsBefore, s.ObjectsAfter, s.Inputs, s.Outputs, s.Rows, s.InputBytes, s.OutputBytes, s.Skipped, s.Deleted)
	}
	tw.Flush()
	if *dryRun {
		fmt.Fprintln(env.stdout, "dry run: nothing was changed")
	}
	return exitOK
}

func archiveTables(only string) ([]string, error) {
	var names []string
	for _, t := range archiver.Tables() {
		if only == "" || only == t.Name {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("unknown table %q", only)
	}
	return names, nil
}

func archiveLs(ctx context.Context, env *cliEnv, a *archiver.Archive, tables []string, date string, asJSON bool) int {
	out := []partitionInfo{}
	for _, t := range tables {
		dates, err := a.Partitions(ctx, t)
		if err != nil {
			return errorf(env, exitRuntime, "archive ls: %v", err)
		}
		for _, d := range dates {
			if date != "" && d != date {
				continue
			}
			objs, err := a.Objects(ctx, t, d)
			if err != nil {
				return errorf(env, exitRuntime, "archive ls: %v", err)
			}
			out = append(out, partitionInfo{Table: t, Date: d, Objects: len(objs)})
		}
	}
	if asJSON {
		if err := writeJSON(env.stdout, out); err != nil {
			return errorf(env, exitRuntime, "archive ls: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tEVENT_DATE\tOBJECTS")
	total := 0
	for _, p := range out {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", p.Table, p.Date, p.Objects)
		total += p.Objects
	}
	tw.Flush()
	fmt.Fprintf(env.stdout, "%d partitions, %d objects in %s\n", len(out), total, a.URI())
	return exitOK
}

func archiveErrors(ctx context.Context, env *cliEnv, a *archiver.Archive, asJSON bool) int {
	recs, err := a.Errors(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "archive errors: %v", err)
	}
	if asJSON {
		if recs == nil {
			recs = []archiver.ErrorRecord{}
		}
		if err := writeJSON(env.stdout, recs); err != nil {
			return errorf(env, exitRuntime, "archive errors: %v", err)
		}
	} else {
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEEN_AT\tSEQUENCE\tEVENT_NAME\tREASON")
		for _, r := range recs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.SeenAt.UTC().Format(time.RFC3339), r.SequenceNumber, r.EventName, r.Reason)
		}
		tw.Flush()
		fmt.Fprintf(env.stdout, "%d poison records under %s/errors/\n", len(recs), a.URI())
	}
	if len(recs) > 0 {
		return exitFailed
	}
	return exitOK
}

func archiveQueries(env *cliEnv, args []string, asJSON bool) int {
	all := queries.All()
	if len(args) > 0 {
		q, ok := queries.ByName(args[0])
		if !ok {
			return errorf(env, exitUsage, "archive queries: no query named %q (run `streamfold archive queries` for the list)", args[0])
		}
		if asJSON {
			if err := writeJSON(env.stdout, q); err != nil {
				return errorf(env, exitRuntime, "archive queries: %v", err)
			}
			return exitOK
		}
		fmt.Fprintln(env.stdout, q.SQL)
		return exitOK
	}
	if asJSON {
		if err := writeJSON(env.stdout, all); err != nil {
			return errorf(env, exitRuntime, "archive queries: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	for _, q := range all {
		d := q.Description
		if len(d) > 100 {
			d = d[:97] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\n", q.Name, d)
	}
	tw.Flush()
	return exitOK
}

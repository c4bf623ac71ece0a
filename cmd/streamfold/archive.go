package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/queries"
)

func init() {
	register(command{name: "archive", summary: "inspect, compact and maintain the Iceberg archive; print its table schemas and named queries; migrate an old archive", run: runArchive})
}

const archiveHelp = `Usage:
  streamfold archive ls [flags]               partitions (days) per table with their data-file counts
  streamfold archive compact --date D [flags] merge a day's small data files into few large ones
  streamfold archive maintain [flags]         expire old snapshots and delete orphan files
  streamfold archive register [flags]         register tables missing from the catalog from their metadata in S3
  streamfold archive errors [flags]           poison records kept under the archive's errors/ prefix
  streamfold archive tables                   the Iceberg tables: columns, field ids, types (JSON)
  streamfold archive queries [NAME]           the named Athena queries, or one query's SQL
  streamfold archive migrate [flags]          move an archive of the old symlink-manifest format into Iceberg

The archive is one Apache Iceberg table per source, in s3://BUCKET/PREFIX
(--archive-uri; default s3://PREFIX-STAGE-archive/archive), partitioned by
day(event_time): metadata under PREFIX/<table>/metadata/, data files under
PREFIX/<table>/data/event_date=YYYY-MM-DD/. The tables are registered in an
Iceberg catalog (--catalog): the local stack's SQLite file, or the AWS Glue
Data Catalog, in the namespace (Glue database) --namespace. Readers (Athena,
DuckDB, rebuild, verify) see a table's current snapshot, never a listing.

compact writes the merged files (one row per subject and event id), then
commits one snapshot replacing the inputs with them: a reader sees every
event exactly once at every moment. Files younger than --min-age are left
alone, because a batch that wrote them might still be redelivered;
--min-age 0s takes every file (safe once the archiver is stopped or caught
up). The replaced files stay for readers of older snapshots until maintain
expires those snapshots (default: older than 7 days, keeping the newest 10);
it deletes files no snapshot holds (of failed commits, of expired
snapshots) once older than --orphan-age, but never a file that any metadata
file at the table's location references, and refuses (exit 3, naming the
table, its location and the counts) a table whose catalog entry is not the
whole history at its location.

register restores the catalog from S3: a table the catalog lacks (a deleted
Glue table or database) whose location holds Iceberg metadata is registered
from its newest metadata file (highest version number), with every
snapshot and event of its history; a missing namespace (Glue database) is
created first. The archiver does the same by itself at its next batch;
register is for readers (ls, verify, Athena) and maintenance before then.
A table present in the catalog but behind its location (the catalog points
at an older metadata file, or at one that was deleted) is reported, and with --replace pointed at the
newest (only the catalog entry is replaced, never a file). Without --table
(or with --all) it covers every table.

Examples:
  streamfold archive ls
  streamfold archive compact --date 2026-11-20
  streamfold archive compact --date 2026-11-20 --table github_jobs --dry-run --json
  streamfold archive maintain --dry-run
  streamfold archive register --all --dry-run
  streamfold archive register --table github_jobs --catalog glue --namespace streamfold_prod_archive --archive-uri s3://my-archive/archive
  streamfold archive errors --json
  streamfold archive queries sf_vs_ldf_cost_per_execution
  streamfold archive ls --catalog glue --namespace streamfold_prod_archive --archive-uri s3://my-archive/archive

Exit status: 0 ok; 1 errors lists poison records, compact lost to a
concurrent compaction (retry), or register found a table behind its
location (without --replace); 2 usage; 3 S3 or catalog error, or maintain
refused a table whose history is shorter than its location's.

Flags:
`

// partitionInfo is one partition in "archive ls".
type partitionInfo struct {
	Table   string `json:"table"`
	Date    string `json:"date"`
	Objects int    `json:"objects"`
}

func runArchive(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "archive", args, archiveHelp, "ls", "compact", "maintain", "register", "errors", "tables", "queries", "migrate")
	if !ok {
		return code
	}
	if sub == "migrate" {
		return archiveMigrate(ctx, env, args[1:])
	}
	fs := flag.NewFlagSet("archive "+sub, flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	uri := fs.String("archive-uri", "", "the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	asJSON := fs.Bool("json", false, "print JSON")
	table := fs.String("table", "", "only this table (agent_executions, album_workflow, github_jobs, messages)")
	date := fs.String("date", "", "compact: the event date YYYY-MM-DD (required); ls: only this date")
	minAge := fs.Duration("min-age", archiver.DefaultCompactMinAge, "compact: leave files younger than this alone (0s: every file)")
	snapshotAge := fs.Duration("snapshot-age", archiver.DefaultSnapshotAge, "maintain: expire snapshots older than this (time travel reaches this far back)")
	retain := fs.Int("retain-snapshots", archiver.DefaultRetainSnapshots, "maintain: always keep this many newest snapshots")
	orphanAge := fs.Duration("orphan-age", archiver.DefaultOrphanAge, "maintain: delete files no snapshot holds once older than this (at least 1h)")
	dryRun := fs.Bool("dry-run", false, "compact, maintain, register: plan only, change nothing")
	allTables := fs.Bool("all", false, "register: every table (the default without --table)")
	replace := fs.Bool("replace", false, "register: point a table the catalog has at an older metadata file at the newest one")
	fs.Usage = func() { fmt.Fprint(env.stderr, archiveHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	switch sub {
	case "tables":
		b, err := archiver.DocJSON()
		if err != nil {
			return errorf(env, exitRuntime, "archive tables: %v", err)
		}
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	case "queries":
		return archiveQueries(env, fs.Args(), *asJSON)
	}
	if *allTables && *table != "" {
		return errorf(env, exitUsage, "archive %s: --all and --table: give one", sub)
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
	a, err := g.openArchive(c, n, *uri)
	if err != nil {
		return errorf(env, exitUsage, "archive %s: %v", sub, err)
	}
	defer a.Close()
	switch sub {
	case "ls":
		return archiveLs(ctx, env, a, tables, *date, *asJSON)
	case "errors":
		return archiveErrors(ctx, env, a, *asJSON)
	case "maintain":
		return archiveMaintain(ctx, env, a, tables, archiver.MaintainOptions{SnapshotAge: *snapshotAge, RetainSnapshots: *retain, OrphanAge: *orphanAge, DryRun: *dryRun}, *asJSON)
	case "register":
		return archiveRegister(ctx, env, a, tables, archiver.RegisterOptions{Replace: *replace, DryRun: *dryRun}, *asJSON)
	}
	if *date == "" {
		return errorf(env, exitUsage, "archive compact: --date: required (YYYY-MM-DD), e.g. --date %s", env.clock().AddDate(0, 0, -1).Format("2006-01-02"))
	}
	if _, err := time.Parse("2006-01-02", *date); err != nil {
		return errorf(env, exitUsage, "archive compact: --date: must be YYYY-MM-DD, got %q", *date)
	}
	if *minAge == 0 {
		*minAge = -1 // CompactOptions: negative takes every object, zero means the default
	}
	opts := archiver.CompactOptions{MinAge: *minAge, DryRun: *dryRun}
	var all []archiver.CompactStats
	for _, t := range tables {
		st, err := a.Compact(ctx, t, *date, opts)
		if err != nil {
			if errors.Is(err, archiver.ErrCompactionConflict) {
				return errorf(env, exitFailed, "archive compact %s %s: %v (another compaction committed first; run again)", t, *date, err)
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
	fmt.Fprintln(tw, "TABLE\tDATE\tFILES BEFORE\tAFTER\tMERGED\tWRITTEN\tROWS\tDUPLICATES\tBYTES IN\tBYTES OUT\tSKIPPED")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Table, s.Date, s.ObjectsBefore, s.ObjectsAfter, s.Inputs, s.Outputs, s.Rows, s.Duplicates, s.InputBytes, s.OutputBytes, s.Skipped)
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
		parts, err := a.PartitionObjects(ctx, t)
		if err != nil {
			return errorf(env, exitRuntime, "archive ls: %v", err)
		}
		for _, d := range slices.Sorted(maps.Keys(parts)) {
			if date != "" && d != date {
				continue
			}
			out = append(out, partitionInfo{Table: t, Date: d, Objects: len(parts[d])})
		}
	}
	if asJSON {
		if err := writeJSON(env.stdout, out); err != nil {
			return errorf(env, exitRuntime, "archive ls: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tEVENT_DATE\tFILES")
	total := 0
	for _, p := range out {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", p.Table, p.Date, p.Objects)
		total += p.Objects
	}
	tw.Flush()
	fmt.Fprintf(env.stdout, "%d partitions (days), %d data files in the current snapshots of %s\n", len(out), total, a.URI())
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

// archiveMaintain runs Maintain on each table.
func archiveMaintain(ctx context.Context, env *cliEnv, a *archiver.Archive, tables []string, opts archiver.MaintainOptions, asJSON bool) int {
	if err := opts.Validate(); err != nil {
		return errorf(env, exitUsage, "archive maintain: %v", err)
	}
	var all []archiver.MaintainStats
	for _, t := range tables {
		st, err := a.Maintain(ctx, t, opts)
		if err != nil {
			return errorf(env, exitRuntime, "archive maintain %s: %v", t, err)
		}
		all = append(all, st)
	}
	if asJSON {
		if err := writeJSON(env.stdout, all); err != nil {
			return errorf(env, exitRuntime, "archive maintain: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tSNAPSHOTS\tEXPIRED\tORPHAN FILES\tORPHAN BYTES")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", s.Table, s.SnapshotsBefore, s.SnapshotsExpired, s.OrphansDeleted, s.OrphanBytes)
	}
	tw.Flush()
	if opts.DryRun {
		fmt.Fprintln(env.stdout, "dry run: nothing was changed (orphan files are those that would be deleted)")
	}
	return exitOK
}

// archiveRegister runs Register on each table.
func archiveRegister(ctx context.Context, env *cliEnv, a *archiver.Archive, tables []string, opts archiver.RegisterOptions, asJSON bool) int {
	all := []archiver.Registration{}
	behind := 0
	for _, t := range tables {
		r, err := a.Register(ctx, t, opts)
		if err != nil {
			return errorf(env, exitRuntime, "archive register %s: %v", t, err)
		}
		if r.Action == "behind" {
			behind++
		}
		all = append(all, r)
	}
	if asJSON {
		if err := writeJSON(env.stdout, all); err != nil {
			return errorf(env, exitRuntime, "archive register: %v", err)
		}
	} else {
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tACTION\tVERSION\tSNAPSHOTS\tMETADATA FILES\tMETADATA")
		for _, r := range all {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", r.Table, r.Action, r.Version, r.Snapshots, r.MetadataFiles, r.Metadata)
		}
		tw.Flush()
		for _, r := range all {
			if len(r.Tied) > 0 {
				fmt.Fprintf(env.stdout, "%s: %d other metadata files of version %d were not chosen: %v\n", r.Table, len(r.Tied), r.Version, r.Tied)
			}
			if r.Action == "behind" {
				fmt.Fprintf(env.stdout, "%s: the catalog points at %s, older than the newest at %s: --replace points it at the newest\n", r.Table, r.Previous, r.Location)
			}
		}
		if opts.DryRun {
			fmt.Fprintln(env.stdout, "dry run: nothing was changed (actions are what would be done)")
		}
	}
	if behind > 0 {
		return exitFailed
	}
	return exitOK
}

package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/streamfold/streamfold/archiver"
)

const archiveMigrateHelp = `Usage:
  streamfold archive migrate [--archive-uri s3://BUCKET/PREFIX] [--catalog URI] [--namespace NS]
                             [--table T] [--dry-run] [--json] [--delete-old]

Migrates an archive written before the archive became Iceberg tables (data
objects under PREFIX/<table>/event_date=D/, made visible by the symlink
manifests PREFIX/_symlink/<table>/event_date=D/manifest) into the Iceberg
tables of the same bucket and prefix. For each table and old partition it
reads the manifest and the objects it lists (never unlisted ones: those
are invisible orphans), writes their rows again as Iceberg data files
PREFIX/<table>/data/event_date=D/migrated-<id>-<n>.parquet (sorted by
event time, one row per subject and event id, none the table has already)
and commits them in one snapshot per partition. <id> is a hash of the
manifest: a partition already migrated is skipped, so the command can be
run again after a failure (it resumes) or after it finished (it changes
nothing).

Stop the old archiver first (or deploy the new one, pointed at the same
prefix, in its place): a manifest that changes after its partition was
migrated is refused, with an error naming it. Maintenance ("archive
maintain", the scheduled task) never deletes the old objects: its orphan
cleanup covers only the tables' data/ and metadata/ directories.

The old objects and manifests are kept unless --delete-old is given; then
each partition's listed objects and its manifest are deleted once its
migration is committed. To delete them later, run migrate again with
--delete-old (the partitions are skipped, their old objects deleted).
Unlisted old objects, the old compaction state (PREFIX/_compaction/) and
the markers of migrated partitions (PREFIX/_migrated/) stay; remove them by
hand when the migration is done, e.g.
  aws s3 rm --recursive s3://BUCKET/PREFIX/_compaction/
  aws s3 rm --recursive s3://BUCKET/PREFIX/TABLE/event_date=2026-01-05/

Progress is printed on standard error, one line per partition; --json
prints a summary object on standard output.

Examples:
  streamfold archive migrate --dry-run
  streamfold archive migrate --archive-uri s3://acme-prod-archive/archive --catalog glue --namespace acme_prod_archive
  streamfold archive migrate --table github_jobs --delete-old --json

Exit status: 0 ok; 1 a partition failed or was refused (the message names
it; run again once fixed); 2 usage.

Flags:
`

// migrateSummary is the --json output of archive migrate.
type migrateSummary struct {
	Archive   string `json:"archive"`
	Catalog   string `json:"catalog"`
	Namespace string `json:"namespace"`
	archiver.MigrateStats
	RefusedPartitions []string `json:"refused_partitions"`
	Error             string   `json:"error,omitempty"`
}

func archiveMigrate(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("archive migrate", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	uri := fs.String("archive-uri", "", "the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	table := fs.String("table", "", "only this table (agent_executions, album_workflow, github_jobs, messages)")
	dryRun := fs.Bool("dry-run", false, "say what would be migrated, change nothing")
	asJSON := fs.Bool("json", false, "print a JSON summary on standard output")
	deleteOld := fs.Bool("delete-old", false, "delete each partition's old objects and manifest once its migration is committed")
	fs.Usage = func() { fmt.Fprint(env.stderr, archiveMigrateHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "archive migrate: unexpected argument %q", fs.Arg(0))
	}
	if *dryRun && *deleteOld {
		return errorf(env, exitUsage, "archive migrate: --dry-run and --delete-old exclude each other")
	}
	opts := archiver.MigrateOptions{DryRun: *dryRun, DeleteOld: *deleteOld}
	if *table != "" {
		tables, err := archiveTables(*table)
		if err != nil {
			return errorf(env, exitUsage, "archive migrate: --table: %v", err)
		}
		opts.Tables = tables
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "archive migrate: %v", err)
	}
	c, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitFailed, "archive migrate: %v", err)
	}
	a, err := g.openArchive(c, n, *uri)
	if err != nil {
		return errorf(env, exitUsage, "archive migrate: %v", err)
	}
	defer a.Close()

	sum := migrateSummary{Archive: a.URI(), RefusedPartitions: []string{}}
	sum.Catalog, sum.Namespace = a.Catalog()
	verb := "migrate"
	if *dryRun {
		verb = "dry run: migrate"
	}
	fmt.Fprintf(env.stderr, "%s %s into the Iceberg tables of catalog %s, namespace %s\n", verb, a.URI(), sum.Catalog, sum.Namespace)
	opts.Progress = func(p archiver.MigrateProgress) {
		where := p.Table + " event_date=" + p.Date
		switch p.Status {
		case archiver.MigrateMigrated:
			fmt.Fprintf(env.stderr, "%s: migrated %d objects (%d bytes) -> %d files (%d bytes), %d records, %d duplicates dropped", where, p.Objects, p.InputBytes, p.Files, p.Bytes, p.Records, p.Duplicates)
		case archiver.MigrateWouldMigrate:
			fmt.Fprintf(env.stderr, "%s: would migrate %d objects (%d bytes) -> %d files", where, p.Objects, p.InputBytes, p.Files)
		case archiver.MigrateSkipped:
			fmt.Fprintf(env.stderr, "%s: migrated already (id %s), skipped", where, p.ID)
		case archiver.MigrateRefused:
			sum.RefusedPartitions = append(sum.RefusedPartitions, p.Table+"/event_date="+p.Date)
			fmt.Fprintf(env.stderr, "%s: REFUSED: %v", where, p.Err)
		}
		if p.Deleted > 0 {
			fmt.Fprintf(env.stderr, "; deleted %d old objects and manifest", p.Deleted-1)
		}
		fmt.Fprintln(env.stderr)
	}
	st, err := a.Migrate(ctx, opts)
	sum.MigrateStats = st
	if err != nil {
		sum.Error = err.Error()
	}
	if *asJSON {
		if werr := writeJSON(env.stdout, sum); werr != nil && err == nil {
			err = werr
		}
	}
	fmt.Fprintf(env.stderr, "%d tables, %d partitions: %d migrated, %d skipped, %d refused; %d objects read, %d records and %d files (%d bytes) written, %d duplicates dropped, %d old objects and manifests deleted\n",
		st.Tables, st.Partitions, st.Migrated, st.Skipped, st.Refused, st.Objects, st.Records, st.Files, st.Bytes, st.Duplicates, st.Deleted)
	if err != nil {
		return errorf(env, exitFailed, "archive migrate: %v", err)
	}
	if *dryRun {
		fmt.Fprintln(env.stderr, "dry run: nothing was changed")
	}
	return exitOK
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/toolkit/archivetools"
)

// archiveCmd is "streamfold archive" and its subcommands (toolkit/archivetools).
type archiveCmd struct {
	Ls       archiveLsCmd       `cmd:"" help:"Partitions (days) per table with their data-file counts."`
	Compact  archiveCompactCmd  `cmd:"" help:"Merge a day's small data files into few large ones."`
	Maintain archiveMaintainCmd `cmd:"" help:"Expire old snapshots and delete orphan files."`
	Register archiveRegisterCmd `cmd:"" help:"Register tables missing from the catalog from their metadata in S3."`
	Errors   archiveErrorsCmd   `cmd:"" help:"Poison records kept under the archive's errors/ prefix."`
	Tables   archiveTablesCmd   `cmd:"" help:"The Iceberg tables: columns, field ids, types (JSON)."`
	Queries  archiveQueriesCmd  `cmd:"" help:"The named Athena queries, or one query's SQL."`
	Migrate  archiveMigrateCmd  `cmd:"" help:"Move an archive of the old symlink-manifest format into Iceberg."`
}

func (archiveCmd) Help() string { return longHelp("archive") }

// archiveFlags are the flags of the subcommands that open the archive;
// archiveTableFlags of those that work table by table, archiveChangeFlags
// of those that change it.
type archiveFlags struct {
	globals
	ArchiveURI string `name:"archive-uri" placeholder:"URI" help:"The archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)."`
}

type archiveTableFlags struct {
	archiveFlags
	Table string `help:"Only this table (agent_executions, album_workflow, github_jobs, messages)."`
}

type archiveChangeFlags struct {
	archiveTableFlags
	DryRun bool `name:"dry-run" help:"Plan only, change nothing."`
}

func (f *archiveFlags) target(table string) archivetools.Target {
	return archivetools.Target{Settings: f.settings(), ArchiveURI: f.ArchiveURI, Table: table}
}

type archiveLsCmd struct {
	archiveTableFlags
	Date string `help:"Only this event date, YYYY-MM-DD."`
}

func (c *archiveLsCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	res, err := archivetools.Ls(ctx, c.target(c.Table), c.Date)
	return archiveDone(env, out, res, err)
}

type archiveCompactCmd struct {
	archiveChangeFlags
	Date   string        `required:"" help:"The event date to compact, YYYY-MM-DD (e.g. yesterday's)."`
	MinAge time.Duration `name:"min-age" default:"24h" help:"Leave files younger than this alone, as a batch that wrote them might still be redelivered (0s: every file)."`
}

func (c *archiveCompactCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	res, err := archivetools.Compact(ctx, archivetools.CompactOptions{Target: c.target(c.Table), Date: c.Date, MinAge: c.MinAge, DryRun: c.DryRun})
	return archiveDone(env, out, res, err)
}

type archiveMaintainCmd struct {
	archiveChangeFlags
	SnapshotAge time.Duration `name:"snapshot-age" default:"168h" help:"Expire snapshots older than this (time travel reaches this far back)."`
	Retain      int           `name:"retain-snapshots" default:"10" help:"Always keep this many newest snapshots."`
	OrphanAge   time.Duration `name:"orphan-age" default:"72h" help:"Delete files no snapshot holds once older than this (at least 1h)."`
}

func (c *archiveMaintainCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	res, err := archivetools.Maintain(ctx, archivetools.MaintainOptions{Target: c.target(c.Table), MaintainOptions: archiver.MaintainOptions{
		SnapshotAge: c.SnapshotAge, RetainSnapshots: c.Retain, OrphanAge: c.OrphanAge, DryRun: c.DryRun}})
	return archiveDone(env, out, res, err)
}

type archiveRegisterCmd struct {
	archiveChangeFlags
	All     bool `help:"Every table (the default without --table)."`
	Replace bool `help:"Point a table the catalog has at an older metadata file at the newest one."`
}

func (c *archiveRegisterCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	res, err := archivetools.Register(ctx, archivetools.RegisterOptions{Target: c.target(c.Table), All: c.All, RegisterOptions: archiver.RegisterOptions{Replace: c.Replace, DryRun: c.DryRun}})
	return archiveDone(env, out, res, err)
}

type archiveErrorsCmd struct{ archiveFlags }

func (c *archiveErrorsCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	res, err := archivetools.Errors(ctx, c.target(""))
	return archiveDone(env, out, res, err)
}

type archiveTablesCmd struct{}

func (archiveTablesCmd) Run(env *cliEnv) error {
	b, err := archiver.DocJSON()
	if err == nil {
		_, err = fmt.Fprintln(env.stdout, string(b))
	}
	return err
}

type archiveQueriesCmd struct {
	Name string `arg:"" optional:"" help:"A query's name: print its SQL (--json: the query)."`
}

func (c *archiveQueriesCmd) Run(env *cliEnv, out *output) error {
	res, err := archivetools.Queries(c.Name)
	return archiveDone(env, out, res, err)
}

type archiveMigrateCmd struct {
	archiveChangeFlags
	DeleteOld bool `name:"delete-old" help:"Delete each partition's old objects and manifest once its migration is committed."`
}

func (archiveMigrateCmd) Help() string { return longHelp("archive-migrate") }

func (c *archiveMigrateCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	res, err := archivetools.Migrate(ctx, archivetools.MigrateOptions{Target: c.target(c.Table), DryRun: c.DryRun, DeleteOld: c.DeleteOld, Progress: env.progress(out)})
	return archiveDone(env, out, res, err)
}

// archiveDone renders an archive subcommand's result and maps its error to
// an exit code: 2 bad options, 3 a service, 1 a concurrent compaction or
// what the result found (poison records, tables behind, a failed migration).
func archiveDone(env *cliEnv, out *output, res interface{ WriteText(io.Writer) error }, err error) error {
	code := exitUsageOr(err)
	if err == nil {
		if err = env.render(out, res, res.WriteText); err != nil {
			return err
		}
		if f, ok := res.(interface{ Found() error }); ok {
			code, err = exitFailed, f.Found()
		}
	} else if errors.Is(err, archiver.ErrCompactionConflict) {
		code = exitFailed
	}
	if err != nil {
		return fail(code, "%w", err)
	}
	return nil
}

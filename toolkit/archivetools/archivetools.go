// Package archivetools provides the operator's workflows on the Iceberg
// archive ("streamfold archive"): list its partitions and poison records,
// compact a day, maintain (expire snapshots, delete orphans), register
// tables in the catalog from their metadata, migrate an archive of the old
// symlink-manifest format, and list the named Athena queries.
//
// Every workflow takes a Target (the connection settings, the archive's URI
// and optionally one table), validates its options before connecting, opens
// the archive, works table by table in archiver.Tables order and closes it.
// Compact, maintain, register and migrate take DryRun: then they say what
// they would do and change nothing. The results render as the CLI's text
// (WriteText) or marshal as its JSON.
package archivetools

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// Target is the archive a workflow works on.
type Target struct {
	// Settings are the connection settings (naming, clients, catalog).
	Settings conn.Settings
	// ArchiveURI is s3://BUCKET/PREFIX; empty is conn.DefaultArchive.
	ArchiveURI string
	// Table, when set, limits the workflow to that table.
	Table string
}

// Tables is only when set (an archiver table's name), else every table.
func Tables(only string) ([]string, error) {
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

// tables validates t.Table for workflow.
func (t Target) tables(workflow string) ([]string, error) {
	names, err := Tables(t.Table)
	if err != nil {
		return nil, toolkit.Invalid(workflow, "Table", err, "")
	}
	return names, nil
}

// Open opens the target's archive for workflow (its errors start with
// it); the caller closes it. Bad settings or a bad URI are invalid options
// (toolkit.ErrInvalidOptions); a service that cannot be reached is not.
func (t Target) Open(ctx context.Context, workflow string) (*archiver.Archive, error) {
	n, err := t.Settings.Naming()
	if err != nil {
		return nil, toolkit.Invalid(workflow, "Settings", err, "")
	}
	c, err := t.Settings.Clients(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", workflow, err)
	}
	a, err := t.Settings.OpenArchive(c, n, t.ArchiveURI)
	if err != nil {
		return nil, toolkit.Invalid(workflow, "ArchiveURI", err, "")
	}
	return a, nil
}

// each opens the target's archive and calls f for each of its tables; its
// errors start with workflow.
func (t Target) each(ctx context.Context, workflow string, f func(a *archiver.Archive, table string) error) (uri string, err error) {
	tables, err := t.tables(workflow)
	if err != nil {
		return "", err
	}
	a, err := t.Open(ctx, workflow)
	if err != nil {
		return "", err
	}
	defer a.Close()
	for _, name := range tables {
		if err := f(a, name); err != nil {
			return a.URI(), fmt.Errorf("%s: %w", workflow, err)
		}
	}
	return a.URI(), nil
}

// table prints a header and rows, tab-separated, aligned.
func table(w io.Writer, header string, rows func(w io.Writer)) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	rows(tw)
	return tw.Flush()
}

// dryRunNote ends the text of a dry run.
func dryRunNote(w io.Writer, dryRun bool, what string) {
	if dryRun {
		fmt.Fprintln(w, "dry run: nothing was changed"+what)
	}
}

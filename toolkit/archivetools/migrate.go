package archivetools

import (
	"context"
	"fmt"
	"io"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/toolkit"
)

// MigrateOptions are one migration's settings.
type MigrateOptions struct {
	Target
	// DryRun says what would be migrated and changes nothing.
	DryRun bool
	// DeleteOld deletes each partition's old objects and manifest once its
	// migration is committed; it excludes DryRun.
	DeleteOld bool
	// Progress, when set, gets a line per partition.
	Progress io.Writer
}

// Validate checks the options; its errors name the field at fault.
func (o MigrateOptions) Validate() error {
	if o.DryRun && o.DeleteOld {
		return toolkit.Invalid("archive migrate", "DeleteOld", nil, "excludes DryRun")
	}
	_, err := o.tables("archive migrate")
	return err
}

// Migrated is the summary of a migration (the CLI's JSON).
type Migrated struct {
	Archive   string `json:"archive"`
	Catalog   string `json:"catalog"`
	Namespace string `json:"namespace"`
	archiver.MigrateStats
	RefusedPartitions []string `json:"refused_partitions"`
	Error             string   `json:"error,omitempty"`

	err error
}

// Found is the error of a migration that failed or refused a partition.
func (m *Migrated) Found() error { return m.err }

// WriteText prints the summary of the migration.
func (m *Migrated) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%d tables, %d partitions: %d migrated, %d skipped, %d refused; %d objects read, %d records and %d files (%d bytes) written, %d duplicates dropped, %d old objects and manifests deleted\n",
		m.Tables, m.Partitions, m.Migrated, m.Skipped, m.Refused, m.Objects, m.Records, m.Files, m.Bytes, m.Duplicates, m.Deleted)
	if err == nil && m.err == nil && m.DryRun {
		_, err = fmt.Fprintln(w, "dry run: nothing was changed")
	}
	return err
}

// Migrate moves the target's archive of the old symlink-manifest format into
// its Iceberg tables (archiver.Archive.Migrate). Its error is about the
// options or opening the archive; a partition that failed or was refused is
// the result's Error and Found (run again once fixed).
func Migrate(ctx context.Context, o MigrateOptions) (*Migrated, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	opts := archiver.MigrateOptions{DryRun: o.DryRun, DeleteOld: o.DeleteOld}
	if o.Table != "" {
		opts.Tables, _ = Tables(o.Table)
	}
	a, err := o.Open(ctx, "archive migrate")
	if err != nil {
		return nil, err
	}
	defer a.Close()
	w := o.Progress
	if w == nil {
		w = io.Discard
	}
	sum := &Migrated{Archive: a.URI(), RefusedPartitions: []string{}}
	sum.Catalog, sum.Namespace = a.Catalog()
	verb := "migrate"
	if o.DryRun {
		verb = "dry run: migrate"
	}
	fmt.Fprintf(w, "%s %s into the Iceberg tables of catalog %s, namespace %s\n", verb, a.URI(), sum.Catalog, sum.Namespace)
	opts.Progress = func(p archiver.MigrateProgress) {
		if p.Status == archiver.MigrateRefused {
			sum.RefusedPartitions = append(sum.RefusedPartitions, p.Table+"/event_date="+p.Date)
		}
		fmt.Fprintln(w, ProgressLine(p))
	}
	sum.MigrateStats, err = a.Migrate(ctx, opts)
	if err != nil {
		sum.Error = err.Error()
		sum.err = fmt.Errorf("archive migrate: %w", err)
	}
	return sum, nil
}

// ProgressLine is the progress line of one partition's migration.
func ProgressLine(p archiver.MigrateProgress) string {
	where := p.Table + " event_date=" + p.Date
	var s string
	switch p.Status {
	case archiver.MigrateMigrated:
		s = fmt.Sprintf("%s: migrated %d objects (%d bytes) -> %d files (%d bytes), %d records, %d duplicates dropped", where, p.Objects, p.InputBytes, p.Files, p.Bytes, p.Records, p.Duplicates)
	case archiver.MigrateWouldMigrate:
		s = fmt.Sprintf("%s: would migrate %d objects (%d bytes) -> %d files", where, p.Objects, p.InputBytes, p.Files)
	case archiver.MigrateSkipped:
		s = fmt.Sprintf("%s: migrated already (id %s), skipped", where, p.ID)
	case archiver.MigrateRefused:
		s = fmt.Sprintf("%s: REFUSED: %v", where, p.Err)
	}
	if p.Deleted > 0 {
		s += fmt.Sprintf("; deleted %d old objects and manifest", p.Deleted-1)
	}
	return s
}

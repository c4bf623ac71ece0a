package repair

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// VerifyOptions are one verify's settings.
type VerifyOptions struct {
	// Archive is the archive, s3://BUCKET/PREFIX; empty is the tables'
	// default (conn.DefaultArchive).
	Archive string
	// Kinds restricts the comparison to these row kinds (rebuild.Kind*
	// names); empty is every kind.
	Kinds []string
	// Fold tunes the fold of the archive (DefaultFold).
	Fold Fold
}

// Validate checks the options; its errors name the field at fault.
func (o *VerifyOptions) Validate() error {
	if err := o.Fold.validate("verify"); err != nil {
		return err
	}
	if err := o.rebuildOptions().Validate(); err != nil {
		return toolkit.Invalid("verify", "Kinds", err, "")
	}
	if o.Archive != "" {
		if _, _, err := archiver.ParseURI(o.Archive); err != nil {
			return toolkit.Invalid("verify", "Archive", err, "")
		}
	}
	return nil
}

func (o *VerifyOptions) rebuildOptions() rebuild.VerifyOptions {
	opts, _ := o.Fold.options("")
	v := rebuild.VerifyOptions{Options: opts, Kinds: o.Kinds}
	v.SetDefaults()
	return v
}

// VerifyResult is verify's report on the tables of Prefix and Stage.
type VerifyResult struct {
	Archive string `json:"archive"`
	Prefix  string `json:"prefix"`
	Stage   string `json:"stage"`
	OK      bool   `json:"ok"`
	rebuild.Report
}

// Verify recomputes the counter rows from the archive and compares them
// with the live tables of s (archiver/rebuild.Verify): an operator's batch
// job that reads the whole archive into memory and scans the tables.
func Verify(ctx context.Context, c *awsclient.Clients, s conn.Settings, o VerifyOptions) (*VerifyResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	n, err := s.Naming()
	if err != nil {
		return nil, toolkit.Invalid("verify", "Settings", err, "")
	}
	arch, err := s.OpenArchive(c, n, o.Archive)
	if err != nil {
		return nil, toolkit.Invalid("verify", "Archive", err, "")
	}
	defer arch.Close()
	live, err := rebuild.NewDynamoLive(c.DynamoDB, n)
	if err != nil {
		return nil, toolkit.Invalid("verify", "Settings", err, "")
	}
	vopts := o.rebuildOptions()
	var done func()
	vopts.Options, done = o.Fold.options("verify")
	vopts.SetDefaults()
	rep, err := rebuild.Verify(ctx, arch, live, vopts)
	done()
	if err != nil {
		return nil, err
	}
	return &VerifyResult{Archive: arch.URI(), Prefix: n.Prefix, Stage: n.Stage, OK: rep.OK(), Report: rep}, nil
}

// Warnings are the notes on the fold: an archive without events, events
// that could not be projected.
func (r VerifyResult) Warnings() []string { return foldWarnings("verify", r.Archive, r.Report.Archive) }

// WriteText prints the report as text: the rows compared, then "no
// difference" or every difference.
func (r VerifyResult) WriteText(w io.Writer) error {
	var rows []string
	for _, c := range r.Rows {
		rows = append(rows, fmt.Sprintf("%s %d/%d", c.Kind, c.Archive, c.Projection))
	}
	fmt.Fprintf(w, "verified %s-%s-* against %s (%d archived events); rows archive/projection: %s\n",
		r.Prefix, r.Stage, r.Archive, r.Report.Archive.Events, strings.Join(rows, ", "))
	if r.ExpiredLive > 0 || r.Report.Archive.Expired > 0 {
		fmt.Fprintf(w, "left out as expired (past their retention): %d live rows, %d items of the archive's fold\n", r.ExpiredLive, r.Report.Archive.Expired)
	}
	if r.OK {
		_, err := fmt.Fprintln(w, "no difference")
		return err
	}
	fmt.Fprintf(w, "%d differences:\n", len(r.Differences))
	for _, d := range r.Differences {
		if _, err := fmt.Fprintf(w, "  %s\n", d); err != nil {
			return err
		}
	}
	return nil
}

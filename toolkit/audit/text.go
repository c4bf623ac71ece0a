package audit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
)

// HealCommand is the command that heals exactly rep's window of n's tables.
func HealCommand(n schema.Naming, rep reconcile.Report) string {
	cmd := "streamfold reconcile"
	if n.Prefix != "streamfold" {
		cmd += " --prefix " + n.Prefix
	}
	if n.Stage != "dev" {
		cmd += " --stage " + n.Stage
	}
	return cmd + " --from " + rep.From.Format(time.RFC3339Nano) + " --to " + rep.To.Format(time.RFC3339Nano) + " --heal"
}

// WriteText prints rep for people: a line on the window, the rows with
// their ids, and what to do (HealCommand when there are gaps to heal).
func WriteText(w io.Writer, rep reconcile.Report, n schema.Naming) error {
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
		fmt.Fprintf(&b, "%d gaps; to heal them:\n  %s\n", gaps, HealCommand(n, rep))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package capacity

import (
	"fmt"
	"slices"
	"strings"
)

// WriteText writes s for people in two lines or fewer, each starting with
// indent: units per what (record, event) with their price and the totals,
// then the tables from the most to the least units. per is the rate per
// what (s.PerEvent, s.PerRecord); nil is zero.
func (s Snapshot) WriteText(b *strings.Builder, indent, what string, per *Rate) {
	if per == nil {
		per = &Rate{}
	}
	fmt.Fprintf(b, "%scapacity: %.3g write + %.3g read units per %s = $%.3g per million %ss on demand (%g write + %g read units in all",
		indent, per.Write, per.Read, what, per.DollarsPerMillion, what, s.Write, s.Read)
	var failed int64
	for _, o := range s.ByOperation {
		failed += o.Failed
	}
	if failed > 0 {
		fmt.Fprintf(b, "; %d failed calls reported none", failed)
	}
	b.WriteString(")\n")
	if len(s.ByTable) == 0 {
		return
	}
	names := make([]string, 0, len(s.ByTable))
	for name := range s.ByTable {
		names = append(names, name)
	}
	slices.SortFunc(names, func(x, y string) int {
		ux, uy := s.ByTable[x], s.ByTable[y]
		if d := (uy.Write + uy.Read) - (ux.Write + ux.Read); d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(x, y)
	})
	parts := make([]string, 0, len(names))
	for _, name := range names {
		u := s.ByTable[name]
		parts = append(parts, fmt.Sprintf("%s %gW %gR", name, u.Write, u.Read))
	}
	fmt.Fprintf(b, "%sby table: %s\n", indent, strings.Join(parts, ", "))
}

package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

// fakeArchive serves fixed references per table and date.
type fakeArchive struct {
	refs  map[part][]EventRef
	reads int
}

func (f *fakeArchive) EventRefs(_ context.Context, table string, dates []string, fn func(EventRef) error) error {
	f.reads++
	for _, d := range dates {
		for _, r := range f.refs[part{table, d}] {
			r.Date = d
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeArchive) Heal(context.Context, []schema.Event) (HealStats, error) {
	return HealStats{}, nil
}

// TestComparePart: one partition of 95 events of the window against an
// archive that lacks 5, holds 4 with other content and 4 recorded in the
// window that the table no longer has (plus 2 recorded before it): the
// same gaps whatever the bucket size, and the comparison never holds much
// more than BucketEvents entries.
func TestComparePart(t *testing.T) {
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p := part{"github_jobs", "2026-03-01"}
	var table []entry
	arch := &fakeArchive{refs: map[part][]EventRef{}}
	for i := range 95 {
		e := entry{subject: fmt.Sprintf("job/%d", i%17), id: fmt.Sprintf("e%03d", i), hash: fmt.Sprintf("sha256:%d", i)}
		table = append(table, e)
		ref := EventRef{ID: e.id, Subject: e.subject, Hash: e.hash, RecordedAt: from.Add(time.Minute)}
		switch {
		case i%19 == 0: // 0, 19, 38, 57, 76: not archived
			continue
		case i%31 == 1: // 1, 32, 63, 94: other content
			ref.Hash = "sha256:other"
		}
		arch.refs[p] = append(arch.refs[p], ref)
		if i%40 == 2 { // archived twice (two deliveries): still one event
			arch.refs[p] = append(arch.refs[p], ref)
		}
	}
	for i := range 6 {
		at := from.Add(time.Hour)
		if i >= 4 {
			at = from.Add(-time.Hour) // recorded before the window
		}
		arch.refs[p] = append(arch.refs[p], EventRef{ID: fmt.Sprintf("gone%d", i), Subject: "job/gone", Hash: "sha256:x", RecordedAt: at})
	}
	var want string
	for _, bucket := range []int{1000, 10, 3} {
		t.Run(fmt.Sprintf("buckets of %d", bucket), func(t *testing.T) {
			sp, err := newSpill(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer sp.remove()
			for _, e := range table {
				if err := sp.add(p, e); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sp.finish(); err != nil {
				t.Fatal(err)
			}
			r := &run{cfg: Config{Archive: arch}, opts: Options{From: from, To: from.Add(24 * time.Hour), BucketEvents: bucket},
				rows: map[rowKey]*opsrec.DayGaps{}, domains: tableDomains()}
			refs, err := r.spillRefs(context.Background(), sp, p.table, []string{p.date})
			if err != nil {
				t.Fatal(err)
			}
			path, n := sp.path(p)
			if err := r.comparePart(sp, p, path, n, refs[p.date]); err != nil {
				t.Fatal(err)
			}
			d := r.rows[rowKey{"github", "2026-03-01"}]
			if d == nil || d.MissingArchive != 5 || d.Conflicts != 4 || d.ArchiveOnly != 4 {
				t.Fatalf("row %+v: want 5 missing, 4 conflicts, 4 archive-only", d)
			}
			var ids []string
			for _, g := range r.ids {
				ids = append(ids, g.Kind+":"+g.Subject+"/"+g.ID)
			}
			got := strings.Join(sortedCopy(ids), " ")
			if want == "" {
				want = got
			} else if got != want {
				t.Fatalf("ids %s\nwant (one bucket) %s", got, want)
			}
			if max := r.maxBucket.Load(); max > int64(2*bucket) && bucket < 95 {
				t.Fatalf("held %d entries at once with buckets of %d", max, bucket)
			}
			if arch.reads == 0 {
				t.Fatal("the archive was not read")
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func TestScanInputBounds(t *testing.T) {
	from := time.Date(2026, 3, 1, 10, 0, 0, 500_000_000, time.UTC)
	to := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	in := scanInput("t", 2, 4, from, to)
	lo := in.ExpressionAttributeValues[":lo"]
	hi := in.ExpressionAttributeValues[":hi"]
	if fmt.Sprint(lo) != "&{2026-03-01T10:00:00 {}}" || fmt.Sprint(hi) != "&{2026-03-01T11:00:01 {}}" || *in.Segment != 2 || *in.TotalSegments != 4 || *in.ConsistentRead {
		t.Fatalf("scan input %v %v %+v", lo, hi, in)
	}
	// Every recordedat of the window sorts inside the text bounds.
	for _, rec := range []string{"2026-03-01T10:00:00.5Z", "2026-03-01T10:00:00Z", "2026-03-01T10:59:59.999Z", "2026-03-01T11:00:00Z"} {
		if !(rec >= "2026-03-01T10:00:00" && rec < "2026-03-01T11:00:01") {
			t.Errorf("%s outside the bounds", rec)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{From: from}, ""},
		{Options{}, "Options.From is required"},
		{Options{From: from, To: from}, "Options.To"},
		{Options{From: from, Segments: MaxSegments + 1}, "Options.Segments"},
		{Options{From: from, Settle: -time.Second}, "Options.Settle"},
		{Options{From: from, BucketEvents: -1}, "Options.BucketEvents"},
	} {
		err := tt.o.Validate()
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
}

package audit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// now is the fixed clock of these tests: a Monday noon.
var now = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func TestPlan(t *testing.T) {
	p, err := Options{Since: "1h", Heal: true}.Plan(now)
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.Options{From: now.Add(-time.Hour), To: now, Heal: true, Segments: reconcile.DefaultSegments, IDsPerKind: reconcile.DefaultIDsPerKind, BucketEvents: reconcile.DefaultBucketEvents}
	if p.From != want.From || p.To != want.To || p.Heal != want.Heal || p.Segments != want.Segments || p.IDsPerKind != want.IDsPerKind || p.BucketEvents != want.BucketEvents {
		t.Fatalf("plan %+v, want %+v", p, want)
	}
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Segments: -1}, "reconcile: Options.Segments: must be at least 1, got -1"},
		{Options{BucketEvents: -5}, "reconcile: Options.BucketEvents: must be at least 1, got -5"},
		{Options{Settle: -time.Second}, "reconcile: Options.Settle: must not be negative, got -1s"},
		{Options{ArchiveURI: "http://x"}, "reconcile: Options.ArchiveURI: "},
	} {
		if _, err := tt.o.Plan(now); err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, toolkit.ErrInvalidOptions) {
			t.Errorf("%+v: error %v, want %q", tt.o, err, tt.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	for in, want := range map[string]time.Duration{"24h": 24 * time.Hour, "90m": 90 * time.Minute, "14d": 14 * 24 * time.Hour} {
		if got, err := ParseSince(in); err != nil || got != want {
			t.Errorf("ParseSince(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0h", "d", "1.5d", "x"} {
		if _, err := ParseSince(in); err == nil {
			t.Errorf("ParseSince(%q): no error", in)
		}
	}
}

// TestWindow: Since, From and To (or neither) resolve to one window; the
// combinations that make no sense are invalid options naming the field.
func TestWindow(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name     string
		o        Options
		from, to time.Time
		wantErr  string
	}{
		{"default: the last day before now minus settle", Options{Settle: time.Minute}, now.Add(-time.Minute - 24*time.Hour), now.Add(-time.Minute), ""},
		{"since in days", Options{Since: "2d"}, now.Add(-48 * time.Hour), now, ""},
		{"from to now", Options{From: "2026-03-01", Settle: time.Hour}, day(1), now.Add(-time.Hour), ""},
		{"from and to", Options{From: "2026-03-01", To: "2026-03-02T00:00:00Z"}, day(1), day(2), ""},
		{"since and from", Options{Since: "1h", From: "2026-03-01"}, time.Time{}, time.Time{}, "reconcile: Options.Since: goes without From and To"},
		{"to without from", Options{To: "2026-03-01"}, time.Time{}, time.Time{}, "reconcile: Options.To: needs From"},
		{"bad from", Options{From: "March"}, time.Time{}, time.Time{}, `reconcile: Options.From: want RFC 3339 (2026-03-01T00:00:00Z) or a date (2026-03-01), got "March"`},
		{"negative since", Options{Since: "-2h"}, time.Time{}, time.Time{}, "reconcile: Options.Since: must be positive, got -2h"},
		{"empty window", Options{From: "2026-03-02", To: "2026-03-01"}, time.Time{}, time.Time{}, "reconcile: Options.To: the window [2026-03-02T00:00:00Z, 2026-03-01T00:00:00Z) is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, err := tt.o.Window(now)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, toolkit.ErrInvalidOptions) {
					t.Fatalf("error %v, want %q (invalid options)", err, tt.wantErr)
				}
				return
			}
			if err != nil || !from.Equal(tt.from) || !to.Equal(tt.to) {
				t.Fatalf("window [%s, %s), %v; want [%s, %s)", from, to, err, tt.from, tt.to)
			}
		})
	}
}

func TestHealCommand(t *testing.T) {
	rep := reconcile.Report{Result: opsrec.Result{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 2, 0, 0, 0, 5, time.UTC)}}
	tests := []struct {
		n    schema.Naming
		want string
	}{
		{schema.Naming{Prefix: "streamfold", Stage: "dev"}, "streamfold reconcile --from 2026-03-01T00:00:00Z --to 2026-03-02T00:00:00.000000005Z --heal"},
		{schema.Naming{Prefix: "acme", Stage: "prod"}, "streamfold reconcile --prefix acme --stage prod --from 2026-03-01T00:00:00Z --to 2026-03-02T00:00:00.000000005Z --heal"},
	}
	for _, tt := range tests {
		if got := HealCommand(tt.n, rep); got != tt.want {
			t.Errorf("HealCommand(%v) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestWriteText(t *testing.T) {
	n := schema.Naming{Prefix: "streamfold", Stage: "dev"}
	rep := reconcile.Report{Result: opsrec.Result{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Events: 10,
		Rows: []opsrec.DayGaps{{Domain: "jobs", Day: "2026-03-01", Events: 10, MissingArchive: 3, IDs: map[string][]string{reconcile.KindArchive: {"a", "b"}}}}}}
	var b bytes.Buffer
	if err := WriteText(&b, rep, n); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"reconciled streamfold-dev-events: 10 events recorded in [2026-03-01T00:00:00Z, 2026-03-02T00:00:00Z)",
		"MISSING-ARCHIVE",
		"  jobs 2026-03-01 " + reconcile.KindArchive + ": a b (and 1 more: --json lists them all)\n",
		"3 gaps; to heal them:\n  streamfold reconcile --from 2026-03-01T00:00:00Z --to 2026-03-02T00:00:00Z --heal\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

package repair

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

func TestDefaultFold(t *testing.T) {
	// cmd/streamfold's foldFlags spell these defaults in their tags.
	if got, want := DefaultFold(), (Fold{ChunkEvents: 2000, Workers: 2, BufferEvents: 1_000_000}); got != want {
		t.Fatalf("DefaultFold() = %+v, want %+v", got, want)
	}
}

func TestNewRebuildPlan(t *testing.T) {
	live := schema.Naming{Prefix: "sf", Stage: "prod"}
	fold := DefaultFold()
	tests := []struct {
		name    string
		o       RebuildOptions
		want    RebuildPlan
		wantErr string
	}{
		{"fresh by default", RebuildOptions{Archive: "s3://bkt/archive", Fold: fold},
			RebuildPlan{Archive: "s3://bkt/archive", Mode: rebuild.Fresh, Live: live, Tables: schema.Naming{Prefix: "sf-rebuild", Stage: "prod"}, Fold: fold}, ""},
		{"fresh into a named target", RebuildOptions{Archive: "s3://bkt/archive", Into: Fresh, TargetPrefix: "sf2", TargetStage: "dev", Force: true, Fold: fold},
			RebuildPlan{Archive: "s3://bkt/archive", Mode: rebuild.Fresh, Live: live, Tables: schema.Naming{Prefix: "sf2", Stage: "dev"}, Force: true, Fold: fold}, ""},
		{"in place", RebuildOptions{Archive: "s3://bkt/archive", Into: InPlace, Fold: fold},
			RebuildPlan{Archive: "s3://bkt/archive", Mode: rebuild.InPlace, Live: live, Tables: live, Fold: fold}, ""},
		{"no archive", RebuildOptions{Fold: fold}, RebuildPlan{}, "rebuild: Options.Archive: required, e.g. s3://sf-prod-archive/archive"},
		{"not an archive URI", RebuildOptions{Archive: "http://a/b", Fold: fold}, RebuildPlan{}, "rebuild: Options.Archive: "},
		{"unknown mode", RebuildOptions{Archive: "s3://bkt/archive", Into: "sideways", Fold: fold}, RebuildPlan{}, `rebuild: Options.Into: must be fresh or in-place, got "sideways"`},
		{"fresh onto the live tables", RebuildOptions{Archive: "s3://bkt/archive", TargetPrefix: "sf", Fold: fold}, RebuildPlan{}, "rebuild: Options.Into: fresh: the target sf-prod-* are the live tables; use in-place"},
		{"bad target", RebuildOptions{Archive: "s3://bkt/archive", TargetStage: "qa", Fold: fold}, RebuildPlan{}, "rebuild: Options.Target: "},
		{"in place with a target", RebuildOptions{Archive: "s3://bkt/archive", Into: InPlace, Force: true, Fold: fold}, RebuildPlan{}, "rebuild: Options.TargetPrefix, TargetStage, Force: go with fresh only"},
		{"bad fold", RebuildOptions{Archive: "s3://bkt/archive", Fold: Fold{ChunkEvents: 10, Workers: 1, BufferEvents: 5}}, RebuildPlan{}, "rebuild: Options.BufferEvents: must be at least ChunkEvents (10), got 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewRebuildPlan(live, tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.Is(err, toolkit.ErrInvalidOptions) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || p != tt.want {
				t.Fatalf("plan %+v, %v\nwant %+v", p, err, tt.want)
			}
		})
	}
}

func TestFoldValidate(t *testing.T) {
	tests := []struct {
		name    string
		f       Fold
		wantErr string
	}{
		{"defaults", DefaultFold(), ""},
		{"no chunk", Fold{Workers: 1, BufferEvents: 1}, "verify: Options.ChunkEvents: must be at least 1, got 0"},
		{"no workers", Fold{ChunkEvents: 1, BufferEvents: 1}, "verify: Options.Workers: must be at least 1, got 0"},
		{"too many workers", Fold{ChunkEvents: 1, Workers: 65, BufferEvents: 1}, "verify: Options.Fold: rebuild: Options.Workers: must be between 1 and 64, got 65"},
		{"negative retention", Fold{ChunkEvents: 1, Workers: 1, BufferEvents: 1, RetentionDays: -1}, "verify: Options.RetentionDays: must be between 1 and 3660 days, got -1"},
		{"too many shards", Fold{ChunkEvents: 1, Workers: 1, BufferEvents: 1, GSIShards: 17}, "verify: Options.GSIShards: shards: must be between 0 (off) and 16, got 17"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := VerifyOptions{Fold: tt.f}
			err := o.Validate()
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
	o := VerifyOptions{Fold: DefaultFold(), Kinds: []string{"albums"}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `Options.Kinds: rebuild: VerifyOptions.Kinds: unknown row kind "albums"`) {
		t.Fatalf("unknown kind: %v", err)
	}
	o = VerifyOptions{Fold: DefaultFold(), Archive: "bucket/x"}
	if err := o.Validate(); err == nil || !strings.HasPrefix(err.Error(), "verify: Options.Archive: ") {
		t.Fatalf("bad archive: %v", err)
	}
}

func TestResultsText(t *testing.T) {
	r := RebuildResult{Archive: "s3://bkt/archive", Into: Fresh, Prefix: "sf-rebuild", Stage: "dev", TablesCreated: []string{"x", "y"},
		Stats: rebuild.Stats{Events: 10, Projected: 8, NonAgent: 2, Subjects: 3, Changed: 3, Expired: 1, Commits: 3, Seconds: 1.25, EventsPerSecond: 8}}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "created 2 tables sf-rebuild-dev-*\nrebuilt sf-rebuild-dev-* fresh from s3://bkt/archive: 10 events (8 projected, 2 non-agent, 0 invalid), 3 subjects: 3 changed, 0 unchanged, 0 failed; 1 items born expired (skipped); 3 commits in 1.2s (8 events/s)\n"
	if b.String() != want {
		t.Fatalf("rebuild text:\n%s\nwant:\n%s", b.String(), want)
	}
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], "1 items were not written") {
		t.Fatalf("rebuild warnings %q", w)
	}
	v := VerifyResult{Archive: "s3://bkt/archive", Prefix: "sf", Stage: "dev", OK: false, Report: rebuild.Report{
		Rows:        []rebuild.RowCount{{Kind: "message-counts", Archive: 4, Projection: 4}},
		Differences: []rebuild.Difference{{Table: "metrics", Key: map[string]string{"scope": "s"}, Attribute: "total", Archive: ptr("1"), Projection: ptr("3")}},
	}}
	b.Reset()
	if err := v.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "verified sf-dev-* against s3://bkt/archive (0 archived events); rows archive/projection: message-counts 4/4\n1 differences:\n  metrics ") {
		t.Fatalf("verify text:\n%s", b.String())
	}
	if w := v.Warnings(); len(w) != 1 || w[0] != "verify: the archive s3://bkt/archive holds no event (wrong --from-archive?)" {
		t.Fatalf("verify warnings %q", w)
	}
}

func ptr(s string) *string { return &s }

// TestProgress: a report within a second of the last printed one is held
// back, and printed when the fold ends.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	o, done := Fold{Progress: &b}.options("rebuild")
	o.Progress(rebuild.Progress{Read: 1})
	o.Progress(rebuild.Progress{Read: 2})
	o.Progress(rebuild.Progress{Read: 3})
	if got := strings.Count(b.String(), "\n"); got != 1 || !strings.HasPrefix(b.String(), "rebuild: 1 events read") {
		t.Fatalf("before the end:\n%s", b.String())
	}
	done()
	if !strings.HasSuffix(b.String(), "rebuild: 3 events read, 0 projected, 0 subjects (0 changed), 0 events/s\n") {
		t.Fatalf("after the end:\n%s", b.String())
	}
	if o, done := (Fold{}).options("verify"); o.Progress != nil {
		t.Fatal("a progress callback without a writer")
	} else {
		done()
	}
}

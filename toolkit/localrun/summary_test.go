package localrun

import (
	"strings"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/streamrun"
)

func TestResultWriteText(t *testing.T) {
	r := &Result{
		Projector:  ConsumerSummary{Consumer: "projector", Stats: streamrun.Stats{Records: 120, Batches: 2, Retries: 1, Gaps: 1}, Quarantined: 2},
		Archiver:   &ConsumerSummary{Consumer: "archiver", Stats: streamrun.Stats{Records: 120, Batches: 1}, Error: "archive gone"},
		ArchiveURI: "s3://b/archive", Seconds: 1.25, DeadLetter: "p-dev-deadletters",
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"projector  120 records in 2 batches, 1 retries, 2 dead-lettered, 1 gaps noticed (see the log; recorded in the checkpoints table)",
		"archiver   120 records in 1 batches, 0 retries, 0 dead-lettered, stopped: archive gone",
	}
	var got []string
	for _, l := range lines {
		if !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "prices:") {
			got = append(got, l)
		}
	}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != "1.2s; dead letters in p-dev-deadletters; archive s3://b/archive" {
		t.Fatalf("text:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "           capacity: ") || !strings.Contains(b.String(), "prices: ") {
		t.Fatalf("no capacity or price lines:\n%s", b.String())
	}
}

// TestProgressPrinterOnlyWhenMoved: a consumer's progress prints a line
// when a counter moves, never the same line again, each consumer on its
// own, and says when its lag is approximate.
func TestProgressPrinterOnlyWhenMoved(t *testing.T) {
	var b strings.Builder
	p := ProgressPrinter(&b, true)
	s := streamrun.Stats{Records: 100, Batches: 1, ShardsOpen: 1, LagMillis: 61_000}
	p("projector", s)
	s.LagMillis = 62_000 // a caught-up stream: only the clock moved
	p("projector", s)
	p("archiver", s) // another consumer's first report
	p("projector", s)
	s.Records, s.Batches = 250, 2
	p("projector", s)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (two first reports and the one that moved):\n%s", len(lines), b.String())
	}
	if !strings.Contains(lines[0], "run: projector 100 records in 1 batches, lag ~61s (approximate: DynamoDB Local rounds") ||
		!strings.HasPrefix(lines[1], "run: archiver ") || !strings.Contains(lines[2], "250 records in 2 batches") {
		t.Fatalf("lines:\n%s", b.String())
	}
	b.Reset()
	ProgressPrinter(&b, false)("archiver", streamrun.Stats{Records: 3, LagMillis: 1500})
	if got := b.String(); !strings.Contains(got, "lag 1.5s,") || strings.Contains(got, "approximate") {
		t.Fatalf("AWS progress line: %s", got)
	}
}

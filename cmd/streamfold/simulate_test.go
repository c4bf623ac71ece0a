package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/simulation"
)

// TestSimulateShape writes workloads to files, as a benchmark would before
// appending them, and checks that the summary says what they were: the
// order, rate and payloads, and a shape that matches the written events.
func TestSimulateShape(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name                  string
		args                  []string
		order                 simulate.Order
		rate                  int
		payloads              simulate.Payloads
		minDistinct, maxShare float64
		minWebhookBytes       int
	}{
		{"default", nil, simulate.OrderTime, 100, simulate.PayloadsTrimmed, 80, .05, 1000},
		{"subject order", []string{"--order", "subject"}, simulate.OrderSubject, 0, simulate.PayloadsTrimmed, 0, 1, 1000},
		{"full payloads at 50 a second", []string{"--rate", "50", "--github-payloads", "full"}, simulate.OrderTime, 50, simulate.PayloadsFull, 70, .05, 7000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, tt.name+".ndjson")
			args := append([]string{"simulate", "--seed", "3", "--events", "3000", "--start", "2026-01-05", "--out", file}, tt.args...)
			code, out, errOut := runCLI(t, nil, "", args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			var sum simulation.Summary
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if sum.Order != tt.order || sum.Rate != tt.rate || sum.GitHubPayloads != tt.payloads {
				t.Errorf("summary says order %q, rate %d, payloads %q; want %q, %d, %q", sum.Order, sum.Rate, sum.GitHubPayloads, tt.order, tt.rate, tt.payloads)
			}
			// The shape is the one of the events written.
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var evs []schema.Event
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var e schema.Event
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatal(err)
				}
				evs = append(evs, e)
			}
			want := simulate.MeasureShape(evs, 100)
			if g, w := mustJSON(t, sum.Shape), mustJSON(t, want); g != w {
				t.Fatalf("summary shape\n%s\nmeasured on the file\n%s", g, w)
			}
			s := sum.Shape
			if s.Events != 3000 || s.DistinctPerWindow < tt.minDistinct || s.SameSubjectShare >= tt.maxShare {
				t.Errorf("shape %+v: want %.0f+ distinct subjects per 100 records, under %.0f%% consecutive pairs sharing one", s, tt.minDistinct, 100*tt.maxShare)
			}
			if b := s.PayloadBytes[schema.TypeJobCompleted]; b < tt.minWebhookBytes {
				t.Errorf("completed webhooks of %d bytes, want at least %d", b, tt.minWebhookBytes)
			}
		})
	}
}

func TestSimulateFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"rate with subject order", []string{"--order", "subject", "--rate", "5"}, "simulate: --rate: applies to order time only"},
		{"unknown order", []string{"--order", "random"}, `simulate: --order: must be "time" or "subject"`},
		{"rate zero", []string{"--rate", "0"}, "simulate: --rate: must be between 1 and 100000"},
		{"unknown payloads", []string{"--github-payloads", "huge"}, `simulate: --github-payloads: must be "trimmed" or "full"`},
		{"shape window", []string{"--shape-window", "0"}, "simulate: --shape-window: must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "", append([]string{"simulate", "--events", "10", "--out", "-"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, want %d with %q\n%s%s", code, exitUsage, tt.want, out, errOut)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/toolkit/simulation"
)

// TestConsumedCapacity runs simulate and run as a user would and checks
// what they say the DynamoDB calls cost: every appended event at least one
// write unit and each duplicate a failed (unreported) conditional put; the
// projector's units per record are its totals over its records, spread over
// the projection tables and its checkpoints; the archiver's DynamoDB calls
// are only its checkpoints; the human summary prints the per-record figures
// and the price per million records.
func TestConsumedCapacity(t *testing.T) {
	c := testenv.S3Clients(t)
	n, _ := testenv.Tables(t, c)
	testenv.Bucket(t, c, n.BucketName())
	env := localEnv(n)

	code, out, errOut := runCLI(t, env, "", "simulate", "--seed", "5", "--events", "300", "--days", "1", "--quiet")
	if code != exitOK {
		t.Fatalf("simulate exit %d\n%s\n%s", code, out, errOut)
	}
	var sim struct {
		Appended         simulation.Counts
		ConsumedCapacity *capacity.Snapshot
	}
	if err := json.Unmarshal([]byte(out), &sim); err != nil || sim.ConsumedCapacity == nil {
		t.Fatalf("simulate summary without consumedCapacity (%v):\n%s", err, out)
	}
	app := *sim.ConsumedCapacity
	if app.Write < float64(sim.Appended.Accepted) || app.ByTable["events"].Write != app.Write || app.Read != 0 {
		t.Errorf("appends: %v write, %v read units (events table %v) for %d accepted events; want at least one write unit each, all on the events table",
			app.Write, app.Read, app.ByTable["events"].Write, sim.Appended.Accepted)
	}
	if got := failedCalls(app); got != int64(sim.Appended.Duplicates) {
		t.Errorf("appends: %d failed calls, want %d (the duplicates' conditional writes): %+v", got, sim.Appended.Duplicates, app.ByOperation)
	}
	if app.PerEvent == nil || !near(app.PerEvent.Write, app.Write/float64(sim.Appended.Accepted)) || app.PerEvent.DollarsPerMillion <= 0 {
		t.Errorf("appends: perEvent %+v for %v units over %d events", app.PerEvent, app.Write, sim.Appended.Accepted)
	}

	code, out, errOut = runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--json", "--batch-size", "100", "--archive-batch-window", "0s")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Archiver == nil {
		t.Fatalf("run summary (%v):\n%s", err, out)
	}
	// The JSON carries the documented keys.
	var raw map[string]map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	cc, _ := raw["projector"]["consumedCapacity"].(map[string]any)
	for _, k := range []string{"writeUnits", "readUnits", "perRecord", "byTable", "byOperation", "dollars"} {
		if _, ok := cc[k]; !ok {
			t.Errorf("projector.consumedCapacity lacks %q: %v", k, cc)
		}
	}

	p := sum.Projector.ConsumedCapacity
	if p.Write <= 0 || p.PerRecord == nil || sum.Projector.Records != int64(sim.Appended.Accepted) {
		t.Fatalf("projector: %d records, consumed %+v", sum.Projector.Records, p)
	}
	if got, want := p.PerRecord.Write, p.Write/float64(sum.Projector.Records); !near(got, want) {
		t.Errorf("projector perRecord.write = %v, want %v", got, want)
	}
	if got, want := p.PerRecord.Read, p.Read/float64(sum.Projector.Records); !near(got, want) {
		t.Errorf("projector perRecord.read = %v, want %v", got, want)
	}
	var tables capacity.Units
	for name, u := range p.ByTable {
		if strings.HasPrefix(name, n.Prefix) {
			t.Errorf("byTable keyed by physical name %q, want the logical one", name)
		}
		tables.Write += u.Write
		tables.Read += u.Read
	}
	if tables != p.Units {
		t.Errorf("projector: tables add up to %+v, totals %+v", tables, p.Units)
	}
	for _, name := range []string{"workflow-jobs", "messages", "checkpoints"} {
		if p.ByTable[name].Write <= 0 {
			t.Errorf("projector: no write units on %s: %v", name, p.ByTable)
		}
	}
	if p.ByTable["events"].Write != 0 {
		t.Errorf("projector: %v write units on the event table, which it never writes", p.ByTable["events"].Write)
	}

	a := sum.Archiver.ConsumedCapacity
	if a.ByTable["checkpoints"].Write <= 0 || len(a.ByTable) != 1 || a.Write >= p.Write {
		t.Errorf("archiver: consumed %+v; want checkpoint writes only, fewer than the projector's %v", a.ByTable, p.Write)
	}

	// Nothing left to consume: the human summary still prints the figures.
	code, out, errOut = runCLI(t, env, "", "run", "--until-caught-up", "--quiet")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"projector  0 records", "units per record", "per million records on demand", "prices: on-demand, Standard table class, us-east-1, prices of 2024-11-01"} {
		if !strings.Contains(out, want) {
			t.Errorf("human summary lacks %q:\n%s", want, out)
		}
	}
}

// failedCalls counts the calls of s that failed (and so reported no units).
func failedCalls(s capacity.Snapshot) int64 {
	var n int64
	for _, o := range s.ByOperation {
		n += o.Failed
	}
	return n
}

// near reports whether a rounded per-record figure is v to 4 decimals.
func near(got, v float64) bool { return math.Abs(got-v) <= 5e-5 }

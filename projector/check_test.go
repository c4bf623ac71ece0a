package projector_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestCheck: Check classifies each input against the stored states, on
// MemStore and on DynamoDB Local, and writes nothing.
func TestCheck(t *testing.T) { checkCheck(t, memBackend(t)) }

func TestCheckDynamoDB(t *testing.T) { checkCheck(t, dynamoBackend(t)) }

func checkCheck(t *testing.T, b backend) {
	ctx := context.Background()
	proj, err := projector.New(b.store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	job := fixtureJob(t)
	if len(job) < 3 {
		t.Fatalf("%d events of the job, want at least 3", len(job))
	}
	recorded := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	for i := range job {
		rec := recorded.Add(time.Duration(i) * time.Second)
		job[i].RecordedAt = &rec
	}
	// The stream projector saw every event of the job but the last.
	if out := proj.Project(ctx, inputsOf(t, job[:len(job)-1]...)); len(out.Failed)+len(out.Poison) > 0 {
		t.Fatalf("project: %+v", out)
	}
	other := jobWebhook(t, 900, recorded.Add(time.Hour), "Nightly", "main")
	otherRec := recorded.Add(time.Hour + time.Second)
	other.RecordedAt = &otherRec
	late := job[len(job)-2]
	late.ID = "late"
	lateRec := recorded.AddDate(0, 0, 120)
	late.RecordedAt = &lateRec
	future := job[0]
	future.ID = "from-the-future"
	future.Time = recorded.AddDate(3, 0, 0)

	type probe struct {
		name string
		ev   schema.Event
		want projector.Verdict
	}
	probes := []probe{}
	for i, e := range job[:len(job)-1] {
		probes = append(probes, probe{fmt.Sprintf("projected %d", i), e, projector.Applied})
	}
	probes = append(probes,
		probe{"duplicate of a projected one", job[0], projector.Applied},
		probe{"never projected (its job's state lacks it)", job[len(job)-1], projector.Missing},
		probe{"another job, never projected", other, projector.Missing},
		probe{"recorded after the job expired", late, projector.Late},
		probe{"dated years ahead of its recordedat", future, projector.Quarantined},
	)
	evs := make([]schema.Event, len(probes))
	for i, p := range probes {
		evs[i] = p.ev
	}
	before := snapshot(t, b)
	res, err := proj.Check(ctx, inputsOf(t, evs...))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range probes {
		if res.Verdicts[i] != p.want {
			t.Errorf("%s (%s): %s, want %s", p.name, p.ev.ID, res.Verdicts[i], p.want)
		}
	}
	if !errors.Is(res.Errors[len(probes)-1], projector.ErrFutureEvent) || len(res.Errors) != 1 {
		t.Errorf("errors %v, want the future event's ErrFutureEvent alone", res.Errors)
	}
	if res.Subjects != 2 || res.Reread != 2 {
		t.Errorf("read %d subjects, re-read %d; want 2 and 2 (both have an input not applied)", res.Subjects, res.Reread)
	}
	if after := snapshot(t, b); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("Check wrote:\nbefore %v\nafter  %v", before, after)
	}

	// Project what Check found missing: then everything is applied, and
	// the late and the future event stay what they are.
	out := proj.Project(ctx, inputsOf(t, evs...))
	if len(out.Failed)+len(out.Poison) > 0 || out.Changed != 2 {
		t.Fatalf("project the missing: %+v, want 2 aggregates changed", out)
	}
	res, err = proj.Check(ctx, inputsOf(t, evs...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(projector.Applied) != len(probes)-2 || res.Count(projector.Late) != 1 || res.Count(projector.Quarantined) != 1 || res.Reread != 1 {
		t.Fatalf("after projecting: %v (re-read %d), want all applied but the late and the future one (one subject re-read)", res.Verdicts, res.Reread)
	}
}

// snapshot is every projection table of b (items and counter rows).
func snapshot(t *testing.T, b backend) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for _, table := range []string{schema.TableWorkflowJobs, schema.TableWorkflowRuns, schema.TableMetrics, schema.TableWorkflows} {
		out[table] = b.items(t, table)
	}
	return out
}

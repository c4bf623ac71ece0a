package rebuild

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestVerifyAgreesOnLateEvents: history recorded 120 days ago, projected
// then, expired since (DynamoDB's TTL deleted the job items and run
// rows); then one more webhook of a few of its jobs, recorded now. The
// stream projector leaves them out as late (docs/projector.md, "Late
// events") and the fold of the archive, which holds every event, decides
// the same: verify finds no difference. Before the rule, the live side
// recreated each of those run rows from the late event alone (no
// total_jobs, status in_progress) while the archive's fold counted every
// job of the run.
func TestVerifyAgreesOnLateEvents(t *testing.T) {
	now := time.Now().UTC()
	evs := workload(t, 12, 1000, simulate.DefaultStart)
	old := now.AddDate(0, 0, -120)
	for i := range evs {
		evs[i].RecordedAt = &old
	}
	m := projector.NewMemStore()
	projectAsStream(t, m, evs, 100)
	// DynamoDB's TTL deletes what has expired.
	for _, table := range []string{schema.TableWorkflowJobs, schema.TableWorkflowRuns, schema.TableDeployments, schema.TableMessages} {
		spec, _ := schema.TableSpec(table)
		for _, it := range m.Items(table) {
			if ttl, ok := schema.TTLOf(it); ok && ttl <= now.Unix() {
				key, _ := spec.Key(it)
				m.Delete(table, key)
			}
		}
	}
	var late []schema.Event
	seen := map[string]bool{}
	for _, e := range evs {
		if strings.HasPrefix(e.Type, "github.workflow_job.") && !seen[e.Subject] && len(late) < 5 {
			seen[e.Subject] = true
			e.ID += "-late"
			e.RecordedAt = &now
			late = append(late, e)
		}
	}
	if len(late) == 0 {
		t.Fatal("no job webhook in the workload")
	}
	projectAsStream(t, m, late, 100)
	if n := len(m.Items(schema.TableWorkflowRuns)); n != 0 {
		t.Fatalf("%d run rows recreated by late events", n)
	}
	rep, err := Verify(context.Background(), Events(append(append([]schema.Event{}, evs...), late...)), StoreLive(m), VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("differences: %s", showDiffs(rep.Differences))
	}
	if rep.Archive.Late != len(late) {
		t.Fatalf("Archive.Late = %d, want the %d late events", rep.Archive.Late, len(late))
	}
}

// TestRebuildCountsQuarantined: an archived event dated years ahead of its
// recordedat is left out by the fold as the stream projector leaves it
// out (quarantined alone), counted, and does not fail the rebuild.
func TestRebuildCountsQuarantined(t *testing.T) {
	evs := workload(t, 14, 300, recentStart())
	bad := evs[0]
	bad.ID += "-future"
	bad.Time = bad.RecordedAt.AddDate(2, 0, 0)
	st, err := Rebuild(context.Background(), Events(append(evs, bad)), projector.NewMemStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Quarantined != 1 || st.Failed != 0 {
		t.Fatalf("stats %+v: want 1 quarantined, none failed", st)
	}
}

package projector_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// retentionInputs loads the seeds' examples of jobs (seed 003: a run of
// three jobs, a deployment awaiting approval) and messages (seed 004), all
// dated 2025, as if streamfold had recorded every event at recorded.
func retentionInputs(t *testing.T, recorded time.Time) []projector.Input {
	t.Helper()
	var out []projector.Input
	for _, f := range []string{"seed003_jobs.ndjson", "seed004_messages.ndjson", "seed002_agent.ndjson"} {
		for _, fe := range foldLoad(t, filepath.Join("testdata", "fold", f)) {
			e := fe.E
			rec := recorded
			e.RecordedAt = &rec
			k, ok := projector.KindFor(e.Type)
			if !ok {
				t.Fatalf("no kind for %s", e.Type)
			}
			out = append(out, projector.Input{Event: e, Payload: fe.P, Kind: k})
		}
	}
	return out
}

func ttlOf(t *testing.T, it map[string]types.AttributeValue) int64 {
	t.Helper()
	n, ok := it[schema.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("item has no ttl: %v", foldAttrs(it))
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func project(t *testing.T, store projector.Store, cfg projector.Config, in []projector.Input) projector.Outcome {
	t.Helper()
	p, err := projector.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := p.Project(context.Background(), in)
	if len(out.Failed)+len(out.Poison) > 0 {
		t.Fatalf("project: failed %v, poison %v", out.Failed, out.Poison)
	}
	return out
}

// TestRetentionCountsFromRecordedAt: events dated long ago (a backfill, a
// replay, a late delivery) but recorded now stay visible for the retention
// period: every item with a TTL expires 90 days after the latest recordedat
// of its aggregate's events, and each run summary with the last of its
// jobs, rounded up to midnight UTC.
func TestRetentionCountsFromRecordedAt(t *testing.T) {
	recorded := time.Date(2026, 11, 24, 9, 30, 15, 0, time.UTC)
	store := projector.NewMemStore()
	project(t, store, projector.Config{}, retentionInputs(t, recorded))
	want := recorded.AddDate(0, 0, 90).Unix()
	for _, table := range []string{schema.TableWorkflowJobs, schema.TableDeployments, schema.TableMessages} {
		items := store.Items(table)
		if len(items) == 0 {
			t.Fatalf("no %s items", table)
		}
		for id, it := range items {
			if got := ttlOf(t, it); got != want {
				t.Errorf("%s %s: ttl %d (%s), want %d: 90 days after the recordedat", table, id, got, time.Unix(got, 0).UTC(), want)
			}
		}
	}
	runs := map[string]bool{}
	for _, it := range store.Items(schema.TableWorkflowJobs) {
		if share, ok, err := schema.JobShare(it); err != nil {
			t.Fatal(err)
		} else if ok {
			runs[sAttr(share, "pk")] = true
		}
	}
	if len(runs) == 0 {
		t.Fatal("no run summaries")
	}
	midnight := time.Date(2027, 2, 23, 0, 0, 0, 0, time.UTC).Unix() // the day after 2027-02-22T09:30:15Z
	for pk := range runs {
		if got := ttlOf(t, memRunSummary(t, store, pk)); got != midnight {
			t.Errorf("run summary %s: ttl %s, want %s (the last job's, rounded up to midnight)", pk, time.Unix(got, 0).UTC(), time.Unix(midnight, 0).UTC())
		}
	}
	// Tables without TTL (seed 002's executions, the stage metrics rows)
	// get none.
	for _, table := range []string{schema.TableExecutions, schema.TableMetrics} {
		for id, it := range store.Items(table) {
			if _, ok := it[schema.AttrTTL]; ok {
				t.Errorf("%s %s has a ttl; the table has none", table, id)
			}
		}
	}

	// A later event recorded a month later moves its job's ttl, and the
	// run row's with it.
	later := recorded.AddDate(0, 1, 0)
	in := retentionInputs(t, later)
	var one []projector.Input
	for _, x := range in {
		if x.Event.Subject == schema.JobSubject(12345, 67890) {
			one = append(one, x)
			break
		}
	}
	x := one[0]
	x.Event.ID += "-redelivered-later"
	project(t, store, projector.Config{}, []projector.Input{x})
	job := byPK(store, schema.TableWorkflowJobs, "12345#67890")
	if got, want := ttlOf(t, job), later.AddDate(0, 0, 90).Unix(); got != want {
		t.Fatalf("job ttl after a later event = %s, want %s", time.Unix(got, 0).UTC(), time.Unix(want, 0).UTC())
	}
	run := memRunSummary(t, store, schema.RunKey(12345, 54321, 1))
	if got := ttlOf(t, run); got < later.AddDate(0, 0, 90).Unix() {
		t.Fatalf("run summary expires %s, before its job", time.Unix(got, 0).UTC())
	}
}

// TestRetentionSkipsBornExpired: a rebuild of history older than the
// retention (Config.ExpiredBefore) leaves out what would be born expired
// and counts it; counter rows without a TTL still count everything; with
// a longer Config.RetentionDays the same history is projected, expiring
// that long after it was recorded. A later live event of a left-out job,
// recorded after the job expired, is late: nothing is projected.
func TestRetentionSkipsBornExpired(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	recorded := now.AddDate(0, 0, -200)

	store := projector.NewMemStore()
	out := project(t, store, projector.Config{ExpiredBefore: now}, retentionInputs(t, recorded))
	full := projector.NewMemStore()
	project(t, full, projector.Config{}, retentionInputs(t, recorded))
	jobs, deps, msgs := len(full.Items(schema.TableWorkflowJobs)), len(full.Items(schema.TableDeployments)), len(full.Items(schema.TableMessages))
	shares := len(full.Items(schema.TableWorkflowRuns)) // the jobs' shares of their runs are items too
	if out.Expired != jobs+deps+msgs+shares {
		t.Fatalf("Expired = %d, want %d (%d jobs, %d shares of runs, %d deployments, %d messages)", out.Expired, jobs+deps+msgs+shares, jobs, shares, deps, msgs)
	}
	for _, table := range []string{schema.TableWorkflowJobs, schema.TableDeployments, schema.TableMessages, schema.TableWorkflowRuns} {
		if n := len(store.Items(table)); n != 0 {
			t.Errorf("%d %s items born expired were written", n, table)
		}
	}
	// No TTL: projected as always.
	for _, table := range []string{schema.TableExecutions, schema.TableMetrics} {
		if got, want := len(store.Items(table)), len(full.Items(table)); got != want || want == 0 {
			t.Errorf("%s: %d items, want %d", table, got, want)
		}
	}
	if got, want := canonicalTable(store, schema.TableMetrics), canonicalTable(full, schema.TableMetrics); !sameView(got, want) {
		t.Errorf("stage metrics rows differ when expired messages are left out:\n got %v\nwant %v", got, want)
	}

	// A longer retention keeps them, expiring 400 days after recordedat.
	long := projector.NewMemStore()
	out = project(t, long, projector.Config{ExpiredBefore: now, RetentionDays: 400}, retentionInputs(t, recorded))
	if out.Expired != 0 {
		t.Fatalf("Expired = %d with 400 days of retention, want 0", out.Expired)
	}
	for _, table := range []string{schema.TableWorkflowJobs, schema.TableDeployments, schema.TableMessages} {
		for id, it := range long.Items(table) {
			if got, want := ttlOf(t, it), recorded.AddDate(0, 0, 400).Unix(); got != want {
				t.Errorf("%s %s: ttl %s, want %s", table, id, time.Unix(got, 0).UTC(), time.Unix(want, 0).UTC())
			}
		}
	}
	if got, want := len(long.Items(schema.TableWorkflowRuns)), len(full.Items(schema.TableWorkflowRuns)); got != want {
		t.Fatalf("%d run rows with 400 days of retention, want %d", got, want)
	}

	// The stream projector, later: one more event of a left-out job,
	// recorded now, long after the job expired, is late (docs/projector.md,
	// "Late events"): not projected, counted, and nothing recreated.
	var x projector.Input
	for _, in := range retentionInputs(t, now) {
		if in.Event.Subject == schema.JobSubject(12345, 67890) {
			x = in
		}
	}
	x.Event.ID += "-late"
	if out := project(t, store, projector.Config{}, []projector.Input{x}); out.Late != 1 || out.Changed != 0 {
		t.Fatalf("late event: outcome %+v, want Late 1 and nothing changed", out)
	}
	if run := byPK(store, schema.TableWorkflowRuns, schema.RunKey(12345, 54321, 1)); run != nil {
		t.Fatalf("run row after the late event = %v, want none (the job expired)", foldAttrs(run))
	}
	if n := len(store.Items(schema.TableWorkflowJobs)); n != 0 {
		t.Fatalf("%d job items after the late event, want 0", n)
	}
}

// canonicalTable is a MemStore table in canonical form, internal
// attributes dropped.
func canonicalTable(m *projector.MemStore, table string) view {
	out := view{}
	for id, it := range m.Items(table) {
		out[id] = projector.CanonicalItem(schema.StripInternal(it))
	}
	return out
}

func sameView(a, b view) bool { return reflect.DeepEqual(a, b) }

// byPK is the item of a MemStore table whose pk is pk (nil if none).
func byPK(m *projector.MemStore, table, pk string) map[string]types.AttributeValue {
	for _, it := range m.Items(table) {
		if v, ok := it["pk"].(*types.AttributeValueMemberS); ok && v.Value == pk {
			return it
		}
	}
	return nil
}

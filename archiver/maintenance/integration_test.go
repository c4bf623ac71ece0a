package maintenance_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/maintenance"
	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// records are simulated events of one UTC day as the archiver would have
// archived them, recorded now (projections expire 90 days after that).
func records(t *testing.T, seed int64, n int, day time.Time, seq0 int) []archiver.Record {
	t.Helper()
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: n, Days: 1, Start: day})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	out := make([]archiver.Record, len(evs))
	for i, e := range evs {
		e.RecordedAt = &now
		out[i] = archiver.Record{Event: e, Seq: fmt.Sprintf("%021d", seq0+i+1), StreamEventID: fmt.Sprintf("ev-%d", seq0+i)}
	}
	return out
}

func objects(t *testing.T, a *archiver.Archive, date string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tb := range archiver.Tables() {
		keys, err := a.Objects(context.Background(), tb.Name, date)
		if err != nil {
			t.Fatal(err)
		}
		out[tb.Name] = len(keys)
	}
	return out
}

func total(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

// TestScheduledMaintenance runs the two scheduled tasks as the archiver
// function does, on MinIO and DynamoDB Local: compact merges the small
// objects of the day before yesterday only (yesterday's are left alone),
// and a second run changes nothing; verify reports 0 differences against
// tables rebuilt from the archive and some against empty tables, as the
// VerifyDifferences metric.
func TestScheduledMaintenance(t *testing.T) {
	c := testenv.S3Clients(t)
	ctx := context.Background()
	bucket := testenv.Bucket(t, c, "")
	a, err := archiver.New(c.S3, archiver.Config{Bucket: bucket, Prefix: "archive", Catalog: "sqlite:" + t.TempDir() + "/catalog.db"})
	if err != nil {
		t.Fatal(err)
	}
	now := testclock.Now() // the runner's clock too, so "yesterday" is the same day for both
	today := now.Truncate(24 * time.Hour)
	target, yesterday := today.AddDate(0, 0, -2), today.AddDate(0, 0, -1)
	recs := append(records(t, 41, 400, target, 0), records(t, 42, 200, yesterday, 1000)...)
	for start := 0; start < len(recs); start += 25 { // small objects
		if _, err := a.WriteBatch(ctx, recs[start:min(start+25, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	targetDate, yDate := target.Format(time.DateOnly), yesterday.Format(time.DateOnly)
	before, yBefore := objects(t, a, targetDate), objects(t, a, yDate)
	if total(before) < 8 || total(yBefore) < 4 {
		t.Fatalf("objects before: %v (day before yesterday), %v (yesterday): too few to compact", before, yBefore)
	}
	countEvents := func() int {
		n := 0
		if err := a.Events(ctx, func(schema.Event) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	events := countEvents()

	n, _ := testenv.Tables(t, c)
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rebuild.Rebuild(ctx, a, store, rebuild.Options{}); err != nil || st.Projected == 0 {
		t.Fatalf("rebuild: %+v, %v", st, err)
	}
	live, err := rebuild.NewDynamoLive(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	// Objects written a moment ago are younger than the default minimum
	// age (a day): take every object, as a day-old partition would be.
	r, err := maintenance.New(maintenance.Config{Deployment: "sf-test", Compact: archiver.CompactOptions{MinAge: -1}},
		a, maintenance.ArchiveVerifier{Source: a, Live: live}, &metrics, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Now = func() time.Time { return now }

	var after map[string]int
	for run := 1; run <= 2; run++ {
		res, err := r.Run(ctx, maintenance.Event{Task: maintenance.TaskCompact})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if res.Date != targetDate || len(res.Compacted) != len(archiver.Tables()) {
			t.Fatalf("run %d: date %s, %d tables; want %s, %d", run, res.Date, len(res.Compacted), targetDate, len(archiver.Tables()))
		}
		merged := 0
		for _, st := range res.Compacted {
			merged += st.Inputs
		}
		got := objects(t, a, targetDate)
		switch run {
		case 1:
			if merged == 0 || total(got) >= total(before) {
				t.Fatalf("run 1 merged %d objects: %v -> %v", merged, before, got)
			}
			after = got
		case 2:
			if merged != 0 || fmt.Sprint(got) != fmt.Sprint(after) {
				t.Fatalf("run 2 (idempotence) merged %d objects: %v -> %v", merged, after, got)
			}
		}
		if y := objects(t, a, yDate); fmt.Sprint(y) != fmt.Sprint(yBefore) {
			t.Fatalf("run %d touched yesterday's partition: %v -> %v", run, yBefore, y)
		}
		if got := countEvents(); got != events {
			t.Fatalf("run %d: the archive holds %d events, had %d", run, got, events)
		}
	}
	if got := strings.Count(metrics.String(), `"MaintenanceSucceeded":1,"Task":"compact"`); got != 2 {
		t.Fatalf("%d compact success metrics, want 2:\n%s", got, metrics.String())
	}

	metrics.Reset()
	res, err := r.Run(ctx, maintenance.Event{Task: maintenance.TaskVerify})
	if err != nil || res.Differences == nil || *res.Differences != 0 || res.Events != events {
		t.Fatalf("verify against the rebuilt tables: %+v, %v", res, err)
	}
	if !strings.Contains(metrics.String(), `"VerifyDifferences":0`) {
		t.Fatalf("metrics %q", metrics.String())
	}

	empty, _ := testenv.Tables(t, c)
	emptyLive, _ := rebuild.NewDynamoLive(c.DynamoDB, empty)
	metrics.Reset()
	r2, _ := maintenance.New(maintenance.Config{Deployment: "sf-test"}, a, maintenance.ArchiveVerifier{Source: a, Live: emptyLive}, &metrics, nil)
	res, err = r2.Run(ctx, maintenance.Event{Task: maintenance.TaskVerify})
	if err != nil || res.Differences == nil || *res.Differences == 0 {
		t.Fatalf("verify against empty tables: %+v, %v", res, err)
	}
	if want := fmt.Sprintf(`"VerifyDifferences":%d`, *res.Differences); !strings.Contains(metrics.String(), want) {
		t.Fatalf("metrics %q, want %s", metrics.String(), want)
	}
}

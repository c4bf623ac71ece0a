package queries_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/queries"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// These tests need no services: events are folded by the projector into
// its in-memory store, written with archiver.Encode into local Parquet files
// laid out as the Iceberg tables' data files (no event_date column), and the
// named queries run in DuckDB over them.

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current results")

// prepare validates events, sets RecordedAt as an appender would and drops
// redeliveries (a repeated subject and id), as the event table does.
func prepare(t testing.TB, evs []schema.Event) []schema.Event {
	t.Helper()
	seen := map[string]bool{}
	var out []schema.Event
	for _, e := range evs {
		if _, err := schema.Validate(&e); err != nil {
			t.Fatalf("event %s: %v", e.ID, err)
		}
		if k := e.Subject + "\x00" + e.ID; !seen[k] {
			seen[k] = true
			if e.RecordedAt == nil {
				at := e.Time.Add(time.Second)
				e.RecordedAt = &at
			}
			out = append(out, e)
		}
	}
	return out
}

// project folds events as the projector's Lambda handler does (through
// projector.Decode of a stream record, so non-agent executions are left
// out the same way) into a MemStore, and returns its projections.
func project(t testing.TB, evs []schema.Event) projections {
	t.Helper()
	store := projector.NewMemStore()
	proj, err := projector.New(store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []projector.Input
	for i, e := range evs {
		item, err := schema.Item(e, 0)
		if err != nil {
			t.Fatal(err)
		}
		img, err := streamimage.ToLambda(item)
		if err != nil {
			t.Fatal(err)
		}
		rec := events.DynamoDBEventRecord{EventName: "INSERT", EventID: fmt.Sprint(i),
			Change: events.DynamoDBStreamRecord{NewImage: img, SequenceNumber: seq(i)}}
		in, ok, err := projector.Decode(rec)
		if err != nil {
			t.Fatalf("event %s: %v", e.ID, err)
		}
		if ok {
			inputs = append(inputs, in)
		}
	}
	if out := proj.Project(context.Background(), inputs); len(out.Failed) > 0 {
		t.Fatalf("projector failed on %d aggregates: %v", len(out.Failed), out.Failed)
	}
	p := projections{}
	for _, table := range []string{schema.TableExecutions, schema.TableWorkflows, schema.TableWorkflowJobs, schema.TableMetrics} {
		for _, it := range store.Items(table) {
			p[table] = append(p[table], it)
		}
	}
	return p
}

// writeArchive writes events with archiver.Encode as the Iceberg tables lay
// out their data files, dir/<table>/data/event_date=<UTC date>/<n>.parquet
// (the directory is the day(event_time) partition's; the files have no
// event_date column), each partition split into up to pieces files (as
// batches would write them).
func writeArchive(t testing.TB, dir string, evs []schema.Event, pieces int) {
	t.Helper()
	groups := map[string][]archiver.Record{}
	for i, e := range evs {
		table, ok := archiver.TableFor(e.Type)
		if !ok {
			t.Fatalf("no archive table for %s", e.Type)
		}
		k := table + "/data/event_date=" + archiver.EventDate(e.Time)
		groups[k] = append(groups[k], archiver.Record{Event: e, Seq: seq(i), StreamEventID: fmt.Sprint(i)})
	}
	for k, recs := range groups {
		if err := os.MkdirAll(filepath.Join(dir, k), 0o755); err != nil {
			t.Fatal(err)
		}
		size := (len(recs) + pieces - 1) / pieces
		for n, start := 0, 0; start < len(recs); n, start = n+1, start+size {
			var b bytes.Buffer
			table, _, _ := strings.Cut(k, "/")
			if err := archiver.Encode(&b, table, recs[start:min(start+size, len(recs))], archiver.EncodeOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, k, fmt.Sprintf("%04d.parquet", n)), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// dateRange returns the first and last UTC dates of the events.
func dateRange(evs []schema.Event) (from, to string) {
	for _, e := range evs {
		d := e.Time.UTC().Format("2006-01-02")
		if from == "" || d < from {
			from = d
		}
		if d > to {
			to = d
		}
	}
	return from, to
}

// days lists the dates from..to.
func days(t testing.TB, from, to string) []string {
	t.Helper()
	d, err := time.Parse("2006-01-02", from)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := from; s <= to; d, s = d.AddDate(0, 0, 1), d.AddDate(0, 0, 1).Format("2006-01-02") {
		out = append(out, s)
	}
	return out
}

// TestEdgeCases runs the queries over hand-made events that exercise every
// folding rule (testdata/edge_cases.ndjson: late RUNNING after a terminal
// status, equal-time ties broken by event id, untagged and non-agent
// executions, stage suffixes, entities straddling midnight, an execution
// dated from its completion minus its duration, cost rounding, a repeated
// queued webhook, a repository renamed by a runner event). The results must
// equal the projector's and the reviewed golden file, over the whole range
// and day by day.
func TestEdgeCases(t *testing.T) {
	evs := prepare(t, testenv.LoadEvents(t, "testdata/edge_cases.ndjson"))
	p := project(t, evs)
	dir := t.TempDir()
	writeArchive(t, dir, evs, 2)
	db := openDuck(t)
	createViews(t, db, localFiles(t, dir))

	from, to := dateRange(evs)
	n := checkAll(t, db, p, from, to)
	for _, q := range queries.All() {
		if n[q.Name] == 0 {
			t.Errorf("%s: no rows over the edge cases: the comparison is vacuous", q.Name)
		}
	}
	for _, d := range days(t, from, to) {
		checkAll(t, db, p, d, d)
	}

	// The golden file pins the answers, reviewed by hand against the
	// cases' comments (e.g. my-agent on 2026-01-05: e1 SUCCEEDED despite
	// a later RUNNING, e5 FAILED although it ended after midnight).
	got := map[string][]row{}
	for _, q := range queries.All() {
		_, got[q.Name] = runQuery(t, db, q, from, to)
	}
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/edge_cases.golden.json"
	if *update {
		if err := os.WriteFile(golden, append(gotJSON, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(gotJSON)) {
		t.Errorf("results differ from %s (run with -update after checking them):\n%s", golden, gotJSON)
	}
}

// TestSimulatedWorkload compares every query with the projector on a
// simulate workload (redeliveries dropped as the event table drops them,
// out-of-order arrivals kept), over the whole range and for each day: the
// day windows check that reading one day either side is enough.
func TestSimulatedWorkload(t *testing.T) {
	raw, st, err := simulate.Generate(simulate.Config{Seed: 42, Events: 4000, Days: 4})
	if err != nil {
		t.Fatal(err)
	}
	evs := prepare(t, raw)
	if len(evs) != len(raw)-st.Redeliveries {
		t.Fatalf("%d events after dropping redeliveries, want %d - %d", len(evs), len(raw), st.Redeliveries)
	}
	p := project(t, evs)
	dir := t.TempDir()
	writeArchive(t, dir, evs, 3)
	db := openDuck(t)
	createViews(t, db, localFiles(t, dir))

	from, to := dateRange(evs)
	n := checkAll(t, db, p, from, to)
	for _, q := range queries.All() {
		if n[q.Name] < 3 {
			t.Errorf("%s: only %d rows compared over %s..%s", q.Name, n[q.Name], from, to)
		}
	}
	t.Logf("rows compared over %s..%s: %v", from, to, n)
	for _, d := range days(t, from, to) {
		checkAll(t, db, p, d, d)
	}
}

// TestApproxPercentileShim checks the shim against its definition, the
// nearest-rank percentile (the ceil(p*n)-th smallest value), and against
// DuckDB's own exact quantile_disc, for every size up to 60.
func TestApproxPercentileShim(t *testing.T) {
	db := openDuck(t)
	for n := 1; n <= 60; n++ {
		// values n*7 mod 61 ... : distinct, unsorted
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64((i*37 + 11) % 61)
		}
		sorted := append([]int64(nil), vals...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		list := fmt.Sprint(vals)
		list = list[1 : len(list)-1]
		for _, pct := range []int{50, 95} {
			var got, disc int64
			q := fmt.Sprintf("SELECT approx_percentile(v, 0.%02d), quantile_disc(v, 0.%02d) FROM (SELECT unnest(string_split('%s', ' '))::BIGINT AS v)", pct, pct, list)
			if err := db.QueryRow(q).Scan(&got, &disc); err != nil {
				t.Fatal(err)
			}
			want := sorted[max(1, (n*pct+99)/100)-1]
			if got != want {
				t.Errorf("n=%d p=0.%02d: approx_percentile = %d, nearest rank = %d", n, pct, got, want)
			}
			if got != disc {
				t.Errorf("n=%d p=0.%02d: approx_percentile = %d, quantile_disc = %d", n, pct, got, disc)
			}
		}
	}
	// Nulls are ignored.
	var got int64
	if err := db.QueryRow("SELECT approx_percentile(v, 0.5) FROM (VALUES (NULL), (3), (NULL), (1), (2)) t(v)").Scan(&got); err != nil || got != 2 {
		t.Errorf("with nulls: approx_percentile = %d, %v; want 2", got, err)
	}
}

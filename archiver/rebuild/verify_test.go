package rebuild

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// sortedRows returns a kind's rows of a store, by key.
func sortedRows(t *testing.T, live Live, kind RowKind) []row {
	t.Helper()
	rows, err := live.Rows(context.Background(), kind)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, _ := rowKey(kind.Table, rows[i])
		b, _ := rowKey(kind.Table, rows[j])
		return a < b
	})
	return rows
}

func keyOfRow(kind RowKind, r row) row {
	k := row{}
	for _, name := range keyNames(kind.Table) {
		k[name] = r[name]
	}
	return k
}

// addCounter adds delta to a counter of a row through a commit, as a
// stray writer would.
func addCounter(t *testing.T, m *projector.MemStore, kind RowKind, key row, attr string, delta int64) {
	t.Helper()
	cur, err := m.Get(context.Background(), kind.Table, key)
	if err != nil {
		t.Fatal(err)
	}
	if cur == nil {
		cur = row{}
		for k, v := range key {
			cur[k] = v
		}
	}
	sum := new(big.Rat)
	if n, ok := cur[attr].(*types.AttributeValueMemberN); ok {
		sum.SetString(n.Value)
	}
	sum.Add(sum, new(big.Rat).SetInt64(delta))
	cur[attr] = &types.AttributeValueMemberN{Value: projector.NormalizeNumber(sum.FloatString(12))}
	m.Set(kind.Table, cur)
}

// strayShare is the key of a share of the run pk that an older projector
// could have left (a job id no job of the run has): its counters add to
// the run's summary.
func strayShare(pk types.AttributeValue) row {
	return row{"pk": pk, "sk": s(schema.RunJobSK(0))}
}

// setAttr sets one attribute of an existing row.
func setAttr(t *testing.T, m *projector.MemStore, kind RowKind, key row, attr string, v types.AttributeValue) {
	t.Helper()
	cur, err := m.Get(context.Background(), kind.Table, key)
	if err != nil || cur == nil {
		t.Fatalf("setAttr: row %v: %v", key, err)
	}
	cur[attr] = v
	m.Set(kind.Table, cur)
}

func plus(t *testing.T, v types.AttributeValue, d string) *string {
	t.Helper()
	sum := bigOf(*render(v))
	sum.Add(sum, bigOf(d))
	return strp(projector.NormalizeNumber(sum.FloatString(12)))
}

// dropRow hides one row from a Live.
type dropRow struct {
	Live
	kind string
	key  string
}

func (d dropRow) Rows(ctx context.Context, kind RowKind) ([]row, error) {
	rows, err := d.Live.Rows(ctx, kind)
	var out []row
	for _, r := range rows {
		if k, _ := rowKey(kind.Table, r); kind.Name == d.kind && k == d.key {
			continue
		}
		out = append(out, r)
	}
	return out, err
}

// TestVerify projects a workload as the stream would into a MemStore (the
// "live" tables), verifies it against the archive (the same events,
// shuffled, with duplicates), then changes the live side in one way per
// case: Verify must report exactly the expected differences.
func TestVerify(t *testing.T) {
	evs := workload(t, 11, 2000, simulate.DefaultStart)
	src := Events(shuffledWithDuplicates(evs, 2))
	wm, mc, rs := kindNamed(t, KindWorkflowMetrics), kindNamed(t, KindMessageCounts), kindNamed(t, KindRunSummaries)
	diff := func(kind RowKind, r row, p Problem, attr string, a, proj *string) Difference {
		_, key := rowKey(kind.Table, r)
		return Difference{Kind: kind.Name, Table: kind.Table, Key: key, Problem: p, Attribute: attr, Archive: a, Projection: proj}
	}
	type tamper func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference)
	tests := []struct {
		name   string
		tamper tamper
	}{
		{"untouched", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) { return live, nil }},
		{"message count counter changed", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			r := sortedRows(t, live, mc)[0]
			was := r["total"]
			addCounter(t, m, mc, keyOfRow(mc, r), "total", 1)
			return live, []Difference{diff(mc, r, Differs, "total", render(was), plus(t, was, "1"))}
		}},
		{"workflow metrics counter changed", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			r := sortedRows(t, live, wm)[1]
			was := r["executionCount"]
			addCounter(t, m, wm, keyOfRow(wm, r), "executionCount", -1)
			return live, []Difference{diff(wm, r, Differs, "executionCount", render(was), plus(t, was, "-1"))}
		}},
		{"average within tolerance", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			r := sortedRows(t, live, wm)[0]
			setAttr(t, m, wm, keyOfRow(wm, r), "avgDurationMs", n(*plus(t, r["avgDurationMs"], "0.5")))
			return live, nil
		}},
		{"average beyond tolerance", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			r := sortedRows(t, live, wm)[0]
			was := r["avgCostPerExecution"]
			setAttr(t, m, wm, keyOfRow(wm, r), "avgCostPerExecution", n(*plus(t, was, "0.01")))
			return live, []Difference{diff(wm, r, Differs, "avgCostPerExecution", render(was), plus(t, was, "0.01"))}
		}},
		{"a stray share of a successful run says a job failed", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			for _, r := range sortedRows(t, live, rs) {
				if strAttr(r, "conclusion") == "success" {
					addCounter(t, m, rs, strayShare(r["pk"]), "failed_jobs", 1)
					return live, []Difference{
						diff(rs, r, Differs, "conclusion", strp("success"), strp("failure")),
						diff(rs, r, Differs, "failed_jobs", nil, strp("1")),
					}
				}
			}
			t.Fatal("no successful run in the workload")
			return nil, nil
		}},
		{"row not explained by the archive", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			key := row{"scope": s("messages/prod"), "date": s("1999-01-01")}
			addCounter(t, m, mc, key, "total", 3)
			return live, []Difference{diff(mc, key, MissingInArchive, "total", nil, strp("3"))}
		}},
		{"row missing from the projection", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			r := sortedRows(t, live, rs)[2]
			id, _ := rowKey(rs.Table, r)
			return dropRow{Live: live, kind: rs.Name, key: id}, []Difference{diff(rs, r, MissingInProjection, "total_jobs", render(r["total_jobs"]), nil)}
		}},
		{"empty row and zero counter are no difference", func(t *testing.T, m *projector.MemStore, live Live) (Live, []Difference) {
			addCounter(t, m, mc, row{"scope": s("messages/prod"), "date": s("1999-01-02")}, "total", 0)
			r := sortedRows(t, live, mc)[1]
			addCounter(t, m, mc, keyOfRow(mc, r), "not_a_status", 2)
			addCounter(t, m, mc, keyOfRow(mc, r), "not_a_status", -2)
			if got := render(sortedRows(t, live, mc)[1]["not_a_status"]); got == nil || *got != "0" {
				t.Fatalf("tamper did not leave a zero counter: %v", got)
			}
			return live, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := projector.NewMemStore()
			projectAsStream(t, m, evs, 100)
			live, want := tt.tamper(t, m, StoreLive(m))
			rep, err := Verify(context.Background(), src, live, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = []Difference{}
			}
			if !reflect.DeepEqual(rep.Differences, want) {
				t.Fatalf("differences:\n got %s\nwant %s", showDiffs(rep.Differences), showDiffs(want))
			}
			if rep.OK() != (len(want) == 0) {
				t.Fatalf("OK() = %v with %d differences", rep.OK(), len(want))
			}
			if len(rep.Rows) != 3 || rep.Archive.Events != len(src) {
				t.Fatalf("report rows %+v, archive %+v", rep.Rows, rep.Archive)
			}
			for _, rc := range rep.Rows {
				if rc.Archive == 0 || rc.Projection == 0 {
					t.Fatalf("row counts %+v: want rows of every kind on both sides", rc)
				}
			}
		})
	}
}

// TestVerifyReportGolden checks the JSON report and the one-line rendering
// of several differences at once against golden files.
func TestVerifyReportGolden(t *testing.T) {
	evs := workload(t, 11, 2000, simulate.DefaultStart)
	m := projector.NewMemStore()
	projectAsStream(t, m, evs, 100)
	live := StoreLive(m)
	wm, mc, rs := kindNamed(t, KindWorkflowMetrics), kindNamed(t, KindMessageCounts), kindNamed(t, KindRunSummaries)
	addCounter(t, m, mc, keyOfRow(mc, sortedRows(t, live, mc)[0]), "completed", 2)
	addCounter(t, m, wm, keyOfRow(wm, sortedRows(t, live, wm)[0]), "totalCost", 5)
	addCounter(t, m, rs, strayShare(sortedRows(t, live, rs)[0]["pk"]), "waiting_jobs", 1)
	addCounter(t, m, mc, row{"scope": s("messages/dev"), "date": s("1999-12-31")}, "total", 1)
	r := sortedRows(t, live, rs)[1]
	id, _ := rowKey(rs.Table, r)
	rep, err := Verify(context.Background(), Events(evs), dropRow{Live: live, kind: rs.Name, key: id}, VerifyOptions{Kinds: []string{KindMessageCounts, KindWorkflowMetrics, KindRunSummaries}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(struct {
		Rows        []RowCount   `json:"rows"`
		Differences []Difference `json:"differences"`
	}{rep.Rows, rep.Differences}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "verify_report.json", append(b, '\n'))
	var lines []string
	for _, d := range rep.Differences {
		lines = append(lines, d.String())
	}
	golden(t, "verify_report.txt", []byte(strings.Join(lines, "\n")+"\n"))
}

func TestVerifyUnknownKind(t *testing.T) {
	_, err := Verify(context.Background(), Events{}, StoreLive(projector.NewMemStore()), VerifyOptions{Kinds: []string{"albums"}})
	if err == nil || !strings.Contains(err.Error(), `VerifyOptions.Kinds: unknown row kind "albums"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestRunSummariesAreDerivedOnRead: a run summary's status and conclusion
// are a function of its counters, summed over the jobs' shares and an
// older projector's row, whatever that row derived when it was last
// written (a run that looked complete before another job was counted).
func TestRunSummariesAreDerivedOnRead(t *testing.T) {
	rs := kindNamed(t, KindRunSummaries)
	stale := row{"pk": s("1#2#1"), "sk": s("v"), "total_jobs": n("2"), "completed_jobs": n("1"), "success_jobs": n("1"), "status": s("completed"), "conclusion": s("success")}
	share := row{"pk": s("1#2#1"), "sk": s("job#9"), "total_jobs": n("1"), "installation_id": n("1"), "run_id": n("2"), "run_attempt": n("1")}
	got, err := rs.Rows([]row{stale, share}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := row{"pk": s("1#2#1"), "sk": s("v"), "total_jobs": n("3"), "completed_jobs": n("1"), "success_jobs": n("1"), "status": s("in_progress"),
		"installation_id": n("1"), "run_id": n("2"), "run_attempt": n("1")}
	if len(got) != 1 || !reflect.DeepEqual(projectorCanon(got[0]), projectorCanon(want)) {
		t.Fatalf("rows = %v, want %v", got, projectorCanon(want))
	}
	if _, ok := stale["conclusion"]; !ok {
		t.Fatal("Rows changed its input")
	}
	if schema.TableWorkflowRuns != rs.Table {
		t.Fatal("run summaries live in workflow-runs")
	}
}

func projectorCanon(r row) map[string]any { return projector.CanonicalItem(r) }

// TestVerifyLeavesOutExpired: history recorded longer ago than the
// retention. The live run summaries written back then carry a ttl that
// has passed (DynamoDB deletes them within days), and the fold of the
// archive does not project them: neither is a difference, and the expired
// live rows are counted. Counter rows without a TTL still compare.
func TestVerifyLeavesOutExpired(t *testing.T) {
	evs := workload(t, 12, 1000, simulate.DefaultStart)
	old := time.Now().UTC().AddDate(0, 0, -120)
	for i := range evs {
		evs[i].RecordedAt = &old
	}
	m := projector.NewMemStore()
	projectAsStream(t, m, evs, 100)
	runs := len(sortedRows(t, StoreLive(m), kindNamed(t, KindRunSummaries)))
	if runs == 0 {
		t.Fatal("no run summary in the workload")
	}
	rep, err := Verify(context.Background(), Events(evs), StoreLive(m), VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("differences: %s", showDiffs(rep.Differences))
	}
	if rep.ExpiredLive != runs {
		t.Fatalf("ExpiredLive = %d, want the %d run summaries", rep.ExpiredLive, runs)
	}
	if rep.Archive.Expired == 0 {
		t.Fatal("the fold left out no born-expired item")
	}
	for _, rc := range rep.Rows {
		if rc.Kind != KindRunSummaries && (rc.Archive == 0 || rc.Archive != rc.Projection) {
			t.Fatalf("row counts %+v: rows without a TTL must still be compared", rc)
		}
	}
	// With a year of retention the fold keeps the history, which the live
	// side, projected with 90 days, has let expire: each run summary is
	// missing from the projection.
	rep, err = Verify(context.Background(), Events(evs), StoreLive(m), VerifyOptions{Options: Options{Projector: projector.Config{RetentionDays: 365}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Archive.Expired != 0 {
		t.Fatalf("Expired = %d with 365 days of retention", rep.Archive.Expired)
	}
	missing := 0
	for _, d := range rep.Differences {
		if d.Kind == KindRunSummaries && d.Problem == MissingInProjection {
			missing++
		}
	}
	if missing != runs || len(rep.Differences) != runs {
		t.Fatalf("differences with 365 days of retention: %s; want the %d run summaries missing", showDiffs(rep.Differences), runs)
	}
}

// TestRebuildSkipsBornExpired: a rebuild of history recorded longer ago
// than the retention writes no item that would be born expired and counts
// them; --retention (Projector.RetentionDays) long enough writes them all.
func TestRebuildSkipsBornExpired(t *testing.T) {
	evs := workload(t, 13, 1000, simulate.DefaultStart)
	old := time.Now().UTC().AddDate(0, 0, -120)
	for i := range evs {
		evs[i].RecordedAt = &old
	}
	withTTL := []string{schema.TableWorkflowJobs, schema.TableWorkflowRuns, schema.TableDeployments, schema.TableMessages}
	m := projector.NewMemStore()
	st, err := Rebuild(context.Background(), Events(evs), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range withTTL {
		if n := len(m.Items(table)); n != 0 {
			t.Errorf("%d %s items born expired were written", n, table)
		}
	}
	if n := len(m.Items(schema.TableWorkflows)); n == 0 {
		t.Error("no sf/ldf item: tables without a TTL must be rebuilt")
	}
	kept := projector.NewMemStore()
	st2, err := Rebuild(context.Background(), Events(evs), kept, Options{Projector: projector.Config{RetentionDays: 365}})
	if err != nil {
		t.Fatal(err)
	}
	items := 0 // the jobs' shares of their runs included: they are items
	for _, table := range withTTL {
		items += len(kept.Items(table))
	}
	if st2.Expired != 0 || items == 0 || st.Expired != items {
		t.Fatalf("Expired = %d at 90 days, %d at 365 days; want %d (the items written at 365 days) and 0", st.Expired, st2.Expired, items)
	}
}

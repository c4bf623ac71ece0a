package queries_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// An independent check of the Iceberg metadata the archiver writes: a
// simulate workload archived in many batches (many files per partition, one
// partition compacted) to MinIO with an SQLite catalog, then for several
// predicates Iceberg scan planning through iceberg-go (partition pruning by
// day(event_time), file pruning by the event_time and recorded_at bounds)
// and iceberg-go's reading of the planned files are compared with DuckDB
// reading every data file of the snapshot with the same predicate. A wrong
// timestamp unit, partition value or column bound makes planning drop files
// that hold matching rows (or keep files it should prune), which this
// catches; so do the per-file checks of partition value, record count and
// bounds against what DuckDB reads in the file.

// plannedFile is one data file Iceberg scan planning returned.
type plannedFile struct {
	key  string // S3 key
	file iceberg.DataFile
}

// plannedFiles plans a scan of one table's current snapshot with a row
// filter (nil: all rows) and returns its data files, sorted by key.
func plannedFiles(t testing.TB, a *archiver.Archive, name string, filter iceberg.BooleanExpression) []plannedFile {
	t.Helper()
	tbl, err := a.Table(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return planTable(t, tbl, filter)
}

func planTable(t testing.TB, tbl *table.Table, filter iceberg.BooleanExpression, opts ...table.ScanOption) []plannedFile {
	t.Helper()
	if filter != nil {
		opts = append(opts, table.WithRowFilter(filter))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(context.Background())
	if err != nil {
		t.Fatalf("plan files of %s: %v", strings.Join(tbl.Identifier(), "."), err)
	}
	out := make([]plannedFile, 0, len(tasks))
	for _, task := range tasks {
		if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0 {
			t.Fatalf("%s: file %s has delete files: the archive never writes any", strings.Join(tbl.Identifier(), "."), task.File.FilePath())
		}
		rest, ok := strings.CutPrefix(task.File.FilePath(), "s3://")
		_, key, _ := strings.Cut(rest, "/")
		if !ok || key == "" {
			t.Fatalf("data file path %q is not an s3:// URI", task.File.FilePath())
		}
		out = append(out, plannedFile{key: key, file: task.File})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// icebergRows reads a table's rows matching filter with iceberg-go (scan
// planning, then its Parquet reader, which applies the filter to rows), as
// "subject event_id" keys.
func icebergRows(t testing.TB, tbl *table.Table, filter iceberg.BooleanExpression, opts ...table.ScanOption) map[string]bool {
	t.Helper()
	opts = append(opts, table.WithRowFilter(filter), table.WithSelectedFields("subject", "event_id"))
	_, recs, err := tbl.Scan(opts...).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("scan %s: %v", strings.Join(tbl.Identifier(), "."), err)
	}
	out := map[string]bool{}
	for rec, err := range recs {
		if err != nil {
			t.Fatalf("scan %s: %v", strings.Join(tbl.Identifier(), "."), err)
		}
		si, ei := rec.Schema().FieldIndices("subject"), rec.Schema().FieldIndices("event_id")
		if len(si) != 1 || len(ei) != 1 {
			t.Fatalf("scan %s: record batch schema %v lacks subject or event_id", strings.Join(tbl.Identifier(), "."), rec.Schema())
		}
		subj, id := rec.Column(si[0]), rec.Column(ei[0])
		for i := 0; i < int(rec.NumRows()); i++ {
			k := subj.ValueStr(i) + " " + id.ValueStr(i)
			if out[k] {
				t.Errorf("scan %s: row %s twice", strings.Join(tbl.Identifier(), "."), k)
			}
			out[k] = true
		}
		rec.Release()
	}
	return out
}

// duckRows returns the "subject event_id" keys DuckDB reads from src with
// a WHERE condition.
func duckRows(t testing.TB, db *sql.DB, src, where string) map[string]bool {
	t.Helper()
	rows, err := db.Query("SELECT subject, event_id FROM " + src + " WHERE " + where)
	if err != nil {
		t.Fatalf("duckdb: %s: %v", where, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var s, id string
		if err := rows.Scan(&s, &id); err != nil {
			t.Fatal(err)
		}
		if out[s+" "+id] {
			t.Errorf("duckdb: %s: row %s %s twice", where, s, id)
		}
		out[s+" "+id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func diffKeys(got, want map[string]bool) (missing, extra []string) {
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// boundaryEvents copies template (a messages event) to new event ids at
// times on and around the predicates' bounds, to the microsecond.
func boundaryEvents(t testing.TB, template schema.Event, day time.Time) []schema.Event {
	t.Helper()
	at := func(d time.Duration) time.Time { return day.Add(d) }
	times := []time.Time{
		at(0), at(time.Microsecond), at(-time.Microsecond), // midnight and either side
		at(10*time.Hour + 17*time.Minute + 3*time.Second + 250*time.Millisecond - time.Microsecond),
		at(10*time.Hour + 17*time.Minute + 3*time.Second + 250*time.Millisecond),
		at(10*time.Hour + 17*time.Minute + 3*time.Second + 250*time.Millisecond + time.Microsecond),
		at(15*time.Hour - time.Microsecond), at(15 * time.Hour),
		at(24*time.Hour - time.Microsecond), at(24 * time.Hour),
		at(24*time.Hour + 75*time.Minute - time.Microsecond), at(24*time.Hour + 75*time.Minute),
	}
	var out []schema.Event
	for i, tm := range times {
		e := template
		e.ID = fmt.Sprintf("boundary-%02d", i)
		e.Time = tm
		rec := tm.Add(1500 * time.Millisecond)
		e.RecordedAt = &rec
		out = append(out, e)
	}
	return out
}

// partitionDay returns a data file's day(event_time) partition value as a
// date.
func partitionDay(t testing.TB, f iceberg.DataFile) string {
	t.Helper()
	v, ok := f.Partition()[1000] // the event_time_day partition field
	if !ok || len(f.Partition()) != 1 {
		t.Fatalf("%s: partition %v, want one value of field 1000 (event_time_day)", f.FilePath(), f.Partition())
	}
	var days int64
	switch x := v.(type) {
	case int32:
		days = int64(x)
	case iceberg.Date:
		days = int64(x)
	case int64:
		days = x
	case int:
		days = int64(x)
	default:
		t.Fatalf("%s: partition value %v is a %T, want days since the epoch", f.FilePath(), v, v)
	}
	return time.Unix(days*86400, 0).UTC().Format(archiver.DateLayout)
}

// boundMicros decodes an Iceberg single-value serialization of a timestamp
// (8 bytes little-endian, microseconds since the epoch).
func boundMicros(t testing.TB, f iceberg.DataFile, b []byte, which string) int64 {
	t.Helper()
	if len(b) != 8 {
		t.Fatalf("%s: %s bound of event_time is %d bytes, want 8", f.FilePath(), which, len(b))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

func TestIcebergMetadata(t *testing.T) {
	c := testenv.S3Clients(t)
	ctx := context.Background()
	bucket, prefix := testenv.Bucket(t, c, ""), "archive/v1"
	a, err := archiver.New(c.S3, archiver.Config{Bucket: bucket, Prefix: prefix, Catalog: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })

	// A simulate workload over four days plus events on and around the
	// bounds of the predicates below, archived in batches of 250 records
	// in stream order (each batch writes one file per table and day it
	// touches).
	start := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	raw, _, err := simulate.Generate(simulate.Config{Seed: 4242, Events: 3000, Days: 4, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	evs := prepare(t, raw)
	d1, _ := dateRange(evs)
	day1, err := time.Parse(archiver.DateLayout, d1)
	if err != nil {
		t.Fatal(err)
	}
	day2 := day1.AddDate(0, 0, 1)
	var template *schema.Event
	for i := range evs {
		if tb, _ := archiver.TableFor(evs[i].Type); tb == "messages" {
			template = &evs[i]
			break
		}
	}
	if template == nil {
		t.Fatal("the workload has no messages event")
	}
	evs = append(evs, prepare(t, boundaryEvents(t, *template, day2))...)
	want := map[string]map[string]time.Time{} // table -> "subject id" -> event time
	recs := make([]archiver.Record, len(evs))
	for i, e := range evs {
		recs[i] = archiver.Record{Event: e, Seq: seq(i), StreamEventID: fmt.Sprint(i)}
		tb, _ := archiver.TableFor(e.Type)
		if want[tb] == nil {
			want[tb] = map[string]time.Time{}
		}
		want[tb][e.Subject+" "+e.ID] = e.Time
	}
	var files int
	for i := 0; i < len(recs); i += 250 {
		st, err := a.WriteBatch(ctx, recs[i:min(i+250, len(recs))])
		if err != nil {
			t.Fatalf("write batch %d: %v", i/250, err)
		}
		files += st.Objects
	}

	// Compact one partition: messages on day2 (many batch files).
	tblBefore, err := a.Table(ctx, "messages")
	if err != nil {
		t.Fatal(err)
	}
	before := tblBefore.CurrentSnapshot().SnapshotID
	cs, err := a.Compact(ctx, "messages", day2.Format(archiver.DateLayout), archiver.CompactOptions{MinAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Inputs < 2 || cs.Outputs < 1 || cs.Duplicates != 0 {
		t.Fatalf("compaction of messages %s: %+v, want several inputs merged, no duplicates", day2.Format(archiver.DateLayout), cs)
	}
	t.Logf("%d events written in %d batch files; compaction of messages %s merged %d files into %d",
		len(evs), files, day2.Format(archiver.DateLayout), cs.Inputs, cs.Outputs)

	// Every data file of every table's current snapshot, downloaded for
	// DuckDB (which has no S3 access here).
	dir := t.TempDir()
	db := openDuck(t)
	eventTimeID := func() int {
		s, err := archiver.IcebergSchema("messages")
		if err != nil {
			t.Fatal(err)
		}
		f, ok := s.FindFieldByName("event_time")
		if !ok {
			t.Fatal("no event_time field")
		}
		return f.ID
	}()
	type tableFiles struct {
		tbl   *table.Table
		all   []plannedFile
		src   string            // DuckDB read_parquet of all files, timestamps as UTC TIMESTAMP
		local map[string]string // key -> local path
	}
	tables := map[string]*tableFiles{}
	for _, td := range archiver.Tables() {
		tbl, err := a.Table(ctx, td.Name)
		if err != nil {
			t.Fatal(err)
		}
		tf := &tableFiles{tbl: tbl, all: planTable(t, tbl, nil), local: map[string]string{}}
		tables[td.Name] = tf
		if len(tf.all) < 4 {
			t.Fatalf("%s: %d data files, want many (several days, several batches)", td.Name, len(tf.all))
		}
		var paths []string
		for _, f := range tf.all {
			path := filepath.Join(dir, filepath.FromSlash(f.key))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, getObject(t, c, bucket, f.key), 0o644); err != nil {
				t.Fatal(err)
			}
			tf.local[f.key] = path
			paths = append(paths, path)
		}
		tf.src = fmt.Sprintf("(SELECT subject, event_id, CAST(event_time AS TIMESTAMP) AS event_time, CAST(recorded_at AS TIMESTAMP) AS recorded_at, filename FROM %s)",
			parquetSource(paths, ", filename = true"))

		// The snapshot holds exactly the events written, at their times
		// to the microsecond, as DuckDB reads the Parquet logical type.
		rows, err := db.Query("SELECT subject, event_id, CAST(epoch_us(event_time) AS BIGINT) FROM " + tf.src)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for rows.Next() {
			var s, id string
			var us int64
			if err := rows.Scan(&s, &id, &us); err != nil {
				t.Fatal(err)
			}
			k := s + " " + id
			wt, ok := want[td.Name][k]
			switch {
			case got[k]:
				t.Errorf("%s: %s twice in the snapshot", td.Name, k)
			case !ok:
				t.Errorf("%s: %s is in the snapshot, not in the workload", td.Name, k)
			case wt.UnixMicro() != us:
				t.Errorf("%s: %s: event_time %s in the file, %s written", td.Name, k, time.UnixMicro(us).UTC().Format(time.RFC3339Nano), wt.Format(time.RFC3339Nano))
			}
			got[k] = true
		}
		rows.Close()
		if len(got) != len(want[td.Name]) {
			t.Errorf("%s: %d rows in the snapshot, %d events written", td.Name, len(got), len(want[td.Name]))
		}

		// Per file: the partition value is the day of every row's
		// event_time, the record count and the event_time bounds are
		// those of the rows, and the file is in its day's directory.
		byFile := map[string]plannedFile{}
		for _, f := range tf.all {
			byFile[tf.local[f.key]] = f
		}
		rows, err = db.Query("SELECT filename, count(*), CAST(min(CAST(event_time AS DATE)) AS VARCHAR), CAST(max(CAST(event_time AS DATE)) AS VARCHAR), " +
			"CAST(epoch_us(min(event_time)) AS BIGINT), CAST(epoch_us(max(event_time)) AS BIGINT) FROM " + tf.src + " GROUP BY filename")
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for rows.Next() {
			var name, minDay, maxDay string
			var n, lo, hi int64
			if err := rows.Scan(&name, &n, &minDay, &maxDay, &lo, &hi); err != nil {
				t.Fatal(err)
			}
			f, ok := byFile[name]
			if !ok {
				t.Fatalf("%s: DuckDB read file %s, which is not one of the snapshot's", td.Name, name)
			}
			seen++
			day := partitionDay(t, f.file)
			if minDay != day || maxDay != day {
				t.Errorf("%s: %s: partition day %s, its rows' event_time days %s..%s", td.Name, f.key, day, minDay, maxDay)
			}
			if !strings.Contains(f.key, "/data/event_date="+day+"/") {
				t.Errorf("%s: %s: partition day %s, not that day's directory", td.Name, f.key, day)
			}
			if f.file.Count() != n {
				t.Errorf("%s: %s: record count %d in the metadata, %d rows in the file", td.Name, f.key, f.file.Count(), n)
			}
			if l := boundMicros(t, f.file, f.file.LowerBoundValues()[eventTimeID], "lower"); l != lo {
				t.Errorf("%s: %s: event_time lower bound %d µs (%s), the rows' minimum %d µs (%s)", td.Name, f.key,
					l, time.UnixMicro(l).UTC().Format(time.RFC3339Nano), lo, time.UnixMicro(lo).UTC().Format(time.RFC3339Nano))
			}
			if u := boundMicros(t, f.file, f.file.UpperBoundValues()[eventTimeID], "upper"); u != hi {
				t.Errorf("%s: %s: event_time upper bound %d µs (%s), the rows' maximum %d µs (%s)", td.Name, f.key,
					u, time.UnixMicro(u).UTC().Format(time.RFC3339Nano), hi, time.UnixMicro(hi).UTC().Format(time.RFC3339Nano))
			}
		}
		rows.Close()
		if seen != len(tf.all) {
			t.Errorf("%s: DuckDB read rows from %d files, the snapshot has %d", td.Name, seen, len(tf.all))
		}
	}

	// The predicates: Iceberg expression, the same in DuckDB, and the days
	// whose partitions planning may return (nil: any).
	lit := func(tm time.Time) string { return "TIMESTAMP '" + tm.UTC().Format("2006-01-02 15:04:05.999999") + "'" }
	rangeOf := func(col string, from, to time.Time) (iceberg.BooleanExpression, string) {
		r := iceberg.Reference(col)
		return iceberg.NewAnd(iceberg.GreaterThanEqual(r, iceberg.Timestamp(from.UnixMicro())), iceberg.LessThan(r, iceberg.Timestamp(to.UnixMicro()))),
			fmt.Sprintf("%s >= %s AND %s < %s", col, lit(from), col, lit(to))
	}
	daysOf := func(from, to time.Time) []string { // the days of [from, to)
		var out []string
		for d := from.Truncate(24 * time.Hour); d.Before(to); d = d.AddDate(0, 0, 1) {
			out = append(out, d.Format(archiver.DateLayout))
		}
		return out
	}
	cut := day2.Add(10*time.Hour + 17*time.Minute + 3*time.Second + 250*time.Millisecond)
	type predicate struct {
		name   string
		expr   iceberg.BooleanExpression
		where  string
		days   []string // partitions planning may return; nil: any
		narrow bool     // planning must prune files
		empty  bool     // no row matches
		none   bool     // planning returns no file
	}
	var preds []predicate
	add := func(name, col string, from, to time.Time, narrow bool) {
		e, w := rangeOf(col, from, to)
		p := predicate{name: name, expr: e, where: w, narrow: narrow}
		if col == "event_time" {
			p.days = daysOf(from, to)
		}
		preds = append(preds, p)
	}
	add("one day", "event_time", day2, day2.AddDate(0, 0, 1), true)
	add("two days", "event_time", day1, day1.AddDate(0, 0, 2), true)
	add("cut through a day", "event_time", cut, day2.Add(15*time.Hour), true)
	add("crossing midnight", "event_time", day2.Add(22*time.Hour+30*time.Minute), day2.Add(24*time.Hour+75*time.Minute), true)
	add("the first microsecond of a day", "event_time", day2, day2.Add(time.Microsecond), true)
	add("the last microsecond of a day", "event_time", day2.Add(24*time.Hour-time.Microsecond), day2.Add(24*time.Hour), true)
	add("recorded_at", "recorded_at", day2.Add(9*time.Hour), day2.Add(13*time.Hour), false)
	emptyExpr, emptyWhere := rangeOf("event_time", cut, cut)
	noDataExpr, noDataWhere := rangeOf("event_time", day1.AddDate(-5, 0, 0), day1.AddDate(-4, 0, 0))
	preds = append(preds,
		predicate{name: "empty range", expr: emptyExpr, where: emptyWhere, days: []string{day2.Format(archiver.DateLayout)}, narrow: true, empty: true},
		predicate{name: "no data", expr: noDataExpr, where: noDataWhere, narrow: true, empty: true, none: true},
		predicate{name: "equal to a millisecond boundary", expr: iceberg.EqualTo(iceberg.Reference("event_time"), iceberg.Timestamp(cut.UnixMicro())),
			where: "event_time = " + lit(cut), days: []string{day2.Format(archiver.DateLayout)}, narrow: true},
		predicate{name: "after a time, and a subject", expr: iceberg.NewAnd(iceberg.GreaterThan(iceberg.Reference("event_time"), iceberg.Timestamp(cut.UnixMicro())),
			iceberg.EqualTo(iceberg.Reference("subject"), template.Subject)),
			where: "event_time > " + lit(cut) + " AND subject = " + sqlString(template.Subject)},
	)

	for _, p := range preds {
		t.Run(strings.ReplaceAll(p.name, " ", "_"), func(t *testing.T) {
			var total, planned, matched int
			for _, td := range archiver.Tables() {
				tf := tables[td.Name]
				plan := planTable(t, tf.tbl, p.expr)
				got := icebergRows(t, tf.tbl, p.expr)
				wantRows := duckRows(t, db, tf.src, p.where)
				total += len(tf.all)
				planned += len(plan)
				matched += len(wantRows)
				if missing, extra := diffKeys(got, wantRows); len(missing)+len(extra) > 0 {
					t.Errorf("%s: %s: Iceberg returns %d rows, DuckDB over every data file %d: %d missing (e.g. %.3q), %d extra (e.g. %.3q)",
						td.Name, p.where, len(got), len(wantRows), len(missing), missing, len(extra), extra)
				}
				// Planning keeps every file holding a matching row.
				inPlan := map[string]bool{}
				for _, f := range plan {
					inPlan[tf.local[f.key]] = true
				}
				rows, err := db.Query("SELECT DISTINCT filename FROM " + tf.src + " WHERE " + p.where)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var name string
					if err := rows.Scan(&name); err != nil {
						t.Fatal(err)
					}
					if !inPlan[name] {
						t.Errorf("%s: %s: planning pruned %s, which holds matching rows", td.Name, p.where, name)
					}
				}
				rows.Close()
				// Planned files lie in the predicate's days.
				if p.days != nil {
					for _, f := range plan {
						if day := partitionDay(t, f.file); !contains(p.days, day) {
							t.Errorf("%s: %s: planning returned %s of day %s, outside %v", td.Name, p.where, f.key, day, p.days)
						}
					}
				}
			}
			t.Logf("%s: %d rows; %d of %d files planned", p.where, matched, planned, total)
			switch {
			case p.empty && matched != 0:
				t.Errorf("%d rows match an empty range", matched)
			case !p.empty && matched == 0:
				t.Errorf("no row matches: the comparison is vacuous")
			}
			if p.narrow && planned >= total {
				t.Errorf("planning returned %d of %d files: no pruning", planned, total)
			}
			if p.none && planned != 0 {
				t.Errorf("planning returned %d files for a range without data", planned)
			}
		})
	}

	// Time travel: the snapshot before the compaction reads the same rows
	// of messages, from more files.
	tf := tables["messages"]
	all := iceberg.BooleanExpression(iceberg.AlwaysTrue{})
	old, cur := icebergRows(t, tf.tbl, all, table.WithSnapshotID(before)), icebergRows(t, tf.tbl, all)
	if missing, extra := diffKeys(old, cur); len(missing)+len(extra) > 0 {
		t.Errorf("messages: the snapshot before compaction differs: %d rows missing, %d extra", len(missing), len(extra))
	}
	if n := len(planTable(t, tf.tbl, nil, table.WithSnapshotID(before))); n <= len(tf.all) {
		t.Errorf("messages: %d files before compaction, %d after", n, len(tf.all))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

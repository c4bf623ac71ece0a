package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	_ "github.com/marcboeker/go-duckdb" // the independent reader (cgo; test only)

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/queries"
	"github.com/streamfold/streamfold/schema"
)

// This file is the DuckDB harness: an in-memory DuckDB with one view per
// archive table over the data files of the table (the current snapshot's
// files downloaded from the archive, or local files written with
// archiver.Encode), the shims of queries.DuckDBShims, and the figures each
// named query must reproduce, computed from projection items (the
// projector's MemStore in unit tests, DynamoDB Local in the acceptance
// test). The views have the tables' columns only: the Iceberg tables are
// partitioned by day(event_time), hidden, with no event_date column.

// openDuck returns an in-memory DuckDB connection with the shims applied.
// Extension autoloading is off: the machines have no network, and the
// harness uses nothing beyond the bundled parquet and json extensions.
func openDuck(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatalf("duckdb: open: %v", err)
	}
	db.SetMaxOpenConns(1) // one connection: the macros and views live in it
	t.Cleanup(func() { db.Close() })
	stmts := append([]string{
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
	}, queries.DuckDBShims()...)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("duckdb: %s: %v", s, err)
		}
	}
	return db
}

// duckType is the DuckDB type of a column as the views present it. Every
// timestamp column (Iceberg timestamptz, Parquet TIMESTAMP(MICROS, adjusted
// to UTC), read by DuckDB as TIMESTAMP WITH TIME ZONE) is presented as
// TIMESTAMP, its UTC wall time: DuckDB here has no ICU extension, hence no
// time-zone arithmetic, and the queries' results on UTC wall times are
// Athena's on timestamp(6) with time zone in UTC (see the package doc).
var duckType = map[string]string{
	archiver.TypeString:    "VARCHAR",
	archiver.TypeBigint:    "BIGINT",
	archiver.TypeInt:       "INTEGER",
	archiver.TypeDouble:    "DOUBLE",
	archiver.TypeBoolean:   "BOOLEAN",
	archiver.TypeTimestamp: "TIMESTAMP",
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// parquetSource is a DuckDB read_parquet over the given files, with Hive
// partitioning off: the files' paths hold event_date=YYYY-MM-DD
// directories (the Iceberg tables' data layout), which are no column.
func parquetSource(paths []string, extra string) string {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = sqlString(p)
	}
	return fmt.Sprintf("read_parquet([%s], hive_partitioning = false%s)", strings.Join(quoted, ", "), extra)
}

// createViews creates one view per archive table (archiver.Tables()) over
// the given local data files, grouped by table. Each view has exactly the
// table's columns, timestamps as UTC TIMESTAMP. The files' columns must be
// exactly the table's columns, with matching types, the timestamps stored
// as UTC instants (read as TIMESTAMP WITH TIME ZONE); a file with an
// event_date column (the Hive layout before Iceberg) is refused.
func createViews(t testing.TB, db *sql.DB, files map[string][]string) {
	t.Helper()
	for _, td := range archiver.Tables() {
		var sel []string
		paths := files[td.Name]
		if len(paths) == 0 {
			for _, c := range td.Columns {
				sel = append(sel, fmt.Sprintf("CAST(NULL AS %s) AS %s", duckType[c.Type], c.Name))
			}
			mustExec(t, db, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT %s WHERE false", td.Name, strings.Join(sel, ", ")))
			continue
		}
		src := parquetSource(paths, "")
		got := map[string]string{}
		rows, err := db.Query("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + src + ")")
		if err != nil {
			t.Fatalf("duckdb: describe %s: %v", td.Name, err)
		}
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Fatal(err)
			}
			got[name] = typ
		}
		rows.Close()
		if typ, ok := got["event_date"]; ok {
			t.Fatalf("%s: the data files have an event_date column (%s); the Iceberg tables have none (day(event_time) is a hidden partition)", td.Name, typ)
		}
		for _, c := range td.Columns {
			typ, ok := got[c.Name]
			want := duckType[c.Type]
			switch {
			case !ok:
				t.Fatalf("%s: the Parquet files lack column %s (%s)", td.Name, c.Name, c.Type)
			case c.Type == archiver.TypeTimestamp && typ == "TIMESTAMP WITH TIME ZONE":
				// TIMESTAMP(MICROS, adjusted to UTC) reads as TIMESTAMPTZ;
				// the view holds its UTC wall time.
				sel = append(sel, fmt.Sprintf("CAST(%s AS TIMESTAMP) AS %s", c.Name, c.Name))
			case c.Type == archiver.TypeTimestamp:
				t.Fatalf("%s: column %s is %s in the Parquet files, want TIMESTAMP WITH TIME ZONE (Iceberg timestamptz: TIMESTAMP(MICROS) adjusted to UTC)", td.Name, c.Name, typ)
			case typ != want:
				t.Fatalf("%s: column %s is %s in the Parquet files, the table declares %s (%s)", td.Name, c.Name, typ, c.Type, want)
			default:
				sel = append(sel, c.Name)
			}
			delete(got, c.Name)
		}
		if len(got) > 0 {
			t.Fatalf("%s: the Parquet files have columns the table does not declare: %v", td.Name, got)
		}
		mustExec(t, db, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT %s FROM %s", td.Name, strings.Join(sel, ", "), src))
	}
}

func mustExec(t testing.TB, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("duckdb: %s: %v", stmt, err)
	}
}

// row is one result row, by column name. Values are nil, string, int64 or
// float64.
type row map[string]any

// runQuery runs a named query with its from_date and to_date parameters.
func runQuery(t testing.TB, db *sql.DB, q queries.Query, from, to string) (cols []string, out []row) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q.SQL, from, to)
	if err != nil {
		t.Fatalf("%s: %v", q.Name, err)
	}
	defer rows.Close()
	cols, err = rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: scan: %v", q.Name, err)
		}
		r := row{}
		for i, c := range cols {
			r[c] = normalize(t, vals[i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q.Name, err)
	}
	return cols, out
}

func normalize(t testing.TB, v any) any {
	switch x := v.(type) {
	case nil, string, int64, float64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case float32:
		return float64(x)
	case *big.Int: // HUGEINT: DuckDB's sum of integers
		if !x.IsInt64() {
			t.Fatalf("integer result %s does not fit int64", x)
		}
		return x.Int64()
	}
	t.Fatalf("unexpected result type %T (%v)", v, v)
	return nil
}

// projections holds projection items by logical table (schema.Table*).
type projections map[string][]map[string]types.AttributeValue

func str(it map[string]types.AttributeValue, k string) string {
	switch v := it[k].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	return ""
}

// rat returns a number attribute exactly (nil when absent).
func rat(t testing.TB, it map[string]types.AttributeValue, k string) *big.Rat {
	v, ok := it[k].(*types.AttributeValueMemberN)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(v.Value)
	if !ok {
		t.Fatalf("attribute %s = %q is not a number", k, v.Value)
	}
	return r
}

func integer(t testing.TB, it map[string]types.AttributeValue, k string) int64 {
	r := rat(t, it, k)
	if r == nil {
		return 0
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		t.Fatalf("attribute %s = %s is not an int64", k, r.FloatString(6))
	}
	return r.Num().Int64()
}

func ratio(a, b int64) any {
	if b == 0 {
		return nil
	}
	return float64(a) / float64(b)
}

func inRange(date, from, to string) bool { return date >= from && date <= to }

// expectation is what one named query must return, computed from the
// projections: Keys identify a row, Want builds the rows.
type expectation struct {
	Keys []string
	Want func(t testing.TB, p projections, from, to string) []row
}

// expectations holds one expectation per named query. Each reads only
// projection items and counter rows, never events.
var expectations = map[string]expectation{
	// executions items (seed 002), by (date of startDate, agentName).
	"daily_failure_rate_per_agent": {Keys: []string{"metric_date", "agent_name"}, Want: func(t testing.TB, p projections, from, to string) []row {
		by := map[string]row{}
		for _, it := range p[schema.TableExecutions] {
			start := str(it, "startDate")
			if len(start) < 10 || !inRange(start[:10], from, to) {
				continue
			}
			k := start[:10] + "|" + str(it, "agentName")
			r := by[k]
			if r == nil {
				r = row{"metric_date": start[:10], "agent_name": str(it, "agentName"),
					"executions": int64(0), "running": int64(0), "succeeded": int64(0), "failed": int64(0), "timed_out": int64(0), "aborted": int64(0)}
				by[k] = r
			}
			r["executions"] = r["executions"].(int64) + 1
			col := map[string]string{"RUNNING": "running", "SUCCEEDED": "succeeded", "FAILED": "failed", "TIMED_OUT": "timed_out", "ABORTED": "aborted"}[str(it, "status")]
			if col == "" {
				t.Fatalf("execution %s has status %q", str(it, "executionArn"), str(it, "status"))
			}
			r[col] = r[col].(int64) + 1
		}
		var out []row
		for _, r := range by {
			bad := r["failed"].(int64) + r["timed_out"].(int64) + r["aborted"].(int64)
			r["failure_rate"] = ratio(bad, r["executions"].(int64)-r["running"].(int64))
			out = append(out, r)
		}
		return out
	}},
	// workflow-jobs items (seed 003): overall_queue_duration_in_ms by
	// repo_full_name, for jobs created in the range; nearest-rank
	// percentiles.
	"p95_job_queue_time_per_repository": {Keys: []string{"repository"}, Want: func(t testing.TB, p projections, from, to string) []row {
		by := map[string][]int64{}
		for _, it := range p[schema.TableWorkflowJobs] {
			created, repo := str(it, "created_at"), str(it, "repo_full_name")
			if _, ok := it["overall_queue_duration_in_ms"]; !ok || repo == "" || len(created) < 10 || !inRange(created[:10], from, to) {
				continue
			}
			by[repo] = append(by[repo], integer(t, it, "overall_queue_duration_in_ms"))
		}
		var out []row
		for repo, v := range by {
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
			n := int64(len(v))
			rank := func(pct int64) int64 { return v[max(1, (n*pct+99)/100)-1] } // ceil(n*pct/100)-th smallest
			out = append(out, row{"repository": repo, "jobs": n, "p50_queue_ms": rank(50), "p95_queue_ms": rank(95), "max_queue_ms": v[n-1]})
		}
		return out
	}},
	// workflows daily metrics rows (seed 001), pk = date, sk =
	// metrics-<workflowType>; averages from the counters, as DeriveRow
	// defines them.
	"sf_vs_ldf_cost_per_execution": {Keys: []string{"metric_date", "workflow_type"}, Want: func(t testing.TB, p projections, from, to string) []row {
		var out []row
		for _, it := range p[schema.TableWorkflows] {
			if str(it, "entityType") != "metrics" || !inRange(str(it, "date"), from, to) {
				continue
			}
			n := integer(t, it, "executionCount")
			if n == 0 {
				continue // a row every execution moved away from
			}
			total := rat(t, it, "totalCost")
			if total == nil {
				total = new(big.Rat)
			}
			totalF, _ := total.Float64()
			avgF, _ := new(big.Rat).Quo(total, big.NewRat(n, 1)).Float64()
			r := row{"metric_date": str(it, "date"), "workflow_type": str(it, "workflowType"),
				"executions": n, "succeeded": integer(t, it, "successCount"), "failed": integer(t, it, "failureCount"),
				"total_cost_usd": totalF, "avg_cost_per_execution": avgF,
				"avg_duration_ms": ratio(integer(t, it, "durationSumMs"), integer(t, it, "durationCount"))}
			// The row's own derived averages (rounded by DeriveRow: 6
			// places for cost, whole ms for duration) agree too.
			if stored := rat(t, it, "avgCostPerExecution"); stored != nil {
				if s, _ := stored.Float64(); math.Abs(s-avgF) > 5e-7+1e-12 {
					t.Errorf("%s %s: stored avgCostPerExecution %v, counters give %v", r["metric_date"], r["workflow_type"], s, avgF)
				}
			}
			if stored, avg := rat(t, it, "avgDurationMs"), r["avg_duration_ms"]; stored != nil && avg != nil {
				if s, _ := stored.Float64(); math.Abs(s-avg.(float64)) > 0.5+1e-9 {
					t.Errorf("%s %s: stored avgDurationMs %v, counters give %v", r["metric_date"], r["workflow_type"], s, avg)
				}
			}
			out = append(out, r)
		}
		return out
	}},
	// metrics rows (seed 004 counts) scope messages/<stage>, by date.
	"message_success_rate_per_stage": {Keys: []string{"metric_date", "stage"}, Want: func(t testing.TB, p projections, from, to string) []row {
		var out []row
		for _, it := range p[schema.TableMetrics] {
			stage, ok := strings.CutPrefix(str(it, "scope"), "messages/")
			if !ok || !inRange(str(it, "date"), from, to) {
				continue
			}
			total := integer(t, it, "total")
			if total == 0 {
				continue
			}
			r := row{"metric_date": str(it, "date"), "stage": stage, "messages": total}
			for _, c := range []string{"created", "queued", "processing", "completed", "failed"} {
				r[c] = integer(t, it, c)
			}
			r["success_rate"] = ratio(r["completed"].(int64), r["completed"].(int64)+r["failed"].(int64))
			out = append(out, r)
		}
		return out
	}},
}

// compareRows fails the test for every difference between a query's rows
// and the expected ones: a missing or extra row, a column the other side
// lacks, or a value that differs (integers and strings exactly, floats
// within 1e-9 relative). It returns the number of rows compared.
func compareRows(t testing.TB, name string, keys, cols []string, got, want []row) int {
	t.Helper()
	keyOf := func(r row) string {
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprint(r[k])
		}
		return strings.Join(parts, " | ")
	}
	byKey := map[string]row{}
	for _, r := range got {
		k := keyOf(r)
		if _, dup := byKey[k]; dup {
			t.Errorf("%s: two result rows for %s", name, k)
		}
		byKey[k] = r
	}
	wantCols := map[string]bool{}
	for _, w := range want {
		for c := range w {
			wantCols[c] = true
		}
	}
	if len(want) > 0 {
		for _, c := range cols {
			if !wantCols[c] {
				t.Errorf("%s: result column %s has no expected value (the expectation is incomplete)", name, c)
			}
			delete(wantCols, c)
		}
		for c := range wantCols {
			t.Errorf("%s: expected column %s is not in the result", name, c)
		}
	}
	for _, w := range want {
		k := keyOf(w)
		g, ok := byKey[k]
		if !ok {
			t.Errorf("%s: no result row for %s (the projections have %v)", name, k, w)
			continue
		}
		delete(byKey, k)
		for c, wv := range w {
			if !sameValue(g[c], wv) {
				t.Errorf("%s: %s: %s = %v (%T), projections say %v (%T)", name, k, c, g[c], g[c], wv, wv)
			}
		}
	}
	for k, g := range byKey {
		t.Errorf("%s: result row %s is not in the projections: %v", name, k, g)
	}
	return len(want)
}

func sameValue(got, want any) bool {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		if !ok {
			return false
		}
		if g == w {
			return true
		}
		return math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w))
	default:
		return got == want
	}
}

// checkAll runs every named query over the views for [from, to] and
// compares it with the projections. It returns the rows compared per query.
func checkAll(t testing.TB, db *sql.DB, p projections, from, to string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, q := range queries.All() {
		exp, ok := expectations[q.Name]
		if !ok {
			t.Fatalf("query %s has no expectation: add one to expectations", q.Name)
		}
		cols, got := runQuery(t, db, q, from, to)
		n[q.Name] = compareRows(t, q.Name+" ["+from+".."+to+"]", exp.Keys, cols, got, exp.Want(t, p, from, to))
	}
	return n
}

// localFiles lists the Parquet files under dir by table (the first path
// element): dir/<table>/data/event_date=D/<file>.parquet, as the archive's
// Iceberg tables lay out their data files under the prefix.
func localFiles(t testing.TB, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		table, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		out[table] = append(out[table], path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out {
		sort.Strings(f)
	}
	return out
}

// seq formats a fake stream sequence number.
func seq(i int) string { return strconv.FormatInt(int64(1e15)+int64(i), 10) }

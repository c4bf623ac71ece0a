// Package queries holds streamfold's named analyst queries over the archive's
// Apache Iceberg tables: Athena (Trino, engine 3) SQL, one file per query,
// embedded in the binary. Terraform creates one aws_athena_named_query per
// file in the archive's Glue database, and the acceptance tests run the same
// text in DuckDB over the data files of the tables' current snapshots and
// compare the answers with the projections.
//
// # Contract
//
// Each file, <name>.sql, starts with a header of "--" comment lines:
//
//	-- <description: what the query answers, one paragraph>
//	--
//	-- Parameters:
//	--   <name>  <what it is>
//	--
//	-- Agrees with: <the projection whose figures it must reproduce, and how>
//
// followed by one SELECT statement without a trailing semicolon. Parameters
// are positional "?" placeholders (Athena execution parameters, DuckDB and
// database/sql arguments), in the order the header lists them; each
// placeholder appears exactly once. Every query takes from_date and to_date
// (quoted 'YYYY-MM-DD' literals, inclusive; in Athena pass them as
// execution parameters, e.g. EXECUTE q USING '2026-11-19', '2026-11-22'),
// reports the entities whose date (of start, creation) lies in that range,
// and reads only the events with
//
//	event_time >= from_date - INTERVAL '1' DAY AND event_time < to_date + INTERVAL '2' DAY
//
// that is the UTC days from_date - 1 to to_date + 1. The tables are
// partitioned by day(event_time) (hidden partitioning: there is no date
// column), so Athena turns that filter into the partitions of those days and,
// through the files' event_time bounds, into the files to read. The
// parameters enter once, in a one-row params CTE; the bounds are constants
// derived from them, which the engine folds into the filter it pushes down
// to the Iceberg scan. The day before lets a query see where an entity began
// (one that began before from_date is left out rather than half counted);
// the day after lets it see late terminal events of the entities of to_date.
// An entity whose events span more than that is folded from the events
// inside the window only.
//
// The queries reference the archive's four tables unqualified
// (agent_executions, album_workflow, github_jobs, messages; the database is
// the named query's). An event table holds every event of an entity, in any
// order, each event once, so every query first folds each entity (subject)
// to one row with the same rules as the projector: status by precedence,
// ties broken by the later (event_time, event_id); constants as the least
// non-empty value; dates from the earliest relevant event.
//
// # Generated from the schema registry
//
// A query that names event types, statuses or their ranks is rendered from
// <name>.sql.tmpl (text/template) with lookups in the schema registry (the
// types of an aggregate, the type that moves it to a status, its lifecycle,
// terminal statuses, ranks, subject shapes): a new event type, status or
// rank reaches the SQL by regenerating, not by editing it. The .sql files
// are the product (embedded here, the named queries in Athena) and are
// checked in; render_test.go's TestQueriesRendered fails when one differs
// from its template's rendering, or when a query without a template names a
// registered event type. Refresh them with
//
//	go test ./archiver/queries -run TestQueriesRendered -update
//
// # Times
//
// Athena reads the tables' timestamp columns (Iceberg timestamptz, Parquet
// TIMESTAMP(MICROS, adjusted to UTC)) as timestamp(6) with time zone, in
// UTC. The queries compare them with DATE bounds (Trino coerces a DATE to
// timestamp with time zone at midnight of the session time zone, UTC in
// Athena), take their date with CAST(... AS DATE) (the UTC date), subtract
// them with date_diff and shift them by intervals: operations whose results
// are those of the same UTC wall times without a zone. DuckDB without its
// ICU extension (the test machines have none) has no time-zone arithmetic,
// so a DuckDB reader must read every timestamp column as TIMESTAMP, the UTC
// wall time (CAST(col AS TIMESTAMP) of the TIMESTAMPTZ DuckDB reads), which
// gives the same answers. The archive keeps microseconds; the projector
// orders events of one subject by their full-precision time, so the orders
// agree unless two events of one subject are less than a microsecond apart
// (then they are ordered by event_id here).
//
// # Portability
//
// The SQL uses only functions that Trino (Athena engine 3) and DuckDB 1.1
// both have, with the same meaning (CAST, CASE, COALESCE, NULLIF, min, max,
// count, sum, row_number() OVER, date_diff('millisecond', a, b), floor,
// regexp_extract, split_part, substr, date and interval arithmetic), except
// the one DuckDBShims defines as a DuckDB macro: approx_percentile(x, p) is,
// in DuckDB, the exact nearest-rank percentile, the ceil(p*n)-th smallest of
// the n non-null values (p a decimal literal, so p*n is exact). Athena's
// approx_percentile is an approximation of the same figure. In DuckDB
// DATE +/- INTERVAL is a TIMESTAMP (in Trino a DATE); compared with a
// timestamp column both mean midnight UTC of that day.
//
// The package is pure (no cgo, no I/O beyond the embedded files) and its
// values are immutable; it is safe for concurrent use.
package queries

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Query is one named query.
type Query struct {
	// Name is the file name without ".sql", e.g. "daily_failure_rate_per_agent".
	Name string
	// Description is the header's first paragraph, on one line.
	Description string
	// Agrees is the header's "Agrees with:" paragraph, on one line: which
	// projection the query reproduces.
	Agrees string
	// Params lists the "?" placeholders in order.
	Params []Param
	// SQL is the whole file, header comment included, as Athena stores it.
	SQL string
}

// Param is one positional parameter.
type Param struct {
	Name, Doc string
}

// ErrHeader is wrapped by Parse's errors about a malformed header.
var ErrHeader = errors.New("queries: malformed header")

// HeaderError says what is wrong with one query file's header or body.
type HeaderError struct {
	File string
	Rule string
}

func (e *HeaderError) Error() string { return "queries: " + e.File + ": " + e.Rule }

// Unwrap makes a HeaderError match ErrHeader.
func (e *HeaderError) Unwrap() error { return ErrHeader }

var (
	nameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	paramRE = regexp.MustCompile(`^--   ([a-z][a-z0-9_]*)  +(\S.*)$`)
)

// Parse parses one query file: file is its name ("x.sql"), text its
// content. It fails with a *HeaderError naming the rule that is broken.
func Parse(file, text string) (Query, error) {
	fail := func(format string, args ...any) (Query, error) {
		return Query{}, &HeaderError{File: file, Rule: fmt.Sprintf(format, args...)}
	}
	name, ok := strings.CutSuffix(file, ".sql")
	if !ok || !nameRE.MatchString(name) {
		return fail("file name: must be lower_snake_case ending in .sql")
	}
	q := Query{Name: name, SQL: text}
	lines := strings.Split(text, "\n")
	var header []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "--") {
			break
		}
		header = append(header, strings.TrimRight(l, " \t\r"))
	}
	// Paragraphs of the header, split at bare "--" lines.
	var paras [][]string
	var cur []string
	for _, l := range header {
		if l == "--" {
			if len(cur) > 0 {
				paras = append(paras, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		paras = append(paras, cur)
	}
	if len(paras) < 3 {
		return fail("header: must have a description, a Parameters: list and an Agrees with: paragraph")
	}
	q.Description = joinComment(paras[0])
	if q.Description == "" {
		return fail("header: the first paragraph (the description) is empty")
	}
	if paras[1][0] != "-- Parameters:" {
		return fail(`header: the second paragraph must start with "-- Parameters:"`)
	}
	for _, l := range paras[1][1:] {
		m := paramRE.FindStringSubmatch(l)
		if m == nil {
			return fail("header: parameter line %q: must be \"--   name  description\"", l)
		}
		q.Params = append(q.Params, Param{Name: m[1], Doc: m[2]})
	}
	agrees, ok := strings.CutPrefix(paras[2][0], "-- Agrees with: ")
	if !ok {
		return fail(`header: the third paragraph must start with "-- Agrees with: "`)
	}
	q.Agrees = joinComment(append([]string{"-- " + agrees}, paras[2][1:]...))

	body := stripComments(text)
	if strings.TrimSpace(body) == "" {
		return fail("body: no SQL after the header")
	}
	if strings.HasSuffix(strings.TrimSpace(body), ";") {
		return fail("body: must not end with a semicolon (Athena runs one statement)")
	}
	if n := strings.Count(body, "?"); n != len(q.Params) {
		return fail("body: has %d ? placeholders, the header lists %d parameters", n, len(q.Params))
	}
	return q, nil
}

// joinComment joins comment lines into one line of text.
func joinComment(lines []string) string {
	parts := make([]string, 0, len(lines))
	for _, l := range lines {
		parts = append(parts, strings.TrimSpace(strings.TrimPrefix(l, "--")))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// stripComments removes "--" comments and the contents of string literals
// (so a "?" or "--" inside quotes is not counted), keeping the rest.
func stripComments(sql string) string {
	var b strings.Builder
	inStr := false
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case inStr:
			if c == '\'' {
				if i+1 < len(sql) && sql[i+1] == '\'' {
					i++
					continue
				}
				inStr = false
				b.WriteByte(c)
			}
		case c == '\'':
			inStr = true
			b.WriteByte(c)
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// All returns every named query, sorted by name. The files are embedded at
// build time and their headers are checked by the package's tests, so a
// malformed file is a programming error: All panics on it.
func All() []Query {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	out := make([]Query, 0, len(names))
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			panic(err)
		}
		q, err := Parse(n, string(b))
		if err != nil {
			panic(err)
		}
		out = append(out, q)
	}
	return out
}

// ByName returns the query of that name and whether it exists.
func ByName(name string) (Query, bool) {
	for _, q := range All() {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}

// DuckDBShims returns the statements that make DuckDB understand the Athena
// functions the queries use that DuckDB lacks (see the package
// documentation). Run them once per DuckDB connection before the queries.
func DuckDBShims() []string {
	return []string{
		// Athena/Trino approx_percentile(x, p), exactly: the nearest-rank
		// percentile, the ceil(p*n)-th smallest non-null value. DuckDB's
		// quantile_disc needs a constant p, which a macro cannot promise.
		`CREATE OR REPLACE MACRO approx_percentile(x, p) AS
		   list_sort(list(x), 'ASC', 'NULLS LAST')[CAST(greatest(1, ceil(count(x) * p)) AS BIGINT)]`,
	}
}

package queries_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/archiver/queries"
)

// The four queries issue 4 asks for, by file name.
var wantNames = []string{
	"daily_failure_rate_per_agent",
	"message_success_rate_per_stage",
	"p95_job_queue_time_per_repository",
	"sf_vs_ldf_cost_per_execution",
}

// archiveTables are the archive's tables (archiver.Tables()); a query may
// name no other.
var archiveTables = map[string]bool{"agent_executions": true, "album_workflow": true, "github_jobs": true, "messages": true}

func TestAll(t *testing.T) {
	all := queries.All()
	var names []string
	for _, q := range all {
		names = append(names, q.Name)
	}
	if strings.Join(names, ",") != strings.Join(wantNames, ",") {
		t.Fatalf("All() = %v, want %v", names, wantNames)
	}
	fromRE := regexp.MustCompile(`(?i)\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_.]*)`)
	for _, q := range all {
		t.Run(q.Name, func(t *testing.T) {
			// Athena's limits on a named query: description 1-1024
			// characters, query 1-262144 bytes.
			if n := len(q.Description); n == 0 || n > 1024 {
				t.Errorf("description is %d characters, want 1-1024", n)
			}
			if len(q.SQL) > 262144 {
				t.Errorf("SQL is %d bytes, Athena takes at most 262144", len(q.SQL))
			}
			if q.Agrees == "" {
				t.Error("no Agrees with: paragraph")
			}
			if len(q.Params) != 2 || q.Params[0].Name != "from_date" || q.Params[1].Name != "to_date" {
				t.Errorf("params = %+v, want from_date, to_date", q.Params)
			}
			// Every relation is one of the archive tables or a CTE of the
			// query, unqualified (the named query's database applies).
			var body []string
			for _, l := range strings.Split(q.SQL, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "--") {
					body = append(body, l)
				}
			}
			sql := strings.Join(body, "\n")
			ctes := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^(?:WITH\s+|,\s*|)([a-z_][a-z0-9_]*) AS \($`).FindAllStringSubmatch(sql, -1) {
				ctes[m[1]] = true
			}
			used := map[string]bool{}
			for _, m := range fromRE.FindAllStringSubmatch(sql, -1) {
				rel := m[1]
				switch {
				case strings.Contains(rel, "."):
					t.Errorf("relation %q is qualified; the named query's database must apply", rel)
				case archiveTables[rel]:
					used[rel] = true
				case !ctes[rel]:
					t.Errorf("relation %q is neither an archive table nor a CTE (CTEs %v)", rel, ctes)
				}
			}
			if len(used) == 0 {
				t.Error("reads no archive table")
			}
			// Partition pruning: every read of an archive table (aliased
			// e) is filtered on event_time, from midnight UTC of the day
			// before from_date to midnight after the day after to_date
			// (the day(event_time) partitions from_date - 1 to to_date +
			// 1); there is no event_date column any more.
			reads := regexp.MustCompile(`FROM (agent_executions|album_workflow|github_jobs|messages) e\n  CROSS JOIN params p\n`).FindAllString(sql, -1)
			const window = "  WHERE e.event_time >= p.from_date - INTERVAL '1' DAY\n    AND e.event_time < p.to_date + INTERVAL '2' DAY\n"
			if filters := strings.Count(sql, window); len(reads) == 0 || filters != len(reads) {
				t.Errorf("%d reads of archive tables, %d filters on e.event_time (want %q after each)", len(reads), filters, window)
			}
			if strings.Contains(q.SQL, "event_date") {
				t.Error("mentions event_date: the Iceberg tables have no such column (filter on event_time)")
			}
			if !strings.Contains(q.SQL, "WITH params AS (\n  SELECT CAST(? AS DATE) AS from_date, CAST(? AS DATE) AS to_date\n)") {
				t.Error("the parameters must enter once, as DATEs, in the params CTE")
			}
			// Portability: only functions Athena (Trino) and DuckDB both
			// have, or that queries.DuckDBShims defines.
			for _, m := range regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*\(`).FindAllStringSubmatch(sql, -1) {
				if f := strings.ToLower(m[1]); !portable[f] && !sqlKeywords[f] && !ctes[f] {
					t.Errorf("function %s is not known to be portable between Athena and DuckDB", m[1])
				}
			}
		})
	}
}

// portable lists the functions both engines have with the same meaning
// (checked by the DuckDB tests for DuckDB; by their Trino documentation
// for Athena), plus the shims.
var portable = map[string]bool{
	"cast": true, "coalesce": true, "nullif": true, "count": true, "sum": true, "min": true, "max": true,
	"row_number": true, "date_diff": true, "floor": true, "regexp_extract": true, "split_part": true, "substr": true,
	"approx_percentile": true, // shim
}

// sqlKeywords are words that precede a parenthesis without being functions.
var sqlKeywords = map[string]bool{"as": true, "in": true, "over": true, "and": true, "or": true, "from": true, "join": true, "on": true, "select": true, "with": true}

func TestByName(t *testing.T) {
	q, ok := queries.ByName("daily_failure_rate_per_agent")
	if !ok || !strings.Contains(q.SQL, "agent_executions") {
		t.Fatalf("ByName(daily_failure_rate_per_agent) = %v, %v", q.Name, ok)
	}
	if _, ok := queries.ByName("nope"); ok {
		t.Error("ByName(nope) found a query")
	}
}

func TestParse(t *testing.T) {
	const good = "-- What it answers,\n-- on two lines.\n--\n-- Parameters:\n--   from_date  first day\n--   to_date    last day\n--\n" +
		"-- Agrees with: the metrics table,\n-- row by row.\nSELECT 1 FROM messages WHERE event_time >= CAST(? AS DATE) AND event_time < CAST(? AS DATE)\n"
	q, err := queries.Parse("x_y.sql", good)
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != "x_y" || q.Description != "What it answers, on two lines." || q.Agrees != "the metrics table, row by row." ||
		len(q.Params) != 2 || q.Params[1] != (queries.Param{Name: "to_date", Doc: "last day"}) || q.SQL != good {
		t.Errorf("Parse = %+v", q)
	}

	cases := []struct {
		name, file, text, rule string
	}{
		{"bad file name", "X.sql", good, "file name: must be lower_snake_case ending in .sql"},
		{"not .sql", "x.txt", good, "file name: must be lower_snake_case ending in .sql"},
		{"no header", "x.sql", "SELECT 1", "header: must have a description, a Parameters: list and an Agrees with: paragraph"},
		{"parameters missing", "x.sql", "-- d\n--\n-- Params:\n--\n-- Agrees with: x\nSELECT 1", `header: the second paragraph must start with "-- Parameters:"`},
		{"bad parameter line", "x.sql", "-- d\n--\n-- Parameters:\n-- from_date first\n--\n-- Agrees with: x\nSELECT ?", `header: parameter line "-- from_date first": must be "--   name  description"`},
		{"agrees missing", "x.sql", "-- d\n--\n-- Parameters:\n--\n-- Matches: x\nSELECT 1", `header: the third paragraph must start with "-- Agrees with: "`},
		{"no body", "x.sql", "-- d\n--\n-- Parameters:\n--\n-- Agrees with: x\n", "body: no SQL after the header"},
		{"semicolon", "x.sql", "-- d\n--\n-- Parameters:\n--\n-- Agrees with: x\nSELECT 1;\n", "body: must not end with a semicolon (Athena runs one statement)"},
		{"placeholders", "x.sql", "-- d\n--\n-- Parameters:\n--   a  the a\n--\n-- Agrees with: x\nSELECT ?, ?", "body: has 2 ? placeholders, the header lists 1 parameters"},
		{"placeholder in a string or comment does not count", "x.sql", "-- d\n--\n-- Parameters:\n--   a  the a\n--\n-- Agrees with: x\nSELECT ?, '?', 'it''s ?' -- why?\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := queries.Parse(c.file, c.text)
			if c.rule == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			var he *queries.HeaderError
			if !errors.As(err, &he) || !errors.Is(err, queries.ErrHeader) {
				t.Fatalf("Parse error = %v, want a *HeaderError", err)
			}
			if he.File != c.file || he.Rule != c.rule {
				t.Errorf("Parse error = %q, want rule %q", err, c.rule)
			}
		})
	}
}

func TestDuckDBShims(t *testing.T) {
	shims := queries.DuckDBShims()
	for _, fn := range []string{"approx_percentile"} {
		found := false
		for _, s := range shims {
			found = found || strings.Contains(s, "MACRO "+fn+"(")
		}
		if !found {
			t.Errorf("no shim defines %s", fn)
		}
	}
}

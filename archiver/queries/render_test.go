package queries_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/streamfold/streamfold/schema"
)

// The queries' event types, status mappings and ranks come from the schema
// registry: each <name>.sql that names any is rendered from <name>.sql.tmpl
// (text/template with sqlFuncs and sqlData), and TestQueriesRendered fails
// when a checked-in .sql differs from its rendering. Refresh them with
//
//	go test ./archiver/queries -run TestQueriesRendered -update
//
// and review the diff. The .sql files stay the product (embedded, named
// queries in Athena); the templates are their source.

// sqlData are the schema constants the templates name that no registry
// lookup gives (a type picked for what its payload carries).
var sqlData = map[string]any{
	"AggregateAgentExecution":   schema.AggregateAgentExecution,
	"AggregateAlbumExecution":   schema.AggregateAlbumExecution,
	"AggregateJob":              schema.AggregateJob,
	"AggregateMessage":          schema.AggregateMessage,
	"ExecutionSucceeded":        schema.ExecutionSucceeded,
	"TypeAlbumExecutionStarted": schema.TypeAlbumExecutionStarted,
	"WorkflowJobTypePrefix":     schema.WorkflowJobTypePrefix,
}

// aggregateTypes returns the registered event types of an aggregate kind,
// in registry order.
func aggregateTypes(kind string) ([]schema.EventType, error) {
	if _, ok := schema.AggregateOf(kind); !ok {
		return nil, fmt.Errorf("no aggregate %q in the registry", kind)
	}
	var out []schema.EventType
	for _, d := range schema.Domains() {
		for _, t := range d.Types {
			if t.Aggregate == kind {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

func lifecycle(kind string) (schema.Lifecycle, error) {
	a, ok := schema.AggregateOf(kind)
	if !ok || len(a.Lifecycle) == 0 {
		return nil, fmt.Errorf("no aggregate %q with a lifecycle in the registry", kind)
	}
	return a.Lifecycle, nil
}

func rankOf(kind, status string) (int, error) {
	l, err := lifecycle(kind)
	if err != nil {
		return 0, err
	}
	r, ok := l.Rank(status)
	if !ok {
		return 0, fmt.Errorf("aggregate %s has no status %q (lifecycle %v)", kind, status, l.Names())
	}
	return r, nil
}

// sqlQuote is a SQL string literal.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlFuncs are the template functions: registry lookups (each fails the
// rendering when the registry lacks what a query names) and SQL spelling.
var sqlFuncs = template.FuncMap{
	"q": sqlQuote,
	// list: 'a', 'b', 'c'.
	"list": func(ss []string) (string, error) {
		if len(ss) == 0 {
			return "", fmt.Errorf("empty list")
		}
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = sqlQuote(s)
		}
		return strings.Join(q, ", "), nil
	},
	"lower": strings.ToLower,
	// types: the event types of an aggregate kind.
	"types": func(kind string) ([]string, error) {
		ts, err := aggregateTypes(kind)
		var out []string
		for _, t := range ts {
			out = append(out, t.Type)
		}
		return out, err
	},
	// typesWithPrefix: those of them whose name starts with prefix.
	"typesWithPrefix": func(kind, prefix string) ([]string, error) {
		ts, err := aggregateTypes(kind)
		var out []string
		for _, t := range ts {
			if strings.HasPrefix(t.Type, prefix) {
				out = append(out, t.Type)
			}
		}
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("aggregate %s has no event type %s*", kind, prefix)
		}
		return out, err
	},
	// only: the names of list that are also in of (list's order).
	"only": func(list, of []string) []string {
		var out []string
		for _, s := range list {
			if slices.Contains(of, s) {
				out = append(out, s)
			}
		}
		return out
	},
	// typesTo: the event types that move an aggregate to one of statuses.
	"typesTo": func(kind string, statuses []string) ([]string, error) {
		ts, err := aggregateTypes(kind)
		var out []string
		for _, t := range ts {
			if t.Status != "" && slices.Contains(statuses, t.Status) {
				out = append(out, t.Type)
			}
		}
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("no event type moves aggregate %s to %v", kind, statuses)
		}
		return out, err
	},
	// typeTo: the one event type that moves an aggregate to status.
	"typeTo": func(kind, status string) (string, error) {
		ts, err := aggregateTypes(kind)
		var out []string
		for _, t := range ts {
			if t.Status == status {
				out = append(out, t.Type)
			}
		}
		if err == nil && len(out) != 1 {
			err = fmt.Errorf("aggregate %s: %d event types move it to %q (%v), want one", kind, len(out), status, out)
		}
		return strings.Join(out, ""), err
	},
	// status: a status name, checked against the lifecycle.
	"status": func(kind, status string) (string, error) {
		_, err := rankOf(kind, status)
		return status, err
	},
	"statuses": func(kind string) ([]string, error) {
		l, err := lifecycle(kind)
		return l.Names(), err
	},
	// statusesFrom: the statuses ranked at least as high as status.
	"statusesFrom": func(kind, status string) ([]string, error) {
		r, err := rankOf(kind, status)
		if err != nil {
			return nil, err
		}
		l, _ := lifecycle(kind)
		var out []string
		for _, s := range l {
			if s.Rank >= r {
				out = append(out, s.Name)
			}
		}
		return out, nil
	},
	"terminal": func(kind string) ([]string, error) {
		l, err := lifecycle(kind)
		var out []string
		for _, s := range l {
			if l.Terminal(s.Name) {
				out = append(out, s.Name)
			}
		}
		return out, err
	},
	"without": func(list []string, drop ...string) []string {
		var out []string
		for _, s := range list {
			if !slices.Contains(drop, s) {
				out = append(out, s)
			}
		}
		return out
	},
	// precedence: the lifecycle as the projector orders it, e.g.
	// "created < queued < processing < completed = failed".
	"precedence": func(kind string) (string, error) {
		l, err := lifecycle(kind)
		var b strings.Builder
		for i, s := range l {
			if i > 0 {
				if s.Rank == l[i-1].Rank {
					b.WriteString(" = ")
				} else {
					b.WriteString(" < ")
				}
			}
			b.WriteString(s.Name)
		}
		return b.String(), err
	},
	// typeRanks: CASE arms mapping each event type with a status to its
	// status's rank, one per line after indent.
	"typeRanks": func(kind, indent string) (string, error) {
		return typeCase(kind, indent, func(t schema.EventType, rank int) string { return fmt.Sprint(rank) })
	},
	// typeStatuses: CASE arms mapping each event type with a status to it.
	"typeStatuses": func(kind, indent string) (string, error) {
		return typeCase(kind, indent, func(t schema.EventType, _ int) string { return sqlQuote(t.Status) })
	},
	// statusRanks: CASE arms mapping each status to its rank.
	"statusRanks": func(kind, indent string) (string, error) {
		l, err := lifecycle(kind)
		var arms []string
		for _, s := range l {
			arms = append(arms, fmt.Sprintf("WHEN %s THEN %d", sqlQuote(s.Name), s.Rank))
		}
		return strings.Join(arms, "\n"+indent), err
	},
	// subjectLike: the aggregate's subject shape as a LIKE pattern
	// ("github/<installation>/job/<job id>" -> 'github/%/job/%').
	"subjectLike": func(kind string) (string, error) {
		a, ok := schema.AggregateOf(kind)
		if !ok {
			return "", fmt.Errorf("no aggregate %q in the registry", kind)
		}
		return sqlQuote(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(a.Subject, "%")), nil
	},
}

func typeCase(kind, indent string, then func(schema.EventType, int) string) (string, error) {
	ts, err := aggregateTypes(kind)
	if err != nil {
		return "", err
	}
	var arms []string
	for _, t := range ts {
		if t.Status == "" {
			continue
		}
		r, err := rankOf(kind, t.Status)
		if err != nil {
			return "", err
		}
		arms = append(arms, fmt.Sprintf("WHEN %s THEN %s", sqlQuote(t.Type), then(t, r)))
	}
	if len(arms) == 0 {
		return "", fmt.Errorf("aggregate %s has no event type with a status", kind)
	}
	return strings.Join(arms, "\n"+indent), nil
}

// renderSQL renders one template.
func renderSQL(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(filepath.Base(path)).Funcs(sqlFuncs).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, sqlData); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// registryNames are the event types and statuses of the registry that a
// query would hard-code.
func registryNames() []string {
	var out []string
	for _, d := range schema.Domains() {
		for _, t := range d.Types {
			out = append(out, t.Type)
		}
	}
	return out
}

// TestQueriesRendered: every <name>.sql.tmpl renders to <name>.sql as
// checked in, and no .sql without a template names a registered event type
// (it would be hard-coded, not generated).
func TestQueriesRendered(t *testing.T) {
	tmpls, err := filepath.Glob("*.sql.tmpl")
	if err != nil || len(tmpls) == 0 {
		t.Fatalf("no *.sql.tmpl (%v)", err)
	}
	for _, tp := range tmpls {
		out := strings.TrimSuffix(tp, ".tmpl")
		got, err := renderSQL(tp)
		if err != nil {
			t.Errorf("%s: %v", tp, err)
			continue
		}
		if *update {
			if err := os.WriteFile(out, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(out)
		if err != nil {
			t.Errorf("%v (run go test ./archiver/queries -run TestQueriesRendered -update)", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the rendering of %s (the schema registry changed, or the .sql was edited by hand): edit the template, run go test ./archiver/queries -run TestQueriesRendered -update and review the diff", out, tp)
		}
	}
	sqls, _ := filepath.Glob("*.sql")
	for _, s := range sqls {
		if slices.Contains(tmpls, s+".tmpl") {
			continue
		}
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range registryNames() {
			if strings.Contains(string(b), sqlQuote(n)) {
				t.Errorf("%s hard-codes the event type %s: render it from a %s.tmpl", s, n, s)
			}
		}
	}
}

// TestQueriesRenderFailsOnUnknownNames: a template naming a status or
// aggregate the registry lacks does not render.
func TestQueriesRenderFailsOnUnknownNames(t *testing.T) {
	for _, src := range []string{
		`{{status .AggregateMessage "retried"}}`,
		`{{typeTo .AggregateMessage "retried"}}`,
		`{{list (types "no-such-aggregate")}}`,
		`{{typeTo .AggregateAlbumExecution "running"}}`, // two types move it to running
	} {
		tmpl := template.Must(template.New("t").Funcs(sqlFuncs).Parse(src))
		if err := tmpl.Execute(&bytes.Buffer{}, sqlData); err == nil {
			t.Errorf("%s rendered", src)
		}
	}
}

package query

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestPatternTable: names, routes and flags are unique; every wildcard of a
// route is the positional argument or a parameter, and the positional
// argument is a wildcard.
func TestPatternTable(t *testing.T) {
	wildcard := regexp.MustCompile(`\{([^}]+)\}`)
	names, routes := map[string]bool{}, map[string]bool{}
	for _, p := range Patterns() {
		if names[p.Name] || routes[p.Route] {
			t.Errorf("%s: duplicate name or route %s", p.Name, p.Route)
		}
		names[p.Name], routes[p.Route] = true, true
		if p.Run == nil || !strings.HasPrefix(p.Route, "/api/") {
			t.Errorf("%s: no Run, or route %q not under /api/", p.Name, p.Route)
		}
		if !strings.HasSuffix(p.Doc, ".") || (p.Arg != "") != strings.HasSuffix(p.ArgDoc, ".") {
			t.Errorf("%s: Doc %q or ArgDoc %q missing or not a sentence", p.Name, p.Doc, p.ArgDoc)
		}
		flags := map[string]bool{}
		for _, pr := range p.Params {
			if flags[pr.Flag] || pr.Name == "" || pr.Doc == "" {
				t.Errorf("%s: parameter %+v: duplicate flag, or no name or doc", p.Name, pr)
			}
			flags[pr.Flag] = true
		}
		for _, m := range wildcard.FindAllStringSubmatch(p.Route, -1) {
			if _, ok := p.Param(m[1]); !ok && m[1] != p.Arg {
				t.Errorf("%s: route wildcard %s is neither Arg nor a parameter", p.Name, m[1])
			}
		}
		if p.Arg != "" && !strings.Contains(p.Route, "{"+p.Arg+"}") {
			t.Errorf("%s: Arg %s is not a wildcard of %s", p.Name, p.Arg, p.Route)
		}
	}
	if _, ok := PatternByName("message-stats"); !ok || len(names) != 15 {
		t.Fatalf("%d patterns, want the seeds' 15 with message-stats among them", len(names))
	}
}

// fakeInput is an Input from a map; Spell marks names so that a test sees
// which parameters a message names.
type fakeInput struct {
	v    map[string]string
	page PageRequest
}

func (f fakeInput) Value(name string) (string, bool) { v, ok := f.v[name]; return v, ok }
func (f fakeInput) Spell(name string) string         { return "<" + name + ">" }
func (f fakeInput) Page() (PageRequest, error)       { return f.page, nil }
func (f fakeInput) Now() time.Time                   { return time.Date(2030, 1, 15, 20, 0, 0, 0, time.UTC) }

// TestPatternRunErrors: Run checks the parameters before any request, and
// its messages name parameters the front end's way.
func TestPatternRunErrors(t *testing.T) {
	tests := []struct {
		pattern string
		in      map[string]string
		param   string
		reason  string
	}{
		{"executions", map[string]string{"agent": "a", "status": "FAILED"}, "agent", "give at most one of <agent> or <status>"},
		{"message-stats", map[string]string{"to": "tonight"}, "to", `must be RFC3339, e.g. 2026-01-05T00:00:00Z, got "tonight"`},
		{"executions", map[string]string{"agent": "a", "from": "monday"}, "from", `must be RFC3339, e.g. 2026-01-05T00:00:00Z, got "monday"`},
		{"metrics", nil, "date", "give <date>, <workflowType> or both"},
		{"metrics", map[string]string{"date": "2030-01-15", "to": "2030-01-16"}, "from", "is only for a series (no <date>)"},
		{"metrics", map[string]string{"workflowType": "sf", "from": "2030-13-01"}, "from", `must be a date YYYY-MM-DD, got "2030-13-01"`},
		{"jobs", map[string]string{"status": "queued"}, "installation", "is required"},
		{"jobs", map[string]string{"installation": "x"}, "installation", `must be a non-negative integer, got "x"`},
		{"jobs", map[string]string{"installation": "1"}, "status", "give <status> (optionally with <stuckHours>) or <repo>"},
		{"jobs", map[string]string{"installation": "1", "repo": "a/b", "stuckHours": "2"}, "repo", "cannot be combined with <status> or <stuckHours>"},
		{"jobs", map[string]string{"installation": "1", "status": "queued", "since": "2030-01-01T00:00:00Z"}, "since", "is only for <repo>"},
		{"jobs", map[string]string{"installation": "1", "stuckHours": "0"}, "stuckHours", `must be a number of hours between 0 and 2160, got "0"`},
		{"job", map[string]string{"installation": "1", "id": "0"}, "id", "must be a positive integer"},
		{"run", map[string]string{"installation": "1", "runId": "2", "attempt": "x"}, "attempt", `must be a non-negative integer, got "x"`},
		{"message-stats", map[string]string{"hours": "1000"}, "hours", `must be a number of hours between 0 and 744, got "1000"`},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.param, func(t *testing.T) {
			db := &fakeAPI{}
			c := newTestClient(t, db, []byte("patterns-test-cursor-key"))
			p, _ := PatternByName(tt.pattern)
			_, err := p.Run(context.Background(), c, fakeInput{v: tt.in})
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tt.param || pe.Reason != tt.reason {
				t.Fatalf("err %v, want %s: %s", err, tt.param, tt.reason)
			}
			if len(db.queries)+len(db.gets) != 0 {
				t.Fatal("a bad parameter reached DynamoDB")
			}
		})
	}
}

// TestPatternRunDefaults: a parameter not given keeps its meaning (hours
// 24, status in_progress for stuck jobs), from the input's clock.
func TestPatternRunDefaults(t *testing.T) {
	db := &fakeAPI{}
	c := newTestClient(t, db, []byte("patterns-test-cursor-key"))
	p, _ := PatternByName("jobs")
	if _, err := p.Run(context.Background(), c, fakeInput{v: map[string]string{"installation": "7", "stuckHours": "6"}}); err != nil {
		t.Fatal(err)
	}
	q := db.queries[0]
	s := func(k string) string {
		v, _ := q.ExpressionAttributeValues[k].(*types.AttributeValueMemberS)
		return v.Value
	}
	if got := []string{s(":v1"), s(":v2")}; got[0] != "in_progress" || got[1] != "2030-01-15T14:00:00.000Z" {
		t.Fatalf("stuck jobs query values %v", got)
	}
}

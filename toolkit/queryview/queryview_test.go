package queryview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// TestRendersEveryPattern: every pattern of query.Patterns has its table,
// and no table is left over.
func TestRendersEveryPattern(t *testing.T) {
	pats := query.Patterns()
	for _, p := range pats {
		if renders[p.Name] == nil {
			t.Errorf("pattern %s has no table", p.Name)
		}
	}
	if len(renders) != len(pats) {
		t.Errorf("%d tables for %d patterns", len(renders), len(pats))
	}
}

func TestIsLocal(t *testing.T) {
	for endpoint, want := range map[string]bool{
		"http://127.0.0.1:8766": true, "http://localhost:8000": true, "http://[::1]:8000": true,
		"": false, "https://dynamodb.us-east-1.amazonaws.com": false, "http://10.0.0.1:8000": false, "::": false,
	} {
		if got := IsLocal(endpoint); got != want {
			t.Errorf("IsLocal(%q) = %v, want %v", endpoint, got, want)
		}
	}
}

func args(pattern string, values map[string]string, page query.PageRequest) *Args {
	p, _ := query.PatternByName(pattern)
	a := &Args{Pattern: p, Values: map[string]string{}, Given: map[string]bool{}, Request: page, Clock: time.Date(2030, 1, 15, 20, 0, 0, 0, time.UTC)}
	for k, v := range values {
		a.Values[k], a.Given[k] = v, true
	}
	return a
}

func TestValidate(t *testing.T) {
	running := args("running", nil, query.PageRequest{})
	cursor := args("running", nil, query.PageRequest{Cursor: "abc"})
	tests := []struct {
		name  string
		o     Options
		field string // "" is valid
	}{
		{"local, no key", Options{Pattern: running.Pattern, Input: running, Local: true}, ""},
		{"AWS, no key, no cursor", Options{Pattern: running.Pattern, Input: running}, ""},
		{"AWS, no key, a cursor", Options{Pattern: running.Pattern, Input: cursor}, "CursorKey"},
		{"local, no key, a cursor", Options{Pattern: running.Pattern, Input: cursor, Local: true}, ""},
		{"short key", Options{Pattern: running.Pattern, Input: running, CursorKey: "short"}, "CursorKey"},
		{"no pattern", Options{Input: running}, "Pattern"},
		{"no input", Options{Pattern: running.Pattern}, "Input"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		var oe *toolkit.OptionsError
		if (tt.field == "" && err != nil) || (tt.field != "" && (!errors.As(err, &oe) || oe.Field != tt.field)) {
			t.Errorf("%s: Validate = %v, want field %q", tt.name, err, tt.field)
		}
	}
}

// TestArgs: values given and defaulted, and how the command line spells
// each parameter.
func TestArgs(t *testing.T) {
	a := args("run", map[string]string{"installation": "12345"}, query.PageRequest{})
	a.Values["runId"], a.Values["attempt"] = "0", "1"
	if v, given := a.Value("installation"); v != "12345" || !given {
		t.Errorf("installation: %q %v", v, given)
	}
	if v, given := a.Value("attempt"); v != "1" || given {
		t.Errorf("attempt (the flag's default): %q %v", v, given)
	}
	for name, want := range map[string]string{"runId": "--run", "cursor": "--cursor", "workflowType": "--workflow-type"} {
		if got := a.Spell(name); got != want {
			t.Errorf("Spell(%s) = %s, want %s", name, got, want)
		}
	}
	e := args("execution", nil, query.PageRequest{})
	e.Arg = "arn:x"
	if v, given := e.Value("arn"); v != "arn:x" || !given || e.Spell("arn") != "ARN" {
		t.Errorf("positional: %q %v %s", v, given, e.Spell("arn"))
	}
}

// TestExplain: the input's errors name the parameter the command line's
// way and wrap toolkit.ErrInvalidOptions; not found does not.
func TestExplain(t *testing.T) {
	a := args("job", nil, query.PageRequest{})
	_, perr := query.ParseInt("id", "x")
	for _, tc := range []struct {
		err     error
		msg     string
		invalid bool
	}{
		{perr, `--job: must be`, true},
		{query.ErrBadCursor, "--cursor: not valid for this query", true},
		{errors.Join(query.ErrNotFound), "not found", false},
	} {
		err := Explain(tc.err, a)
		if !strings.HasPrefix(err.Error(), tc.msg) || errors.Is(err, toolkit.ErrInvalidOptions) != tc.invalid || !errors.Is(err, tc.err) {
			t.Errorf("Explain(%v) = %v (invalid %v)", tc.err, err, errors.Is(err, toolkit.ErrInvalidOptions))
		}
	}
}

// TestRun: a pattern's input error comes back explained, before any
// request (the fake client would fail one).
func TestRun(t *testing.T) {
	a := args("timeline", map[string]string{"installation": "1"}, query.PageRequest{})
	a.Values["id"] = "0"
	_, err := Run(context.Background(), failingDB{}, schema.Naming{Prefix: "p", Stage: "dev"}, Options{Pattern: a.Pattern, Input: a, Local: true})
	if err == nil || err.Error() != "--job: must be a positive integer" || !errors.Is(err, toolkit.ErrInvalidOptions) {
		t.Fatalf("Run: %v", err)
	}
}

// TestResultText: a page's table with the footer naming the next cursor;
// its JSON is the page's.
func TestResultText(t *testing.T) {
	page := query.Page{Items: []map[string]any{{"created_date": "2030-01-15T00:00:00Z", "stage": "dev", "status": "failed", "message_type": "t", "message_id": "m1"}}, Next: "CUR"}
	r := &Result{Pattern: "messages", Value: page, Next: page.Next, in: args("messages", nil, query.PageRequest{})}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "CREATED               STAGE  STATUS  TYPE  MESSAGE\n2030-01-15T00:00:00Z  dev    failed  t     m1\n\nmore: add --cursor CUR\n"
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	j, _ := json.Marshal(r)
	pj, _ := json.Marshal(page)
	if string(j) != string(pj) {
		t.Errorf("JSON %s, want the page's %s", j, pj)
	}
}

// failingDB fails every request.
type failingDB struct{}

var errNoRequests = errors.New("no request expected")

func (failingDB) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return nil, errNoRequests
}

func (failingDB) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, errNoRequests
}

func (failingDB) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return nil, errNoRequests
}

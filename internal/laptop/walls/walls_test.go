package walls

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const m = "example.com/m"

// graph builds a Graph from "importer: import import ..." lines. Packages
// under example.com/ are of module m or x (by their second element), the
// others are standard.
func graph(lines ...string) Graph {
	g := Graph{}
	add := func(p string) Package {
		pkg, ok := g[p]
		if !ok {
			pkg = Package{ImportPath: p, Standard: !strings.HasPrefix(p, "example.com/")}
			if !pkg.Standard {
				pkg.Module = strings.Join(strings.SplitN(p, "/", 3)[:2], "/")
			}
			g[p] = pkg
		}
		return pkg
	}
	for _, l := range lines {
		from, imps, _ := strings.Cut(l, ":")
		pkg := add(strings.TrimSpace(from))
		for _, imp := range strings.Fields(imps) {
			add(imp)
			pkg.Imports = append(pkg.Imports, imp)
		}
		g[pkg.ImportPath] = pkg
	}
	return g
}

var lambdaRule = Rule{
	Name:        "lambda",
	Roots:       []string{m + "/cmd/fn"},
	Deny:        []string{m + "/internal/laptop/...", m + "/.../*test"},
	DenyImports: []string{"testing", "testing/...", "net/http/httptest"},
	Module:      m,
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		g     Graph
		rules []Rule
		want  []Violation
	}{
		{
			name: "walls hold",
			g: graph(
				m+"/cmd/fn: "+m+"/api fmt",
				m+"/api: "+m+"/schema net/http example.com/x/thrift",
				m+"/schema: fmt",
				"example.com/x/thrift: testing net/http/httptest", // another module may
				"net/http/httptest: testing",                      // the standard library may
				m+"/internal/laptop/devstack: testing",            // not reached
			),
			rules: []Rule{lambdaRule},
		},
		{
			name: "laptop package reached through a chain; its own imports not walked",
			g: graph(
				m+"/cmd/fn: "+m+"/api",
				m+"/api: "+m+"/query",
				m+"/query: "+m+"/internal/laptop/testenv",
				m+"/internal/laptop/testenv: testing "+m+"/internal/laptop/devstack",
			),
			rules: []Rule{lambdaRule},
			want: []Violation{{Rule: "lambda", Root: m + "/cmd/fn", Pattern: m + "/internal/laptop/...",
				Chain: []string{m + "/cmd/fn", m + "/api", m + "/query", m + "/internal/laptop/testenv"}}},
		},
		{
			name: "the shortest chain is given",
			g: graph(
				m+"/cmd/fn: "+m+"/a "+m+"/b",
				m+"/a: "+m+"/a2",
				m+"/a2: "+m+"/internal/laptop/x",
				m+"/b: "+m+"/internal/laptop/x",
			),
			rules: []Rule{lambdaRule},
			want: []Violation{{Rule: "lambda", Root: m + "/cmd/fn", Pattern: m + "/internal/laptop/...",
				Chain: []string{m + "/cmd/fn", m + "/b", m + "/internal/laptop/x"}}},
		},
		{
			name: "a *test helper outside internal/laptop",
			g: graph(
				m+"/cmd/fn: "+m+"/projector",
				m+"/projector: "+m+"/projector/storetest",
			),
			rules: []Rule{lambdaRule},
			want: []Violation{{Rule: "lambda", Root: m + "/cmd/fn", Pattern: m + "/.../*test",
				Chain: []string{m + "/cmd/fn", m + "/projector", m + "/projector/storetest"}}},
		},
		{
			name: "a package of the module imports testing itself, reported once",
			g: graph(
				m+"/cmd/fn: "+m+"/api "+m+"/ingest",
				m+"/api: testing",
				m+"/ingest: testing testing/fstest",
			),
			rules: []Rule{lambdaRule},
			want: []Violation{
				{Rule: "lambda", Root: m + "/cmd/fn", Pattern: "testing", Direct: true,
					Chain: []string{m + "/cmd/fn", m + "/api", "testing"}},
				{Rule: "lambda", Root: m + "/cmd/fn", Pattern: "testing/...", Direct: true,
					Chain: []string{m + "/cmd/fn", m + "/ingest", "testing/fstest"}},
			},
		},
		{
			name: "the root itself denied; one rule, several roots",
			g: graph(
				m+"/query: "+m+"/schema",
				m+"/cmd/ingest: "+m+"/ingest",
				m+"/ingest: "+m+"/projector",
				m+"/projector: "+m+"/schema",
			),
			rules: []Rule{
				{Name: "no projector", Roots: []string{m + "/query", m + "/cmd/ingest", m + "/projector"}, Deny: []string{m + "/projector/..."}},
			},
			want: []Violation{
				{Rule: "no projector", Root: m + "/cmd/ingest", Pattern: m + "/projector/...",
					Chain: []string{m + "/cmd/ingest", m + "/ingest", m + "/projector"}},
				{Rule: "no projector", Root: m + "/projector", Pattern: m + "/projector/...",
					Chain: []string{m + "/projector"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check(tt.g, tt.rules...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Check =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	g := graph(m + "/cmd/fn: fmt")
	tests := []struct {
		name string
		rule Rule
		want error
		msg  string
	}{
		{"unknown root", Rule{Name: "r", Roots: []string{m + "/cmd/gone"}, Deny: []string{"x"}}, ErrUnknownRoot, m + "/cmd/gone"},
		{"no name", Rule{Roots: []string{m + "/cmd/fn"}, Deny: []string{"x"}}, ErrBadRule, "Rule.Name"},
		{"no roots", Rule{Name: "r", Deny: []string{"x"}}, ErrBadRule, "Rule.Roots"},
		{"nothing denied", Rule{Name: "r", Roots: []string{m + "/cmd/fn"}}, ErrBadRule, "Rule.Deny or Rule.DenyImports"},
		{"DenyImports without Module", Rule{Name: "r", Roots: []string{m + "/cmd/fn"}, DenyImports: []string{"testing"}}, ErrBadRule, "Rule.Module"},
		{"empty pattern", Rule{Name: "r", Roots: []string{m + "/cmd/fn"}, Deny: []string{" "}}, ErrBadRule, "Rule.Deny: empty pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(g, tt.rule)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v naming %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestPatterns(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"a/b", "a/b", true},
		{"a/b", "a/bc", false},
		{"a/b", "a/b/c", false},
		{"a/...", "a", true},
		{"a/...", "a/b/c", true},
		{"a/...", "ab", false},
		{"a/.../*test", "a/b/storetest", true},
		{"a/.../*test", "a/b/c/querytest", true},
		{"a/.../*test", "a/storetest", false},
		{"a/*test", "a/storetest", true},
		{"a/*test", "a/b/storetest", false},
		{"a/*test", "a/testing", false},
		{"testing", "testing/fstest", false},
		{"a.b/c", "aXb/c", false}, // dots are literal
	}
	for _, tt := range tests {
		ps, err := compilePatterns([]string{tt.pattern})
		if err != nil {
			t.Fatal(err)
		}
		if got := ps.match(tt.path) != ""; got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestViolationString(t *testing.T) {
	v := Violation{Rule: "lambda", Root: "m/cmd/fn", Pattern: "m/internal/laptop/...", Chain: []string{"m/cmd/fn", "m/api", "m/internal/laptop/testenv"}}
	want := `lambda: m/cmd/fn reaches m/internal/laptop/testenv (denied by "m/internal/laptop/..."): m/cmd/fn -> m/api -> m/internal/laptop/testenv`
	if got := v.String(); got != want {
		t.Fatalf("String() =\n%s\nwant\n%s", got, want)
	}
	v = Violation{Rule: "lambda", Root: "m/cmd/fn", Pattern: "testing", Direct: true, Chain: []string{"m/cmd/fn", "m/api", "testing"}}
	want = `lambda: m/cmd/fn reaches a package of the module that imports testing (denied by "testing"): m/cmd/fn -> m/api -> testing`
	if got := v.String(); got != want {
		t.Fatalf("String() =\n%s\nwant\n%s", got, want)
	}
}

func TestBuild(t *testing.T) {
	args := Lambda.Args(Module + "/cmd/projector")
	want := []string{"list", "-deps", "-json=ImportPath,Imports,Standard,Module", "-tags", "lambda.norpc,nosqlcatalog", "--", Module + "/cmd/projector"}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("Args = %q, want %q", args, want)
	}
	env := Lambda.Env([]string{"HOME=/h", "GOARCH=amd64", "CGO_ENABLED=1", "GOOS=darwin"})
	wantEnv := []string{"HOME=/h", "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}
	if !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("Env = %q, want %q", env, wantEnv)
	}
	if got := (Build{CGO: true}).Env([]string{"GOOS=darwin"}); !reflect.DeepEqual(got, []string{"CGO_ENABLED=1"}) {
		t.Errorf("host build Env = %q, want only CGO_ENABLED=1", got)
	}
}

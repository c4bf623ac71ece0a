package query

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update", false, "rewrite docs/api.md's list of patterns from Patterns()")

// apiDoc is the document whose marked section lists the patterns.
const apiDoc = "../docs/api.md"

// Markers of the generated section.
const (
	patternsBegin = "<!-- patterns:begin (generated from query.Patterns() by `go test ./query -run TestAPIDocPatterns -update`) -->\n"
	patternsEnd   = "<!-- patterns:end -->\n"
)

// patternsTable is the section: each pattern's CLI name, HTTP route,
// parameters (the API's name and the CLI's spelling) and what it answers.
func patternsTable() string {
	var b strings.Builder
	b.WriteString("| `streamfold query` | HTTP `GET` | parameters (API, CLI) | answers |\n|---|---|---|---|\n")
	for _, p := range Patterns() {
		var params []string
		if p.Arg != "" {
			params = append(params, fmt.Sprintf("`%s`, %s", p.Arg, strings.ToUpper(p.Arg)))
		}
		for _, pr := range p.Params {
			params = append(params, fmt.Sprintf("`%s`, `--%s`", pr.Name, pr.Flag))
		}
		if p.Paged {
			params = append(params, "paged: `limit`, `cursor`")
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", p.Name, p.Route, strings.Join(params, "; "), p.Doc)
	}
	return b.String()
}

// TestAPIDocPatterns: docs/api.md lists the patterns as Patterns() has
// them; -update rewrites the list.
func TestAPIDocPatterns(t *testing.T) {
	b, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	head, rest, ok1 := strings.Cut(doc, patternsBegin)
	body, tail, ok2 := strings.Cut(rest, patternsEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the marked section %q ... %q", apiDoc, patternsBegin, patternsEnd)
	}
	want := patternsTable()
	if body == want {
		return
	}
	if !*updateDoc {
		t.Fatalf("%s's list of patterns is stale: run go test ./query -run TestAPIDocPatterns -update\nwant:\n%s", apiDoc, want)
	}
	if err := os.WriteFile(apiDoc, []byte(head+patternsBegin+want+patternsEnd+tail), 0o644); err != nil {
		t.Fatal(err)
	}
}

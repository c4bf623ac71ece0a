package main

import (
	"io"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// commandPaths are the command tree's commands, each as its words
// ("archive", "archive ls", ...), parents before children.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	p, err := newParser(&cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}, &cli{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		for _, c := range n.Children {
			if c.Type != kong.CommandNode {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			out = append(out, p)
			walk(c, p)
		}
	}
	walk(p.Model.Node, nil)
	return out
}

// TestEveryCommandHasHelp runs --help on every command of the tree: each
// exits 0 with the usage kong generates from the tree, a summary, and the
// flags; together they are testdata/help.golden (go test -update after a
// change to a command, then review the diff).
func TestEveryCommandHasHelp(t *testing.T) {
	t.Setenv("COLUMNS", "100") // kong wraps to the terminal's width
	var all strings.Builder
	for _, path := range append([][]string{nil}, commandPaths(t)...) {
		name := strings.Join(append([]string{"streamfold"}, path...), " ")
		code, out, errOut := runCLI(t, nil, "", append(path, "--help")...)
		if code != exitOK || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q", name, code, errOut)
			continue
		}
		if !strings.HasPrefix(out, "Usage: "+name) || !strings.Contains(out, "\nFlags:\n") {
			t.Errorf("%s --help is not the generated help:\n%s", name, out)
		}
		all.WriteString("$ " + name + " --help\n" + out + "\n")
	}
	golden(t, "help", all.String())
}

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// readmeCommands are the programs README's sh blocks may run. A new one is
// added here on purpose: anything else is taken for a typo or for a
// subcommand written as an alternative ("dev up | status | down"), which a
// person cannot paste.
var readmeCommands = []string{
	"bin/streamfold", "make", "export", "cd", "curl", "openssl", "cut", "go", "git",
}

// TestREADMECommandsPaste: every ```sh block of README.md parses with
// bash -n, every command in it is a program a shell runs (no "a | b | c"
// alternatives, no "[--flag]" notation), and every "bin/streamfold CMD SUB" names a command of
// this CLI and, for a command with subcommands, one of them.
func TestREADMECommandsPaste(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(string(md))
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d ```sh blocks; the test is not reading it right", len(blocks))
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to check README's commands: %v", err)
	}
	for _, b := range blocks {
		cmd := exec.Command(bash, "-n")
		cmd.Stdin = strings.NewReader(b.text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README.md line %d: the ```sh block does not parse (bash -n): %v\n%s", b.line, err, out)
		}
		for _, c := range simpleCommands(b.text) {
			checkREADMECommand(t, b.line, c)
		}
	}
}

func checkREADMECommand(t *testing.T, line int, words []string) {
	t.Helper()
	i := 0
	for i < len(words) && isAssignment(words[i]) {
		i++ // VAR=value before a command
	}
	if i == len(words) {
		return // assignments only
	}
	for _, w := range words[i:] {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			t.Errorf("README.md block at line %d: %q: %s is usage notation for an optional part, not something to paste; write the line with it and without", line, strings.Join(words, " "), w)
		}
	}
	prog := words[i]
	if !slices.Contains(readmeCommands, prog) {
		t.Errorf("README.md block at line %d: %q is not a command a shell runs (in %q); write one command per line, or add it to readmeCommands", line, prog, strings.Join(words, " "))
		return
	}
	if prog != "bin/streamfold" {
		return
	}
	args := words[i+1:]
	if len(args) == 0 {
		return
	}
	name := args[0]
	if name == "help" {
		return
	}
	if commandNode(t, name) == nil {
		t.Errorf("README.md block at line %d: %q: streamfold has no command %q", line, strings.Join(words, " "), name)
		return
	}
	subs := subcommandsOf(t, name)
	if len(subs) == 0 {
		return
	}
	if len(args) < 2 || !slices.Contains(subs, args[1]) {
		t.Errorf("README.md block at line %d: %q: streamfold %s wants one of the subcommands %v", line, strings.Join(words, " "), name, subs)
	}
}

// subcommandsOf reads a command's subcommands from the usage lines its
// help starts with ("Usage:" then "  streamfold NAME SUB ..." up to the
// first blank line); none for a command without ("Usage: streamfold NAME
// [flags]").
func subcommandsOf(t *testing.T, name string) []string {
	t.Helper()
	if node := commandNode(t, name); node != nil && len(node.Children) > 0 {
		var subs []string
		for _, c := range node.Children {
			subs = append(subs, c.Name)
		}
		return subs
	}
	_, stdout, stderr := runCLI(t, nil, "", name, "-h")
	usage, _, _ := strings.Cut(stdout+stderr, "\n\n")
	re := regexp.MustCompile(`(?m)^\s+streamfold ` + regexp.QuoteMeta(name) + ` ([a-z][a-z-]*)\b`)
	var subs []string
	for _, m := range re.FindAllStringSubmatch(usage, -1) {
		if !slices.Contains(subs, m[1]) {
			subs = append(subs, m[1])
		}
	}
	return subs
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	return eq > 0 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(w[:eq])
}

type shBlock struct {
	line int // of the opening fence
	text string
}

// shBlocks returns the ```sh fenced blocks of a Markdown text.
func shBlocks(md string) []shBlock {
	var out []shBlock
	var cur *shBlock
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```sh":
			cur = &shBlock{line: i + 1}
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	return out
}

// simpleCommands splits shell text into its simple commands' words: quotes
// kept together, comments dropped, lines joined at a trailing backslash,
// split at |, ||, &&, ; and & and at newlines outside quotes. Command
// substitutions ($(...)) are one word each and not looked into.
func simpleCommands(text string) [][]string {
	var (
		out   [][]string
		words []string
		word  strings.Builder
		inW   bool
	)
	endWord := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			out = append(out, words)
			words = nil
		}
	}
	r := []rune(text)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r) && r[i+1] == '\n':
			i++ // line continuation
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(r) && r[j] != c {
				if c == '"' && r[j] == '\\' {
					j++
				}
				j++
			}
			word.WriteString(string(r[i:min(j+1, len(r))]))
			inW = true
			i = j
		case c == '$' && i+1 < len(r) && r[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(r); j++ {
				if r[j] == '(' {
					depth++
				} else if r[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			word.WriteString(string(r[i:min(j+1, len(r))]))
			inW = true
			i = j
		case c == '#' && !inW:
			for i < len(r) && r[i] != '\n' {
				i++
			}
			endCmd()
		case c == '\n' || c == ';' || c == '|' || c == '&':
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		case c == '<' || c == '>':
			endWord()
			// a redirection: skip its target word
			for i+1 < len(r) && (r[i+1] == '>' || r[i+1] == '&' || r[i+1] == ' ') {
				i++
			}
			for i+1 < len(r) && !strings.ContainsRune(" \t\n;|&", r[i+1]) {
				i++
			}
		default:
			word.WriteRune(c)
			inW = true
		}
	}
	endCmd()
	return out
}

// TestSimpleCommands pins the splitter the README test relies on.
func TestSimpleCommands(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     [][]string
	}{
		{"alternatives are three commands", "bin/streamfold dev up | status | down   # the stack\n",
			[][]string{{"bin/streamfold", "dev", "up"}, {"status"}, {"down"}}},
		{"quotes and substitutions stay one word", `X=$(openssl rand -hex 2) bin/streamfold compact --date "$(date -u +%F)" 'a b'`,
			[][]string{{"X=$(openssl rand -hex 2)", "bin/streamfold", "compact", "--date", `"$(date -u +%F)"`, "'a b'"}}},
		{"continuation and redirections", "curl -sS x \\\n  -d @f > out.json && cut -d' ' -f1 < in\n",
			[][]string{{"curl", "-sS", "x", "-d", "@f"}, {"cut", "-d' '", "-f1"}}},
		{"background and comments", "bin/streamfold serve &     # note\n# only a comment\n",
			[][]string{{"bin/streamfold", "serve"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := simpleCommands(tc.in)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("simpleCommands(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// commandNode is the command tree's top-level command name, or nil.
func commandNode(t *testing.T, name string) *kong.Node {
	t.Helper()
	p, err := newParser(&cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}, &cli{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Model.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

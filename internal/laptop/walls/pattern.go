package walls

import (
	"fmt"
	"regexp"
	"strings"
)

// A pattern matches import paths. Patterns are the go command's, with one
// addition:
//
//   - "a/b" matches a/b only;
//   - "..." matches any string, slashes included, and a trailing "/..."
//     also matches the path without it ("a/..." matches a, a/b, a/b/c);
//   - "*" matches within one path element ("a/*test" matches a/storetest,
//     not a/b/storetest).
type pattern struct {
	text string
	re   *regexp.Regexp
}

// patterns is a list of patterns, compiled.
type patterns []pattern

// compilePatterns compiles each pattern; an empty one is an error.
func compilePatterns(ps []string) (patterns, error) {
	out := make(patterns, 0, len(ps))
	for _, p := range ps {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("empty pattern")
		}
		body, tail := p, ""
		if strings.HasSuffix(body, "/...") {
			body, tail = strings.TrimSuffix(body, "/..."), `(/.*)?`
		}
		q := regexp.QuoteMeta(body)
		q = strings.ReplaceAll(q, `\.\.\.`, `.*`)
		q = strings.ReplaceAll(q, `\*`, `[^/]*`)
		out = append(out, pattern{text: p, re: regexp.MustCompile("^" + q + tail + "$")})
	}
	return out, nil
}

// match returns the first pattern path matches, "" if none.
func (ps patterns) match(path string) string {
	for _, p := range ps {
		if p.re.MatchString(path) {
			return p.text
		}
	}
	return ""
}

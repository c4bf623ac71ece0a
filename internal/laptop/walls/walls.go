package walls

import (
	"fmt"
	"sort"
	"strings"
)

// Package is one package of a Graph: what `go list -deps -json` says of it.
type Package struct {
	// ImportPath is the package's import path.
	ImportPath string
	// Imports are the import paths it imports (not its tests'), sorted.
	Imports []string
	// Standard is true for a package of the standard library.
	Standard bool
	// Module is the path of the module the package belongs to, "" for the
	// standard library.
	Module string
}

// Graph is an import graph by import path.
type Graph map[string]Package

// Rule is one wall: what a set of root packages may not reach.
type Rule struct {
	// Name says what the wall keeps apart, for the report. Required.
	Name string
	// Roots are the import paths of the packages the rule bounds (a main
	// package for a binary). Required.
	Roots []string
	// Deny are patterns (see pattern) of packages no root may reach,
	// itself included.
	Deny []string
	// DenyImports are patterns of packages that no package of module
	// Module reached from a root may import itself. Packages of other
	// modules and of the standard library may.
	DenyImports []string
	// Module is the module whose packages DenyImports bounds; required
	// with DenyImports.
	Module string
}

// Validate names the first bad field.
func (r Rule) Validate() error {
	switch {
	case strings.TrimSpace(r.Name) == "":
		return fmt.Errorf("%w: Rule.Name: required", ErrBadRule)
	case len(r.Roots) == 0:
		return fmt.Errorf("%w: rule %q: Rule.Roots: required", ErrBadRule, r.Name)
	case len(r.Deny) == 0 && len(r.DenyImports) == 0:
		return fmt.Errorf("%w: rule %q: Rule.Deny or Rule.DenyImports: one is required", ErrBadRule, r.Name)
	case len(r.DenyImports) > 0 && r.Module == "":
		return fmt.Errorf("%w: rule %q: Rule.Module: required with DenyImports", ErrBadRule, r.Name)
	}
	if _, err := compilePatterns(r.Deny); err != nil {
		return fmt.Errorf("%w: rule %q: Rule.Deny: %w", ErrBadRule, r.Name, err)
	}
	if _, err := compilePatterns(r.DenyImports); err != nil {
		return fmt.Errorf("%w: rule %q: Rule.DenyImports: %w", ErrBadRule, r.Name, err)
	}
	return nil
}

// Violation is one breach of a wall: a root reaches a denied package.
type Violation struct {
	// Rule is the rule's Name.
	Rule string
	// Root is the root that reaches it.
	Root string
	// Chain is a shortest import chain from Root to the denied package,
	// both included.
	Chain []string
	// Pattern is the Deny or DenyImports pattern the package matches.
	Pattern string
	// Direct is true for a DenyImports breach: the last but one package of
	// Chain, of the rule's module, imports the denied one itself.
	Direct bool
}

// Denied is the package the root must not reach.
func (v Violation) Denied() string { return v.Chain[len(v.Chain)-1] }

func (v Violation) String() string {
	how := "reaches"
	if v.Direct {
		how = "reaches a package of the module that imports"
	}
	return fmt.Sprintf("%s: %s %s %s (denied by %q): %s", v.Rule, v.Root, how, v.Denied(), v.Pattern, strings.Join(v.Chain, " -> "))
}

// Check returns every breach of the rules in g, sorted by rule, root and
// denied package; none when the walls hold. For each denied package it
// gives one shortest chain (a breadth-first walk in import order, so the
// chain is the same on every run), and it does not walk past a denied
// package, whose own imports would only repeat the breach.
func Check(g Graph, rules ...Rule) ([]Violation, error) {
	var out []Violation
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		deny, _ := compilePatterns(r.Deny)
		denyImports, _ := compilePatterns(r.DenyImports)
		for _, root := range r.Roots {
			if _, ok := g[root]; !ok {
				return nil, fmt.Errorf("%w: rule %q: %s", ErrUnknownRoot, r.Name, root)
			}
			out = append(out, walk(g, r, root, deny, denyImports)...)
		}
	}
	return out, nil
}

// walk is Check for one root.
func walk(g Graph, r Rule, root string, deny, denyImports patterns) []Violation {
	var out []Violation
	parent := map[string]string{root: ""}
	chain := func(p string) []string {
		var c []string
		for ; p != ""; p = parent[p] {
			c = append(c, p)
		}
		for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
			c[i], c[j] = c[j], c[i]
		}
		return c
	}
	direct := map[string]bool{} // denied imports already reported
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if pat := deny.match(p); pat != "" {
			out = append(out, Violation{Rule: r.Name, Root: root, Chain: chain(p), Pattern: pat})
			continue
		}
		pkg := g[p]
		for _, imp := range pkg.Imports {
			if pkg.Module == r.Module && r.Module != "" && !direct[imp] {
				if pat := denyImports.match(imp); pat != "" {
					direct[imp] = true
					out = append(out, Violation{Rule: r.Name, Root: root, Chain: append(chain(p), imp), Pattern: pat, Direct: true})
				}
			}
			if _, seen := parent[imp]; !seen {
				parent[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Denied() < out[j].Denied() })
	return out
}

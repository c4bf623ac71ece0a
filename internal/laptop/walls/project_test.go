package walls

import (
	"strings"
	"testing"
)

// TestProjectWalls checks the project's walls (Rules) on this module, for
// the build Terraform deploys and for the Lambda test tier's build. A
// failure names the import chain that breaks a wall: move the import, or
// the code it reaches, back to its side (docs/decisions.md, "Walls").
func TestProjectWalls(t *testing.T) {
	rules := Rules()
	var roots []string
	for _, r := range rules {
		roots = append(roots, r.Roots...)
	}
	for _, b := range []struct {
		name  string
		build Build
	}{{"lambda", Lambda}, {"lambda tier", LambdaTier}} {
		t.Run(b.name, func(t *testing.T) {
			g, err := Load(t.Context(), "", b.build, roots...)
			if err != nil {
				t.Fatal(err)
			}
			// The graph is the module's: every Lambda main reaches schema.
			for _, root := range LambdaMains() {
				if !reaches(g, root, Module+"/schema") {
					t.Fatalf("%s does not reach %s/schema: the graph is not the module's", root, Module)
				}
			}
			vs, err := Check(g, rules...)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				t.Error(v)
			}
		})
	}
}

// TestLaptopOnlyExists guards the deny list against a rename: the laptop
// folder holds the packages the walls keep out, so a pattern that matched
// nothing would let everything through.
func TestLaptopOnlyExists(t *testing.T) {
	g, err := Load(t.Context(), "", Build{}, Module+"/internal/laptop/...", Module+"/cmd/streamfold")
	if err != nil {
		t.Fatal(err)
	}
	deny, err := compilePatterns(LaptopOnly)
	if err != nil {
		t.Fatal(err)
	}
	var laptop []string
	for p := range g {
		if strings.HasPrefix(p, Module+"/internal/laptop/") && deny.match(p) != "" {
			laptop = append(laptop, p)
		}
	}
	for _, want := range []string{"devstack", "lambdatier", "runtimeapi", "testenv", "testclock", "streamrun", "walls"} {
		if _, ok := g[Module+"/internal/laptop/"+want]; !ok {
			t.Errorf("%s/internal/laptop/%s: not in the module", Module, want)
		}
	}
	if len(laptop) < 7 {
		t.Errorf("LaptopOnly matches %d packages under internal/laptop, want at least 7: %v", len(laptop), laptop)
	}
}

// reaches reports whether from imports to, directly or not.
func reaches(g Graph, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			return true
		}
		for _, imp := range g[p].Imports {
			if !seen[imp] {
				seen[imp] = true
				queue = append(queue, imp)
			}
		}
	}
	return false
}

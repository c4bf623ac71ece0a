package walls

import (
	"errors"
	"reflect"
	"testing"
)

// TestLoadAndCheck loads testdata/walled, a module that breaks the walls,
// with the real go command, and checks that Check names its breaches: the
// whole path from go list to the report, on a known violation.
func TestLoadAndCheck(t *testing.T) {
	const w = "example.com/walled"
	rule := Rule{
		Name:        "lambda",
		Roots:       []string{w + "/cmd/fn", w + "/cmd/clean"},
		Deny:        []string{w + "/internal/laptop/..."},
		DenyImports: []string{"testing", "os/exec"},
		Module:      w,
	}
	laptop := Violation{Rule: "lambda", Root: w + "/cmd/fn", Pattern: w + "/internal/laptop/...",
		Chain: []string{w + "/cmd/fn", w + "/lib", w + "/internal/laptop/devstack"}}
	shell := Violation{Rule: "lambda", Root: w + "/cmd/fn", Pattern: "os/exec", Direct: true,
		Chain: []string{w + "/cmd/fn", w + "/lib", "os/exec"}}
	tests := []struct {
		name  string
		build Build
		want  []Violation
	}{
		{"untagged", Build{GOOS: "linux", GOARCH: "arm64"}, []Violation{laptop}},
		{"lambdaonly tag", Build{GOOS: "linux", GOARCH: "arm64", Tags: []string{"lambdaonly"}}, []Violation{laptop, shell}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Load(t.Context(), "testdata/walled", tt.build, w+"/cmd/...")
			if err != nil {
				t.Fatal(err)
			}
			got, err := Check(g, rule)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Check =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

func TestLoadError(t *testing.T) {
	_, err := Load(t.Context(), "testdata/walled", Build{}, "example.com/walled/cmd/missing")
	if !errors.Is(err, ErrGoList) {
		t.Fatalf("err = %v, want ErrGoList", err)
	}
}

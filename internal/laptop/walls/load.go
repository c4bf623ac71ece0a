package walls

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Build is the build configuration a graph is loaded for: which files the
// go command selects depends on it.
type Build struct {
	// GOOS and GOARCH; empty is the go command's default (the host's).
	GOOS, GOARCH string
	// CGO sets CGO_ENABLED=1; false sets CGO_ENABLED=0.
	CGO bool
	// Tags are the build tags (-tags).
	Tags []string
}

// Lambda is the build of the zips Terraform deploys (.ci/package.sh).
var Lambda = Build{GOOS: "linux", GOARCH: "arm64", Tags: []string{"lambda.norpc", "nosqlcatalog"}}

// LambdaTier is the build of the Lambda test tier's zips (.ci/package.sh
// with PACKAGE_SQLCATALOG=1): the archiver keeps its SQLite catalog.
var LambdaTier = Build{GOOS: "linux", GOARCH: "arm64", Tags: []string{"lambda.norpc"}}

// Args are the go command's arguments for loading patterns under b: a
// pure value, so a test can assert it.
func (b Build) Args(patterns ...string) []string {
	args := []string{"list", "-deps", "-json=ImportPath,Imports,Standard,Module"}
	if len(b.Tags) > 0 {
		args = append(args, "-tags", strings.Join(b.Tags, ","))
	}
	return append(append(args, "--"), patterns...)
}

// Env is the environment the go command runs with for b: the process's,
// with GOOS, GOARCH and CGO_ENABLED set (or removed when empty).
func (b Build) Env(base []string) []string {
	cgo := "0"
	if b.CGO {
		cgo = "1"
	}
	set := map[string]string{"GOOS": b.GOOS, "GOARCH": b.GOARCH, "CGO_ENABLED": cgo}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED"} {
		if set[k] != "" {
			out = append(out, k+"="+set[k])
		}
	}
	return out
}

// Load runs `go list -deps -json` in dir (a directory of the module; "" is
// the current one) for the patterns under b, and returns the graph of the
// packages they match and everything they import, tests excluded.
func Load(ctx context.Context, dir string, b Build, patterns ...string) (Graph, error) {
	cmd := exec.CommandContext(ctx, goBinary(), b.Args(patterns...)...)
	cmd.Dir = dir
	cmd.Env = b.Env(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %s", ErrGoList, err, strings.TrimSpace(stderr.String()))
	}
	return decodeGraph(bytes.NewReader(out))
}

// decodeGraph reads the stream of JSON objects `go list -json` writes.
func decodeGraph(r io.Reader) (Graph, error) {
	g := Graph{}
	dec := json.NewDecoder(r)
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Standard   bool
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return g, nil
		} else if err != nil {
			return nil, fmt.Errorf("walls: decode go list output: %w", err)
		}
		pkg := Package{ImportPath: p.ImportPath, Imports: p.Imports, Standard: p.Standard}
		if p.Module != nil {
			pkg.Module = p.Module.Path
		}
		g[p.ImportPath] = pkg
	}
}

// goBinary is the go command of the toolchain running this program (its
// GOROOT, so the graph is the one this toolchain builds), else the one on
// PATH.
func goBinary() string {
	if root := runtime.GOROOT(); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

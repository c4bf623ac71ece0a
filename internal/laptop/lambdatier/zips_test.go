package lambdatier

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamfold/streamfold/terraform/deploy"
)

// functions are the Lambda functions (terraform/deploy.Functions, what
// .ci/package.sh builds by default).
var functions = deploy.Functions

// repoRoot is the module's root: the nearest directory above the test's
// working directory (its package directory) holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("repoRoot: no go.mod above the test's directory")
		}
		dir = parent
	}
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

var (
	hostOnce sync.Once
	hostDist string
	hostErr  error
)

// hostZips builds the zips for the host's architecture once per test binary
// (a failed build fails every test that needs it).
func hostZips(t *testing.T) string {
	t.Helper()
	hostOnce.Do(func() {
		ok := false
		defer func() {
			if !ok && hostErr == nil {
				hostErr = errors.New("building the zips failed (see the first test that built them)")
			}
		}()
		dir, err := os.MkdirTemp("", "lambdatier-dist-")
		if err != nil {
			hostErr = err
			return
		}
		cmd := exec.Command("bash", filepath.Join(repoRoot(t), ".ci", "package.sh"))
		// PACKAGE_SQLCATALOG=1: the archiver keeps the SQLite catalog,
		// which the tier uses in place of Glue (stack.catalog).
		cmd.Env = append(os.Environ(), "DIST="+dir, "PACKAGE_GOARCH="+runtime.GOARCH, "PACKAGE_SQLCATALOG=1")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			hostErr = fmt.Errorf(".ci/package.sh (PACKAGE_GOARCH=%s): %v\n%s", runtime.GOARCH, err, out)
			return
		}
		t.Logf(".ci/package.sh PACKAGE_GOARCH=%s PACKAGE_SQLCATALOG=1: %s in %v", runtime.GOARCH, lastLine(out), time.Since(start).Round(time.Second))
		hostDist, ok = dir, true
	})
	if hostErr != nil {
		t.Fatal(hostErr)
	}
	return hostDist
}

// elfMachine is the ELF machine of a GOARCH the zips are built for.
var elfMachine = map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64}

// checkZip checks a function zip's layout as Lambda needs it for runtime
// provided.al2023 with handler "bootstrap", and returns the bootstrap's
// bytes: exactly one entry, "bootstrap" at the root, a regular file with
// mode 0755, a statically linked ELF executable for machine.
func checkZip(path string, machine elf.Machine) ([]byte, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a zip: %w", path, err)
	}
	defer zr.Close()
	var names []string
	var boot *zip.File
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "bootstrap" {
			boot = f
		}
	}
	if boot == nil {
		return nil, fmt.Errorf("%s: no \"bootstrap\" at the zip's root (entries %q): Lambda's provided.al2023 runtime runs /var/task/bootstrap", path, names)
	}
	if len(zr.File) != 1 {
		return nil, fmt.Errorf("%s: entries %q, want only \"bootstrap\"", path, names)
	}
	if m := boot.Mode(); !m.IsRegular() || m.Perm() != 0o755 {
		return nil, fmt.Errorf("%s: bootstrap has mode %v, want a regular file with -rwxr-xr-x", path, m)
	}
	rc, err := boot.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: bootstrap: %w", path, err)
	}
	defer rc.Close()
	bin, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: bootstrap: %w", path, err)
	}
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("%s: bootstrap is not an ELF executable: %w", path, err)
	}
	defer ef.Close()
	switch {
	case ef.Type != elf.ET_EXEC:
		return nil, fmt.Errorf("%s: bootstrap is ELF %v, want ET_EXEC (a static executable)", path, ef.Type)
	case ef.Machine != machine:
		return nil, fmt.Errorf("%s: bootstrap is for %v, want %v", path, ef.Machine, machine)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("%s: bootstrap is dynamically linked (PT_INTERP): build with CGO_ENABLED=0", path)
		}
	}
	return bin, nil
}

// unzip checks the zip and writes its bootstrap into a new directory (the
// function's /var/task); it returns the bootstrap's path.
func unzip(t *testing.T, path string) string {
	t.Helper()
	bin, err := checkZip(path, elfMachine[runtime.GOARCH])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(p, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// sqlCatalogMark is in a binary that holds the archiver's SQLite catalog
// (the pure-Go driver's package path, in the function names a stripped Go
// binary keeps).
var sqlCatalogMark = []byte("modernc.org/sqlite")

// TestArm64ZipLayout builds the zips that are deployed (arm64, the default
// of .ci/package.sh) and checks their layout; they cannot run here. None of
// them holds the SQLite catalog (tag nosqlcatalog), while the tier's own
// archiver (PACKAGE_SQLCATALOG=1) does.
func TestArm64ZipLayout(t *testing.T) {
	if _, ok := elfMachine[runtime.GOARCH]; !ok {
		t.Skipf("the host architecture %s is neither amd64 nor arm64", runtime.GOARCH)
	}
	skipWithoutServices(t)
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), ".ci", "package.sh"))
	cmd.Env = append(os.Environ(), "DIST="+dist) // no PACKAGE_GOARCH: what `make package` builds
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf(".ci/package.sh: %v\n%s", err, out)
	}
	for _, fn := range functions {
		bin, err := checkZip(filepath.Join(dist, fn+".zip"), elf.EM_AARCH64)
		if err != nil {
			t.Error(err)
			continue
		}
		if bytes.Contains(bin, sqlCatalogMark) {
			t.Errorf("%s.zip holds the SQLite catalog (%s): the deployed zips must be built with -tags nosqlcatalog", fn, sqlCatalogMark)
		}
	}
	host, err := checkZip(filepath.Join(hostZips(t), "archiver.zip"), elfMachine[runtime.GOARCH])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(host, sqlCatalogMark) {
		t.Errorf("the tier's archiver.zip (PACKAGE_SQLCATALOG=1) has no SQLite catalog: the tier cannot run it without Glue")
	}
}

// TestSQLCatalogZipsNotInDist: .ci/package.sh refuses to write zips with
// the SQLite catalog into dist/, which Terraform deploys.
func TestSQLCatalogZipsNotInDist(t *testing.T) {
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), ".ci", "package.sh"))
	cmd.Env = append(os.Environ(), "DIST=dist", "PACKAGE_SQLCATALOG=1", "FUNCTIONS=archiver")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "set DIST to another directory") {
		t.Fatalf(".ci/package.sh with PACKAGE_SQLCATALOG=1 DIST=dist: %v\n%s; want a refusal", err, out)
	}
}

// TestZipChecksCatchBadLayouts: the checks fail a zip without bootstrap, a
// bootstrap in a folder, one that is not executable, and one built for the
// other architecture.
func TestZipChecksCatchBadLayouts(t *testing.T) {
	skipWithoutServices(t)
	dist := hostZips(t)
	good, err := checkZip(filepath.Join(dist, "projector.zip"), elfMachine[runtime.GOARCH])
	if err != nil {
		t.Fatalf("the built zip: %v", err)
	}
	other := elf.EM_AARCH64
	if runtime.GOARCH == "arm64" {
		other = elf.EM_X86_64
	}
	for _, tc := range []struct {
		name    string
		file    string
		mode    os.FileMode
		machine elf.Machine
		want    string
	}{
		{"no bootstrap", "main", 0o755, elfMachine[runtime.GOARCH], `no "bootstrap"`},
		{"in a folder", "projector/bootstrap", 0o755, elfMachine[runtime.GOARCH], `no "bootstrap"`},
		{"not executable", "bootstrap", 0o644, elfMachine[runtime.GOARCH], "mode"},
		{"other architecture", "bootstrap", 0o755, other, "want"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.zip")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			zw := zip.NewWriter(f)
			h := &zip.FileHeader{Name: tc.file, Method: zip.Deflate}
			h.SetMode(tc.mode)
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write(good)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			_, err = checkZip(p, tc.machine)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checkZip: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestMain removes the zips built for the host once every test is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if hostDist != "" {
		_ = os.RemoveAll(hostDist)
	}
	os.Exit(code)
}

// Package golden compares what a test produced with a golden file, and
// rewrites the file instead when the test binary runs with -update.
//
// Importing it defines the -update flag, unless the test binary defines one
// already (then Update reads that one).
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

// Update reports whether the test binary runs with -update.
func Update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Check compares got with the file at path. With -update it writes got
// there instead (creating the directories). A missing file, or one that
// differs, fails the test with the lines that differ.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; run go test -run %s -update and review the diff:\n%s", path, t.Name(), LineDiff(want, got))
	}
}

// LineDiff lists the first 20 lines that differ, each as "line N:" then
// "- want" and "+ got", each cut at 2,000 bytes.
func LineDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	var b bytes.Buffer
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 20; i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, cut(w), cut(g))
			shown++
		}
	}
	return b.String()
}

// cut shortens a line to 2,000 bytes, marking the cut with "...".
func cut(line []byte) []byte {
	if len(line) > 2000 {
		return append(line[:2000:2000], "..."...)
	}
	return line
}

package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLineDiff(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"changed line", "a\nb\nc", "a\nB\nc", "line 2:\n- b\n+ B\n"},
		{"line added", "a", "a\nb", "line 2:\n- \n+ b\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := LineDiff([]byte(tc.want), []byte(tc.got)); d != tc.diff {
				t.Errorf("LineDiff = %q, want %q", d, tc.diff)
			}
		})
	}
}

func TestCheckMatches(t *testing.T) {
	if Update() {
		t.Skip("with -update Check writes instead of comparing")
	}
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Check(t, path, []byte("same\n"))
}

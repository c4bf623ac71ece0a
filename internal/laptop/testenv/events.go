package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// MaxEventLine bounds one line of an NDJSON event file (a full-size GitHub
// webhook is about 12 KB; the bound leaves room for any fixture).
const MaxEventLine = 16 << 20

// ReadEvents decodes NDJSON event envelopes, one per line, as they are
// written (no validation). Blank lines and lines starting with '#' are
// skipped. An error names the line.
func ReadEvents(r io.Reader) ([]schema.Event, error) {
	var out []schema.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), MaxEventLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var e schema.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// LoadEvents reads an NDJSON file of event envelopes (ReadEvents); a file
// that cannot be read fails the test with a message naming it.
func LoadEvents(t testing.TB, path string) []schema.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	evs, err := ReadEvents(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return evs
}

// Command zdictgen trains a zstd dictionary for event payloads (the data
// attribute of event-table items) and writes it to a new file. It is run by
// go generate in package schema:
//
//	go generate ./schema
//
// A dictionary is immutable once items compressed with it may exist: the
// command never overwrites a file, so regenerating is a no-op until the
// go:generate line names a new -id (and schema registers the new file).
// Training is not deterministic (the builder iterates maps), which is why the
// bytes are committed rather than rebuilt by tests.
//
// The samples are the payload shapes streamfold accepts, from committed
// fixtures: the GitHub workflow_job webhooks of ingest/testdata/github
// (minified, as GitHub sends them), each also under a few other owners,
// repositories, senders and ids so that the dictionary learns GitHub's
// structure rather than one repository's names, each of these both as sent
// and with its derivable URLs elided (package ghurls: what schema compresses
// since encoding ghurls1, whose constant runs of keys and markers the
// dictionary then holds whole); the Step Functions details of
// ingest/testdata/eventbridge; and the data of every event in
// schema/testdata/valid.ndjson (all four domains).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/dict"

	"github.com/streamfold/streamfold/schema/internal/ghurls"
)

func main() {
	id := flag.Uint("id", 0, "zstd dictionary id (32768 or more; ids below are reserved by the zstd format)")
	out := flag.String("out", "", "file to write; never overwritten")
	root := flag.String("root", "..", "repository root, relative to the working directory")
	size := flag.Int("size", 32<<10, "maximum dictionary size in bytes")
	flag.Parse()
	if err := run(uint32(*id), *out, *root, *size); err != nil {
		fmt.Fprintln(os.Stderr, "zdictgen:", err)
		os.Exit(1)
	}
}

func run(id uint32, out, root string, size int) error {
	if id < 32768 || out == "" {
		return errors.New("-id (>= 32768) and -out are required")
	}
	if _, err := os.Stat(out); err == nil {
		fmt.Printf("zdictgen: %s exists; dictionaries are immutable (give -id a new value to train another)\n", out)
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	samples, err := collect(root)
	if err != nil {
		return err
	}
	d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: size, HashBytes: 8, ZstdDictID: id})
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if err := os.WriteFile(out, d, 0o644); err != nil {
		return err
	}
	fmt.Printf("zdictgen: wrote %s: dictionary %d, %d bytes, from %d samples\n", out, id, len(d), len(samples))
	return nil
}

func collect(root string) ([][]byte, error) {
	var samples [][]byte
	hooks, err := sortedGlob(filepath.Join(root, "ingest/testdata/github/*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range hooks {
		b, err := compactFile(f)
		if err != nil {
			return nil, err
		}
		hooks := [][]byte{b}
		for i, v := range variants {
			hooks = append(hooks, v.apply(b, i))
		}
		for _, h := range hooks {
			samples = append(samples, h)
			if elided, ok := ghurls.Elide(h); ok {
				samples = append(samples, elided)
			}
		}
	}
	details, err := sortedGlob(filepath.Join(root, "ingest/testdata/eventbridge/*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range details {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ev struct {
			Detail json.RawMessage `json:"detail"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		b, err := compact(ev.Detail)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		samples = append(samples, b)
	}
	f, err := os.Open(filepath.Join(root, "schema/testdata/valid.ndjson"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("valid.ndjson: %w", err)
		}
		b, err := compact(ev.Data)
		if err != nil {
			return nil, fmt.Errorf("valid.ndjson: %w", err)
		}
		samples = append(samples, b)
	}
	return samples, sc.Err()
}

// variant renames a webhook's owner, repository and sender and shifts its ids.
type variant struct{ owner, repo, sender string }

var variants = []variant{
	{"octo-industries", "billing-service", "mona"},
	{"acme", "web", "jdoe"},
	{"contoso-engineering", "platform-infrastructure", "build-bot"},
	{"example-org", "mobile-app-ios", "a-developer-with-a-long-name"},
	{"tailspin", "data-pipeline", "ci-user"},
}

func (v variant) apply(b []byte, i int) []byte {
	s := string(b)
	s = strings.ReplaceAll(s, "runs-on/test", v.owner+"/"+v.repo)
	s = strings.ReplaceAll(s, `"name":"test"`, `"name":"`+v.repo+`"`)
	s = strings.ReplaceAll(s, "runs-on", v.owner)
	s = strings.ReplaceAll(s, "crohr", v.sender)
	for _, n := range []string{"683245122", "143185231", "31275968012", "11183520977", "6114"} {
		x, _ := strconv.ParseInt(n, 10, 64)
		s = strings.ReplaceAll(s, n, strconv.FormatInt(x*int64(i+3)+int64(i)*7919, 10))
	}
	return []byte(s)
}

func sortedGlob(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no samples match %s", pattern)
	}
	sort.Strings(m)
	return m, nil
}

func compactFile(name string) ([]byte, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	b, err := compact(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

func compact(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

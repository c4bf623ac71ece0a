package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// chromiumInstall is what a person runs when the browser is missing.
const chromiumInstall = "bash .ci/chromium.sh (apt-get install -y --no-install-recommends chromium)"

// chromium locates headless Chromium: $STREAMFOLD_CHROMIUM, else
// /usr/bin/chromium. A missing browser skips the test, or fails it under
// STREAMFOLD_REQUIRE_SERVICES=1 (as `make test` and CI run).
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("STREAMFOLD_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("headless Chromium not found at %s (set STREAMFOLD_CHROMIUM or install it: %s)", path, chromiumInstall)
		if testenv.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// browser runs one headless Chromium per call, each with a fresh profile;
// calls may run in parallel (each is its own process).
type browser struct {
	path string
}

func newBrowser(t *testing.T) *browser { return &browser{path: chromium(t)} }

// args are the flags of every run: headless, no sandbox (root in CI), and
// no background networking (the machine's network is closed).
func (b *browser) args(t *testing.T, extra ...string) []string {
	return append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(),
	}, extra...)
}

// chromiumTimeout bounds one Chromium run. A render takes a few seconds;
// the margin is for a 2-core CI machine that is also running DynamoDB Local
// under the load of the other test packages.
const chromiumTimeout = 2 * time.Minute

// run starts Chromium and returns its standard output.
func (b *browser) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.path, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// /usr/bin/chromium is a shell script: on a timeout end its whole
	// process group, not just the shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = redact(a)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium %s: timed out after %s; stderr:\n%s", strings.Join(shown, " "), chromiumTimeout, tail(stderr.String(), 2000))
	}
	if err != nil {
		t.Fatalf("chromium %s: %v; stderr:\n%s", strings.Join(shown, " "), err, tail(stderr.String(), 2000))
	}
	return stdout.String()
}

// virtualTime is how much virtual time the page gets before the DOM is
// dumped or the screenshot taken. Headless Chromium does not let virtual
// time advance while network fetches are pending, so a slow API delays the
// dump instead of cutting the page short; the page has no timers to wait
// for, so the budget is rarely used up.
const virtualTime = "--virtual-time-budget=20000"

// dom loads url and returns the parsed DOM after the page has run.
func (b *browser) dom(t *testing.T, url string) *node {
	t.Helper()
	start := time.Now()
	out := b.run(t, b.args(t, virtualTime, "--window-size=1400,2200", "--dump-dom", url)...)
	t.Logf("chromium --dump-dom %s: %d bytes in %s", redact(url), len(out), time.Since(start).Round(time.Millisecond))
	if !strings.Contains(out, "</html>") {
		t.Fatalf("chromium --dump-dom printed no document:\n%s", tail(out, 2000))
	}
	return parseHTML(t, out)
}

// screenshot loads url and writes a PNG of the window (1400x2200) to path.
func (b *browser) screenshot(t *testing.T, url, path string) {
	t.Helper()
	b.screenshotSized(t, url, path, "1400,2200")
}

// screenshotSized is screenshot with the window's size ("width,height").
func (b *browser) screenshotSized(t *testing.T, url, path, size string) {
	t.Helper()
	start := time.Now()
	b.run(t, b.args(t, virtualTime, "--window-size="+size, "--screenshot="+path, url)...)
	st, err := os.Stat(path)
	if err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (size %v): expected a PNG of the page", path, err, st)
	}
	head := make([]byte, 8)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Read(head); err != nil || string(head) != "\x89PNG\r\n\x1a\n" {
		t.Fatalf("screenshot %s is not a PNG (%q)", path, head)
	}
	t.Logf("screenshot %s: %d bytes in %s", path, st.Size(), time.Since(start).Round(time.Millisecond))
}

// artifactDir is where a test keeps its screenshots: t.ArtifactDir() (kept
// under the output directory with `go test -artifacts`), and also
// $STREAMFOLD_ARTIFACTS/<test name> when that is set.
func artifactDir(t *testing.T) (dir string, keep func(path string)) {
	t.Helper()
	dir = t.ArtifactDir()
	keep = func(path string) {
		t.Helper()
		t.Logf("artifact: %s", path)
		root := os.Getenv("STREAMFOLD_ARTIFACTS")
		if root == "" {
			return
		}
		dst := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"), filepath.Base(path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("artifact copy: %s", dst)
	}
	return dir, keep
}

// redact hides the token in a URL for logs.
func redact(url string) string {
	i := strings.Index(url, "token=")
	if i < 0 {
		return url
	}
	j := strings.IndexByte(url[i:], '&')
	if j < 0 {
		return url[:i] + "token=…"
	}
	return url[:i] + "token=…" + url[i+j:]
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

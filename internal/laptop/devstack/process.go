package devstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidRecord is the content of a pid file: the process and the exact argv we
// started it with, so a recycled pid is never mistaken for our service.
type pidRecord struct {
	PID     int       `json:"pid"`
	Argv    []string  `json:"argv"`
	Started time.Time `json:"started"`
}

func readPidFile(path string) (*pidRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r pidRecord
	if err := json.Unmarshal(b, &r); err != nil || r.PID <= 0 || len(r.Argv) == 0 {
		return nil, fmt.Errorf("devstack: %s is not a devstack pid file", path)
	}
	return &r, nil
}

func writePidFile(path string, r *pidRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// procArgv reads /proc/PID/cmdline. A zombie or vanished process yields an
// empty argv or an error.
func procArgv(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\x00"), nil
}

// alive reports whether the recorded pid is a live process with the recorded argv.
func (r *pidRecord) alive() bool {
	argv, err := procArgv(r.PID)
	return err == nil && slices.Equal(argv, r.Argv)
}

var errProcessGone = errors.New("process is gone")

// gone is the wait condition for a process of ours that this call did not start.
func (r *pidRecord) gone() (bool, error) {
	if r.alive() {
		return false, nil
	}
	return true, errProcessGone
}

// checkTools reports ErrToolMissing if spec's files or executable are not there.
func checkTools(spec launchSpec) error {
	for _, f := range spec.Files {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%w: %s needs %s", ErrToolMissing, spec.Name, f)
		}
	}
	if _, err := exec.LookPath(spec.Path); err != nil {
		what := spec.Path
		if spec.Path == "java" {
			what = "java (a Java 17 runtime) on PATH"
		}
		return fmt.Errorf("%w: %s needs %s: %v", ErrToolMissing, spec.Name, what, err)
	}
	return nil
}

// start launches spec detached from the caller: own process group, stdin
// /dev/null, stdout and stderr appended to logPath. It writes the pid file and
// returns a channel that receives the exit status if the process ends while
// this process is alive (a goroutine reaps it, so it never lingers as a zombie).
func start(spec launchSpec, pidPath, logPath, dir string) (*pidRecord, <-chan error, error) {
	if err := checkTools(spec); err != nil {
		return nil, nil, err
	}
	path, err := exec.LookPath(spec.Path)
	if err != nil {
		return nil, nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("devstack: open log: %w", err)
	}
	defer logf.Close() // the child keeps its own descriptor
	fmt.Fprintf(logf, "\n=== devstack %s: starting %s\n", time.Now().Format(time.RFC3339), strings.Join(spec.Args, " "))

	cmd := &exec.Cmd{
		Path:        path,
		Args:        spec.Args,
		Env:         append(os.Environ(), spec.Env...),
		Dir:         dir,
		Stdout:      logf,
		Stderr:      logf,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("devstack: start %s: %w", spec.Name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	rec := &pidRecord{PID: cmd.Process.Pid, Argv: spec.Args, Started: time.Now().UTC()}
	if err := writePidFile(pidPath, rec); err != nil {
		_ = cmd.Process.Kill()
		return nil, nil, fmt.Errorf("devstack: write pid file: %w", err)
	}
	return rec, exited, nil
}

// Grace periods for stop.
const (
	termGrace = 10 * time.Second
	killGrace = 5 * time.Second
)

// stop sends SIGTERM to rec's process (after checking it is still ours), waits
// up to termGrace for it to go, then SIGKILL and waits up to killGrace.
func stop(ctx context.Context, rec *pidRecord) error {
	for _, step := range []struct {
		sig   syscall.Signal
		grace time.Duration
	}{{syscall.SIGTERM, termGrace}, {syscall.SIGKILL, killGrace}} {
		if !rec.alive() {
			return nil
		}
		if err := syscall.Kill(rec.PID, step.sig); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return nil
			}
			return fmt.Errorf("devstack: signal pid %d: %w", rec.PID, err)
		}
		if waitGone(ctx, rec, step.grace) {
			return nil
		}
	}
	return fmt.Errorf("devstack: pid %d (%s) still alive after SIGKILL", rec.PID, rec.Argv[0])
}

func waitGone(ctx context.Context, rec *pidRecord, grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !rec.alive() {
			return true
		}
		select {
		case <-ctx.Done():
			return !rec.alive()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return !rec.alive()
}

// portOpen reports whether something accepts TCP connections on host:port.
func portOpen(host string, port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

var probeClient = &http.Client{
	Timeout: 2 * time.Second,
	// Never go through a proxy from the environment: the services are local.
	Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
}

// probeDynamoDB sends ListTables. DynamoDB Local does not verify signatures,
// but it wants an Authorization header of the SigV4 shape to find the access key.
func probeDynamoDB(ctx context.Context, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", strings.NewReader(`{"Limit":1}`))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("X-Amz-Date", now.Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/"+now.Format("20060102")+
		"/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0")
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"TableNames"`)) {
		return fmt.Errorf("ListTables: HTTP %d: %.200s", resp.StatusCode, body)
	}
	return nil
}

// probeMinIO checks MinIO's liveness endpoint.
func probeMinIO(ctx context.Context, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/minio/health/live", nil)
	if err != nil {
		return err
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/minio/health/live: HTTP %d", resp.StatusCode)
	}
	return nil
}

// logTail returns the last n lines of a log file (at most 8 KiB), indented.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "    (no log: " + err.Error() + ")"
	}
	defer f.Close()
	const max = 8 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(-max, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to write from the server while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs `streamfold serve` in the background until the returned
// stop is called; it returns the base URL and the server's stderr.
func startServe(t *testing.T, env map[string]string, args ...string) (base string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	e := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(k string) string { return env[k] }}
	code := make(chan int, 1)
	go func() { code <- run(ctx, e, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(60 * time.Second)
	for base == "" {
		select {
		case c := <-code:
			cancel()
			t.Fatalf("serve exited early with %d: %s", c, stderr.String())
		default:
		}
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	result := 0
	stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case result = <-code:
			case <-time.After(15 * time.Second):
				t.Fatal("serve did not stop within 15 s of Ctrl-C")
			}
		})
		return result
	}
	t.Cleanup(func() { stop() })
	return base, stderr, stop
}

func httpGet(t *testing.T, url, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// The serve tests need no DynamoDB: health, auth, parameter checks and the
// dashboard are answered before any query is sent.
var serveEnv = map[string]string{"STREAMFOLD_DYNAMODB_ENDPOINT": "http://127.0.0.1:1"}

func TestServeWithToken(t *testing.T) {
	const tok = "serve-test-token-0123456789"
	base, stderr, stop := startServe(t, serveEnv, "--token", tok)
	if strings.Contains(stderr.String(), tok) {
		t.Fatal("a given token is printed")
	}
	checks := []struct {
		path, token string
		status      int
		body        string
	}{
		{"/api/health", "", 200, `"status":"ok"`},
		{"/api/messages?stage=dev", "", 401, `"code":"unauthorized"`},
		{"/api/messages?stage=dev", "wrong-token-wrong-token", 401, `"code":"unauthorized"`},
		{"/api/messages", tok, 400, `"param":"stage"`},
		{"/api/messages?stage=dev&limit=201", tok, 400, `limit: must be at most 200`},
		{"/api/messages?stage=dev&cursor=bm9wZQ", tok, 400, `"code":"bad_cursor"`},
		{"/", "", 200, "<html"},
	}
	for _, c := range checks {
		status, body, _ := httpGet(t, base+c.path, c.token)
		if status != c.status || !strings.Contains(strings.ToLower(body), strings.ToLower(c.body)) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, status, body, c.status, c.body)
		}
	}
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d after Ctrl-C: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Fatalf("no shutdown message: %s", stderr.String())
	}
	if _, err := http.Get(base + "/api/health"); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
}

func TestServeGeneratesToken(t *testing.T) {
	base, stderr, _ := startServe(t, serveEnv)
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/#token=([A-Za-z0-9_-]+)`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] != base || len(m[2]) < 16 {
		t.Fatalf("no dashboard URL with a generated token on stderr: %s", stderr.String())
	}
	if status, body, _ := httpGet(t, base+"/api/messages", m[2]); status != 400 {
		t.Fatalf("the printed token is not accepted: %d %s", status, body)
	}
	if status, _, _ := httpGet(t, base+"/api/messages", ""); status != 401 {
		t.Fatalf("no token: %d", status)
	}
}

func TestServeUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantText string
	}{
		{"help", []string{"serve", "-h"}, exitOK, "Authorization: Bearer TOKEN"},
		{"short token", []string{"serve", "--addr", "127.0.0.1:0", "--token", "short"}, exitUsage, "Config.Token: must be at least 16 characters"},
		{"short cursor key", []string{"serve", "--addr", "127.0.0.1:0", "--cursor-key", "short"}, exitUsage, "CursorKey: must be at least 16 bytes"},
		{"page size above 200", []string{"serve", "--addr", "127.0.0.1:0", "--max-page-size", "500"}, exitUsage, "MaxPageSize"},
		{"bad address", []string{"serve", "--addr", "256.0.0.1:99999"}, exitRuntime, "serve: listen"},
		{"argument", []string{"serve", "now"}, exitUsage, `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, serveEnv, "", tt.args...)
			if code != tt.wantCode || !strings.Contains(out+errOut, tt.wantText) {
				t.Fatalf("exit %d (want %d): %s%s", code, tt.wantCode, out, errOut)
			}
		})
	}
}

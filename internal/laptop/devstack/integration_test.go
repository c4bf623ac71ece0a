package devstack

import (
	"context"
	"errors"
	mathrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePorts returns a port p such that p, ..., p+n-1 are free on 127.0.0.1
// (each was listened on and released). Ports come at random from
// 20000-27999: not the dev stack's (8766/9766), the test stacks' (28766 and
// up) nor the usual ephemeral range, so the test runs beside any of them,
// and beside another run of itself.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for range 200 {
		p := 20000 + mathrand.IntN(8000-n)
		free := true
		for i := range n {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+i)))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return p
		}
	}
	t.Fatalf("no %d free consecutive ports in 20000-27999", n)
	return 0
}

// toolsDir finds the installed tools: $TOOLS_DIR, else .tools at the module root.
// It skips the test when they are missing, or fails it when
// STREAMFOLD_REQUIRE_SERVICES=1.
func toolsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLS_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, ".tools")
				break
			}
			if filepath.Dir(d) == d {
				t.Fatalf("no go.mod above %s", wd)
			}
		}
	}
	c := Config{ToolsDir: dir}
	c.SetDefaults()
	for _, spec := range []launchSpec{dynamoDBSpec(c), minioSpec(c)} {
		if err := checkTools(spec); err != nil {
			if os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" {
				t.Fatalf("STREAMFOLD_REQUIRE_SERVICES=1 but the tools are not installed: %v", err)
			}
			t.Skipf("skipping: %v", err)
		}
	}
	return dir
}

func TestIntegrationUpCheckDown(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts DynamoDB Local and MinIO (-short)")
	}
	// MinIO takes two ports: the API's and the console's (the next one).
	itDynamoDBPort, itS3Port := freePorts(t, 1), freePorts(t, 2)
	cfg := Config{
		ToolsDir:     toolsDir(t),
		StateDir:     t.TempDir(),
		DynamoDBPort: itDynamoDBPort,
		S3Port:       itS3Port,
		StartTimeout: 90 * time.Second,
	}
	ctx := context.Background()
	t.Cleanup(func() {
		if _, err := Down(ctx, cfg); err != nil {
			t.Errorf("cleanup Down: %v", err)
		}
	})

	before, err := Check(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if before.DynamoDB.Running || before.S3.Running || portOpen("127.0.0.1", itDynamoDBPort) || portOpen("127.0.0.1", itS3Port) {
		t.Fatalf("ports %d/%d are already in use before the test: %+v", itDynamoDBPort, itS3Port, before)
	}

	t0 := time.Now()
	up, err := Up(ctx, cfg)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Logf("Up took %s", time.Since(t0).Round(time.Millisecond))
	wantSpecs := map[string]launchSpec{}
	abs, err := prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []launchSpec{dynamoDBSpec(abs), minioSpec(abs)} {
		wantSpecs[s.Name] = s
	}
	for _, s := range up.All() {
		if !s.Running || !s.StartedByUs || s.PID <= 0 {
			t.Errorf("after Up: %+v, want Running, StartedByUs and a PID", s)
			continue
		}
		argv, err := procArgv(s.PID)
		if err != nil || !slices.Equal(argv, wantSpecs[s.Name].Args) {
			t.Errorf("%s: /proc/%d/cmdline = %q, %v; want %q", s.Name, s.PID, argv, err, wantSpecs[s.Name].Args)
		}
		if _, err := os.Stat(s.LogFile); err != nil {
			t.Errorf("%s: log file: %v", s.Name, err)
		}
	}
	if up.DynamoDB.Endpoint != "http://127.0.0.1:"+strconv.Itoa(itDynamoDBPort) || up.S3.Endpoint != "http://127.0.0.1:"+strconv.Itoa(itS3Port) {
		t.Errorf("endpoints = %q, %q", up.DynamoDB.Endpoint, up.S3.Endpoint)
	}

	// A second Up reuses our processes.
	again, err := Up(ctx, cfg)
	if err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if again != up {
		t.Errorf("second Up changed the status:\n got  %+v\n want %+v", again, up)
	}

	// Another state dir sees the same ports served by processes it did not start:
	// it reuses them, reports StartedByUs=false, and its Down leaves them alone.
	foreign := cfg
	foreign.StateDir = t.TempDir()
	fst, err := Up(ctx, foreign)
	if err != nil {
		t.Fatalf("Up with a foreign state dir: %v", err)
	}
	for _, s := range fst.All() {
		if !s.Running || s.StartedByUs || s.PID != 0 {
			t.Errorf("foreign Up: %+v, want Running and not StartedByUs", s)
		}
	}
	if _, err := Down(ctx, foreign); err != nil {
		t.Fatalf("foreign Down: %v", err)
	}
	if st, _ := Check(ctx, cfg); !st.Ready() {
		t.Fatalf("Down of a foreign state dir stopped our services: %+v", st)
	}

	// Check agrees with Up.
	st, err := Check(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st != up {
		t.Errorf("Check:\n got  %+v\n want %+v", st, up)
	}

	// Status by state dir alone (the ports left at their defaults, as in
	// "dev status --state-dir DIR") reports this stack on its ports.
	byDir, err := Check(ctx, Config{ToolsDir: cfg.ToolsDir, StateDir: cfg.StateDir})
	if err != nil {
		t.Fatal(err)
	}
	if byDir != up {
		t.Errorf("Check by state dir:\n got  %+v\n want %+v", byDir, up)
	}

	// Down by state dir alone (the ports left at their defaults, as in
	// "dev down --state-dir DIR") stops this stack and reports its ports.
	t0 = time.Now()
	down, err := Down(ctx, Config{ToolsDir: cfg.ToolsDir, StateDir: cfg.StateDir})
	if err != nil {
		t.Fatalf("Down: %v", err)
	}
	t.Logf("Down took %s", time.Since(t0).Round(time.Millisecond))
	for _, s := range down.All() {
		if s.Running || s.StartedByUs || s.PID != 0 {
			t.Errorf("after Down: %+v, want nothing", s)
		}
	}
	if down.DynamoDB.Endpoint != up.DynamoDB.Endpoint || down.S3.Endpoint != up.S3.Endpoint {
		t.Errorf("Down reported %s and %s, want the stopped stack's %s and %s", down.DynamoDB.Endpoint, down.S3.Endpoint, up.DynamoDB.Endpoint, up.S3.Endpoint)
	}
	for _, port := range []int{itDynamoDBPort, itS3Port, itS3Port + 1} {
		if portOpen("127.0.0.1", port) {
			t.Errorf("port %d still accepts connections after Down", port)
		}
	}
	for _, name := range []string{NameDynamoDB, NameMinIO} {
		if _, err := os.Stat(pidFile(abs, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("pid file %s left after Down: %v", name, err)
		}
	}
	for _, s := range up.All() {
		if argv, _ := procArgv(s.PID); slices.Equal(argv, wantSpecs[s.Name].Args) {
			t.Errorf("%s pid %d still alive after Down", s.Name, s.PID)
		}
	}
}

// A service that cannot start reports ErrNotReady with its log, and Up rolls
// back what it started (here MinIO).
//
// DynamoDB Local has no listen-address option and binds the wildcard address,
// so a listener on 127.0.0.2:PORT (invisible to our 127.0.0.1 port probe)
// makes its bind fail after it has started.
func TestIntegrationNotReadyShowsLog(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts DynamoDB Local and MinIO (-short)")
	}
	cfg := Config{
		ToolsDir:     toolsDir(t),
		StateDir:     t.TempDir(),
		DynamoDBPort: freePorts(t, 1),
		S3Port:       freePorts(t, 2),
		// DynamoDB Local exits once its bind fails (about 30 s on a quiet
		// machine: the JVM starts first), and Up returns then; the timeout
		// only bounds a machine so loaded that the JVM takes minutes.
		StartTimeout: 10 * time.Minute,
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(cfg.DynamoDBPort)))
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	defer l.Close()
	ctx := context.Background()
	t.Cleanup(func() { _, _ = Down(ctx, cfg) })

	st, err := Up(ctx, cfg)
	if !errors.Is(err, ErrNotReady) {
		t.Fatalf("Up with DynamoDB Local unable to bind: err = %v, want ErrNotReady", err)
	}
	if !strings.Contains(err.Error(), "dynamodb-local.log") || !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("error does not carry the log tail:\n%v", err)
	}
	t.Logf("error as the user sees it:\n%v", err)
	if st.DynamoDB.StartedByUs || st.S3.StartedByUs || st.S3.Running {
		t.Errorf("Up did not roll back: %+v", st)
	}
	if portOpen("127.0.0.1", cfg.S3Port) {
		t.Errorf("MinIO still listening on %d after a failed Up", cfg.S3Port)
	}
}

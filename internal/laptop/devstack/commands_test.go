package devstack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testConfig() Config {
	c := Config{ToolsDir: "/t", Host: "127.0.0.1", DynamoDBPort: 18766, S3Port: 19766}
	c.SetDefaults()
	return c
}

func TestDynamoDBSpec(t *testing.T) {
	got := dynamoDBSpec(testConfig())
	want := launchSpec{
		Name: "dynamodb-local",
		Path: "java",
		Args: []string{
			"java",
			"-Djava.library.path=/t/dynamodb-local/DynamoDBLocal_lib",
			"-jar", "/t/dynamodb-local/DynamoDBLocal.jar",
			"-inMemory", "-sharedDb", "-disableTelemetry",
			"-port", "18766",
		},
		Env:   []string{"DDB_LOCAL_TELEMETRY=0"},
		Files: []string{"/t/dynamodb-local/DynamoDBLocal.jar", "/t/dynamodb-local/DynamoDBLocal_lib"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dynamoDBSpec:\n got  %#v\n want %#v", got, want)
	}
}

func TestMinIOSpec(t *testing.T) {
	got := minioSpec(testConfig())
	want := launchSpec{
		Name: "minio",
		Path: "/t/bin/minio",
		Args: []string{
			"/t/bin/minio", "server", "/t/run/minio-data",
			"--address", "127.0.0.1:19766",
			"--console-address", "127.0.0.1:19767",
		},
		Env: []string{
			"MINIO_ROOT_USER=streamfold",
			"MINIO_ROOT_PASSWORD=streamfold-secret",
			"MINIO_BROWSER=off",
			"MINIO_UPDATE=off",
			"MINIO_CALLHOME_ENABLE=off",
		},
		Files: []string{"/t/bin/minio"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("minioSpec:\n got  %#v\n want %#v", got, want)
	}

	c := testConfig()
	c.Host = "::1"
	args := minioSpec(c).Args
	if args[4] != "[::1]:19766" || args[6] != "[::1]:19767" {
		t.Errorf("minioSpec with ::1: addresses %q %q", args[4], args[6])
	}
}

func TestStateFiles(t *testing.T) {
	c := testConfig()
	if got := pidFile(c, NameMinIO); got != "/t/run/minio.pid" {
		t.Errorf("pidFile = %q", got)
	}
	if got := logFile(c, NameDynamoDB); got != "/t/run/dynamodb-local.log" {
		t.Errorf("logFile = %q", got)
	}
}

func TestPidRecordAlive(t *testing.T) {
	self, err := procArgv(os.Getpid())
	if err != nil || len(self) == 0 {
		t.Fatalf("procArgv(self) = %q, %v", self, err)
	}
	if !(&pidRecord{PID: os.Getpid(), Argv: self}).alive() {
		t.Error("alive() = false for this process with its own argv")
	}
	other := append(append([]string{}, self...), "-not-the-same")
	if (&pidRecord{PID: os.Getpid(), Argv: other}).alive() {
		t.Error("alive() = true although argv differs: a recycled pid would be signalled")
	}

	path := filepath.Join(t.TempDir(), "x.pid")
	rec := &pidRecord{PID: os.Getpid(), Argv: self, Started: time.Unix(1, 0).UTC()}
	if err := writePidFile(path, rec); err != nil {
		t.Fatal(err)
	}
	back, err := readPidFile(path)
	if err != nil || !reflect.DeepEqual(back, rec) {
		t.Fatalf("readPidFile = %+v, %v; want %+v", back, err, rec)
	}
	if err := os.WriteFile(path, []byte("1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPidFile(path); err == nil {
		t.Error("readPidFile accepted a bare pid (no argv to verify)")
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := logTail(path, 3), "    line 28\n    line 29\n    line 30"; got != want {
		t.Errorf("logTail = %q, want %q", got, want)
	}
}

func TestProbes(t *testing.T) {
	ctx := context.Background()
	ddb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.ListTables" ||
			!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=local/") {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Write([]byte(`{"TableNames":[]}`))
	}))
	defer ddb.Close()
	if err := probeDynamoDB(ctx, ddb.URL); err != nil {
		t.Errorf("probeDynamoDB(fake DynamoDB) = %v", err)
	}

	minio := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/minio/health/live" {
			http.NotFound(w, r)
		}
	}))
	defer minio.Close()
	if err := probeMinIO(ctx, minio.URL); err != nil {
		t.Errorf("probeMinIO(fake MinIO) = %v", err)
	}
	// Each probe must reject the other service.
	if err := probeDynamoDB(ctx, minio.URL); err == nil {
		t.Error("probeDynamoDB accepted a server that is not DynamoDB")
	}
	if err := probeMinIO(ctx, ddb.URL); err == nil {
		t.Error("probeMinIO accepted a server that is not MinIO")
	}
}

// freePort returns a port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestUpToolMissing(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{ToolsDir: dir, DynamoDBPort: freePort(t), S3Port: freePort(t), StartTimeout: 5 * time.Second}
	st, err := Up(context.Background(), cfg)
	if !errors.Is(err, ErrToolMissing) {
		t.Fatalf("Up with empty ToolsDir: err = %v, want ErrToolMissing", err)
	}
	if !strings.Contains(err.Error(), "make tools") {
		t.Errorf("error does not tell to run `make tools`: %v", err)
	}
	if st.DynamoDB.StartedByUs || st.S3.StartedByUs || st.DynamoDB.Running || st.S3.Running {
		t.Errorf("Up reported something running: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "run", "minio.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file written although nothing started: %v", err)
	}
}

func TestUpPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accept and drop: answers TCP, not DynamoDB
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	cfg := Config{ToolsDir: t.TempDir(), DynamoDBPort: l.Addr().(*net.TCPAddr).Port, S3Port: freePort(t)}
	_, err = Up(context.Background(), cfg)
	if !errors.Is(err, ErrPortInUse) {
		t.Fatalf("Up with DynamoDB port taken: err = %v, want ErrPortInUse", err)
	}
}

package lambdatier

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/runtimeapi"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// TestColdStart measures the init of built bootstraps side by side: the time
// from the process's start to its first Runtime API request for an
// invocation (GET .../invocation/next), which is what Lambda bills and
// reports as Init Duration for a provided runtime, without the sandbox's own
// part (downloading and unpacking the zip).
//
// It runs only when STREAMFOLD_COLDSTART_DIR names a directory holding one
// subdirectory per variant, each with a "bootstrap" and, optionally, an
// "env" file of KEY=VALUE lines (the function's environment; Lambda's
// reserved variables are added). Variants are started in turn,
// STREAMFOLD_COLDSTART_N rounds (default 20), so that a load spike on the
// machine hits every variant alike. docs/archiver.md ("Cost of Iceberg in
// the Lambda") has the figures and the commands.
func TestColdStart(t *testing.T) {
	dir := os.Getenv("STREAMFOLD_COLDSTART_DIR")
	if dir == "" {
		t.Skip("set STREAMFOLD_COLDSTART_DIR to measure (see the doc comment)")
	}
	rounds := 20
	if n, err := strconv.Atoi(os.Getenv("STREAMFOLD_COLDSTART_N")); err == nil && n > 0 {
		rounds = n
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name, boot string
		env        map[string]string
		times      []time.Duration
	}
	var vs []*variant
	for _, e := range entries {
		boot := filepath.Join(dir, e.Name(), "bootstrap")
		if _, err := os.Stat(boot); err != nil {
			continue
		}
		v := &variant{name: e.Name(), boot: boot, env: map[string]string{}}
		if f, err := os.Open(filepath.Join(dir, e.Name(), "env")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if k, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && k != "" {
					v.env[k] = val
				}
			}
			f.Close()
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		t.Fatalf("%s: no <variant>/bootstrap", dir)
	}
	once := func(v *variant) (time.Duration, error) {
		srv, err := runtimeapi.New()
		if err != nil {
			return 0, err
		}
		defer srv.Close()
		cmd := exec.Command(v.boot)
		cmd.Dir = filepath.Dir(v.boot)
		cmd.Env = lambdaEnv("archiver", 512, srv.Addr(), filepath.Dir(v.boot), v.env)
		logs := &testenv.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		exited := make(chan struct{})
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		go func() { _ = cmd.Wait(); close(exited) }()
		defer func() { _ = cmd.Process.Kill(); <-exited }()
		select {
		case <-srv.Polled():
			return time.Since(start), nil
		case <-exited:
			return 0, fmt.Errorf("%s: exited during init: %s", v.name, logs)
		case <-srv.InitFailed():
			return 0, fmt.Errorf("%s: init failed: %v: %s", v.name, srv.InitError(), logs)
		case <-time.After(10 * time.Second):
			return 0, fmt.Errorf("%s: no /next within 10 s: %s", v.name, logs)
		}
	}
	for _, v := range vs { // warm the page cache: the first start reads the file
		if _, err := once(v); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < rounds; r++ {
		for _, v := range vs {
			d, err := once(v)
			if err != nil {
				t.Fatal(err)
			}
			v.times = append(v.times, d)
		}
	}
	t.Logf("%-28s %10s %10s %10s %10s  (%d rounds, process start to first /next)", "variant", "size", "min", "median", "p90", rounds)
	for _, v := range vs {
		sort.Slice(v.times, func(i, j int) bool { return v.times[i] < v.times[j] })
		st, _ := os.Stat(v.boot)
		q := func(p float64) time.Duration { return v.times[int(p*float64(len(v.times)-1))] }
		t.Logf("%-28s %10d %10v %10v %10v", v.name, st.Size(), q(0).Round(10*time.Microsecond), q(0.5).Round(10*time.Microsecond), q(0.9).Round(10*time.Microsecond))
	}
}

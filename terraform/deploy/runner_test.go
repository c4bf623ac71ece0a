package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// terraformBin is the real terraform from `make tools`; the test skips
// without it (fails under STREAMFOLD_REQUIRE_SERVICES=1).
func terraformBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".tools")
	}
	bin, err := filepath.Abs(filepath.Join(dir, "bin", "terraform"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "terraform binary not found at " + bin + " (make tools): " + err.Error()
		if os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// miniConfig has the same backend declaration as terraform/versions.tf and
// the variables deploy always passes, but no provider: terraform runs it
// for real without the network.
const miniConfig = `terraform {
  backend "s3" {}
}

variable "stage" {
  type = string
}

variable "prefix" {
  type = string
}

output "name" {
  value = "${var.prefix}-${var.stage}"
}
`

// TestRunnerLocalStatePerStage runs the real terraform through Runner:
// without a backend bucket, the override swaps the S3 backend for a local
// one and each stage keeps its own state file; plan saves a plan that apply
// applies; output reads the stage's own state.
func TestRunnerLocalStatePerStage(t *testing.T) {
	bin := terraformBin(t)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(miniConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	runner := func(stage string, auto bool) *Runner {
		cfg := Config{Stage: stage, WorkingDir: dir, TerraformPath: bin, AutoApprove: auto}
		cfg.SetDefaults()
		var out bytes.Buffer
		r, err := NewRunner(cfg, &out, &out)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx := context.Background()

	dev := runner("dev", false)
	changes, err := dev.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !changes {
		t.Error("plan of a new stage reports no changes")
	}
	if _, err := os.Stat(filepath.Join(dir, "dev.tfplan")); err != nil {
		t.Fatalf("plan did not save dev.tfplan: %v", err)
	}
	if err := dev.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	if err := runner("prod", true).Apply(ctx); err != nil {
		t.Fatal(err)
	}
	for stage, want := range map[string]string{"dev": `"streamfold-dev"`, "prod": `"streamfold-prod"`} {
		if _, err := os.Stat(filepath.Join(dir, stage+".tfstate")); err != nil {
			t.Errorf("no %s.tfstate: %v", stage, err)
		}
		out, err := runner(stage, false).Output(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(out["name"].Value); got != want {
			t.Errorf("stage %s: output name = %s, want %s", stage, got, want)
		}
	}
	override, err := os.ReadFile(filepath.Join(dir, BackendOverrideFile))
	if err != nil || !strings.HasPrefix(string(override), overrideMarker) {
		t.Fatalf("override file: %v %q", err, override)
	}
	// terraform fmt accepts the generated file as it is.
	if out, err := exec.Command(bin, "fmt", "-check", "-diff", filepath.Join(dir, BackendOverrideFile)).CombinedOutput(); err != nil {
		t.Errorf("generated %s is not fmt clean: %v\n%s", BackendOverrideFile, err, out)
	}
}

// fakeTerraformEnv makes the test binary act as terraform (see TestMain).
const fakeTerraformEnv = "STREAMFOLD_DEPLOY_FAKE_TERRAFORM"

// TestMain lets the test binary stand in for terraform in
// TestRunnerInterrupt: like terraform (a Go program) it installs a SIGINT
// handler, so it gets the signal even where the test was started with
// SIGINT ignored (a shell script could not trap it then).
func TestMain(m *testing.M) {
	if os.Getenv(fakeTerraformEnv) == "1" {
		fakeTerraform(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// fakeTerraform answers `version`; any other command records that it
// started, waits for SIGINT (at most 30 s) and records that it got it.
func fakeTerraform(args []string) {
	if len(args) > 0 && args[0] == "version" {
		fmt.Println(`{"terraform_version":"1.5.7","platform":"linux_amd64","provider_selections":{},"terraform_outdated":false}`)
		os.Exit(0)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	if err := os.WriteFile("started", []byte(args[0]), 0o644); err != nil {
		os.Exit(3)
	}
	select {
	case <-sig:
		_ = os.WriteFile("interrupted", []byte(args[0]), 0o644)
		os.Exit(130)
	case <-time.After(30 * time.Second):
		os.Exit(4)
	}
}

// TestRunnerInterrupt: cancelling the context (what Ctrl-C does in the CLI)
// sends terraform SIGINT, and the call returns an error wrapping
// context.Canceled once terraform has exited.
func TestRunnerInterrupt(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeTerraformEnv, "1")
	dir := t.TempDir()
	cfg := Config{Stage: "dev", WorkingDir: dir, TerraformPath: exe}
	cfg.SetDefaults()
	r, err := NewRunner(cfg, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Init(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "started")); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fake terraform did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Init after cancel = %v, want an error wrapping context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Init did not return after cancel")
	}
	got, err := os.ReadFile(filepath.Join(dir, "interrupted"))
	if err != nil || string(got) != "init" {
		t.Fatalf("terraform init was not interrupted with SIGINT (marker %q, %v)", got, err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v to stop; SIGINT should stop terraform at once, not the 60 s kill", d)
	}
}

func TestSyncBackendOverride(t *testing.T) {
	local := Config{Stage: "dev", TerraformPath: "terraform"}
	s3 := Config{Stage: "dev", TerraformPath: "terraform", BackendConfig: map[string]string{"bucket": "b"}}
	foreign := "terraform {\n  backend \"local\" {}\n}\n"
	tests := []struct {
		name     string
		existing string // "" = no file
		cfg      Config
		want     string // file content afterwards, "" = no file
		wantErr  error
	}{
		{"local state writes the override", "", local, "generated", nil},
		{"local state keeps it", "generated", local, "generated", nil},
		{"S3 removes ours", "generated", s3, "", nil},
		{"S3 without one", "", s3, "", nil},
		{"someone else's file, S3", foreign, s3, foreign, ErrForeignOverride},
		{"someone else's file, local", foreign, local, foreign, ErrForeignOverride},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := tt.cfg
			cfg.WorkingDir = dir
			cfg.SetDefaults()
			path := filepath.Join(dir, BackendOverrideFile)
			gen := BackendOverride(Config{Stage: "dev"})
			expand := func(s string) string {
				if s == "generated" {
					return gen
				}
				return s
			}
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(expand(tt.existing)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := SyncBackendOverride(cfg)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("SyncBackendOverride = %v, want %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch want := expand(tt.want); {
			case want == "" && rerr == nil:
				t.Fatalf("%s still exists", BackendOverrideFile)
			case want != "" && string(got) != want:
				t.Fatalf("%s =\n%s\nwant\n%s", BackendOverrideFile, got, want)
			}
		})
	}
	if BackendOverride(s3) != "" {
		t.Error("BackendOverride with a bucket must be empty")
	}
}

func TestCheckPackages(t *testing.T) {
	cfg := Config{Stage: "dev", WorkingDir: "terraform", TerraformPath: "terraform"}
	all := []string{"terraform/../dist/projector.zip", "terraform/../dist/archiver.zip", "terraform/../dist/ingest.zip", "terraform/../dist/api.zip", "terraform/../dist/reconcile.zip"}
	for i := range all {
		all[i] = filepath.Clean(all[i])
	}
	if err := CheckPackages(cfg, fakeEnv(nil, all...)); err != nil {
		t.Fatalf("all zips present: %v", err)
	}
	err := CheckPackages(cfg, fakeEnv(nil, all[0], all[2]))
	want := "deploy: Lambda packages missing: run `make package`: dist/archiver.zip, dist/api.zip, dist/reconcile.zip missing (a cmd that does not exist yet cannot be deployed)"
	if !errors.Is(err, ErrNoPackages) || err.Error() != want {
		t.Fatalf("CheckPackages = %v, want %q", err, want)
	}
	cfg.Vars = map[string]string{"package_dir": "/pkg"}
	if got := cfg.PackageDir(); got != "/pkg" {
		t.Errorf("PackageDir with package_dir=/pkg: %q", got)
	}
	// Preflight checks the packages for plan, apply and destroy only.
	env := fakeEnv(map[string]string{"AWS_PROFILE": "p"}, "/bin/terraform")
	cfg = Config{Stage: "dev", WorkingDir: "terraform", TerraformPath: "/bin/terraform"}
	for action, wantErr := range map[string]error{ActionPlan: ErrNoPackages, ActionApply: ErrNoPackages, ActionDestroy: ErrNoPackages, ActionOutput: nil, ActionInit: nil} {
		if err := Preflight(cfg, action, env); !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			t.Errorf("Preflight(%s) = %v, want %v", action, err, wantErr)
		}
	}
}

// TestRunError: a failing terraform command is one line (terraform's own
// messages were streamed to stderr), and the cause stays reachable.
func TestRunError(t *testing.T) {
	bin := terraformBin(t)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("terraform {\n  backend \"s3\" {}\n}\n\nresource \"x\" {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Stage: "dev", WorkingDir: dir, TerraformPath: bin}
	cfg.SetDefaults()
	var stderr bytes.Buffer
	r, err := NewRunner(cfg, &bytes.Buffer{}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Init(context.Background())
	var re *RunError
	if !errors.As(err, &re) || re.Command != "init" || err.Error() != "deploy: terraform init: exit status 1" {
		t.Fatalf("Init = %v, want a one-line *RunError for init", err)
	}
	if !strings.Contains(stderr.String(), "Unclosed configuration block") || !strings.Contains(re.Err.Error(), "Unclosed configuration block") {
		t.Fatalf("terraform's message is neither streamed nor kept:\nstderr: %s\nerr: %v", stderr.String(), re.Err)
	}
}

package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestDeployCLI(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	home := t.TempDir() // no real ~/.aws/credentials
	noCreds := map[string]string{"HOME": home, "TOOLS_DIR": t.TempDir()}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no credentials", noCreds, []string{"deploy", "plan", "--stage", "dev", "--terraform", exe}, exitRuntime,
			"deploy: no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run where an IAM role is available and pass --assume-role-available)"},
		{"missing terraform", map[string]string{"HOME": home, "AWS_PROFILE": "p"}, []string{"deploy", "plan", "--stage", "dev", "--terraform", home + "/nope/terraform"}, exitRuntime,
			"run `make tools`"},
		{"bad stage", noCreds, []string{"deploy", "plan", "--stage", "qa"}, exitUsage, `Stage: "qa" is not dev, stage or prod`},
		{"destroy needs auto-approve", noCreds, []string{"deploy", "destroy", "--stage", "prod"}, exitUsage, "needs --auto-approve"},
		{"unknown subcommand", noCreds, []string{"deploy", "launch"}, exitUsage, `unknown subcommand "launch"`},
		{"no subcommand", noCreds, []string{"deploy"}, exitUsage, "streamfold deploy plan"},
		{"help", noCreds, []string{"deploy", "-h"}, exitOK, "Exit codes:"},
		{"plan help", noCreds, []string{"deploy", "plan", "-h"}, exitOK, "-backend-lock-table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runCLI(t, tt.env, "", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("stderr lacks %q:\n%s", tt.wantErr, stderr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v; preflight should fail fast", d)
			}
		})
	}
}

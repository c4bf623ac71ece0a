package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// TestDeployOfflinePlan runs `deploy plan --offline` with the real
// terraform and the hashicorp/aws provider built by `make tools` (the
// terraform package's plan tier checks the plan itself; this checks the
// command: no credentials, a summary, only sts:GetCallerIdentity asked).
func TestDeployOfflinePlan(t *testing.T) {
	tools := os.Getenv("TOOLS_DIR")
	if tools == "" {
		tools = filepath.Join("..", "..", ".tools")
	}
	tools, _ = filepath.Abs(tools)
	for _, need := range []string{filepath.Join(tools, "bin", "terraform"), filepath.Join(tools, "terraform.rc")} {
		if _, err := os.Stat(need); err != nil {
			msg := need + " not found: `make tools` builds terraform and the hashicorp/aws provider"
			if os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	// No AWS variables, no credentials file: the plan must not need them.
	env := map[string]string{"HOME": t.TempDir(), "TOOLS_DIR": tools}
	dir := filepath.Join("..", "..", "terraform")

	code, stdout, stderr := runCLI(t, env, "", "deploy", "plan", "--offline", "--stage", "prod", "--json", "--dir", dir,
		"--terraform", filepath.Join(tools, "bin", "terraform"))
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var sum struct {
		Stage     string         `json:"stage"`
		Total     int            `json:"resources_to_create"`
		Creates   map[string]int `json:"creates"`
		Calls     []string       `json:"aws_calls"`
		Account   string         `json:"account"`
		Placehold []string       `json:"placeholder_packages"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if sum.Stage != "prod" || sum.Creates["aws_dynamodb_table"] != len(schema.Tables()) || sum.Creates["aws_lambda_function"] == 0 {
		t.Fatalf("summary %+v: want prod, %d tables, the functions", sum, len(schema.Tables()))
	}
	n := 0
	for _, c := range sum.Creates {
		n += c
	}
	if n != sum.Total || n < 50 {
		t.Fatalf("resources_to_create %d, by type %d", sum.Total, n)
	}
	if len(sum.Calls) == 0 {
		t.Fatal("no AWS call recorded: the provider's credential check did not reach the local responder")
	}
	for _, c := range sum.Calls {
		if c != "sts:GetCallerIdentity" {
			t.Fatalf("AWS call %s; an offline plan asks only sts:GetCallerIdentity (all: %v)", c, sum.Calls)
		}
	}
	if !strings.Contains(stderr, "no AWS account is used") {
		t.Fatalf("stderr does not say the plan is offline:\n%s", stderr)
	}
	t.Logf("offline plan: %d resources to create; AWS calls %v; placeholders %v", sum.Total, sum.Calls, sum.Placehold)

	// Text: the count by type.
	code, stdout, stderr = runCLI(t, env, "", "deploy", "plan", "--offline", "--dir", dir, "--stage", "dev",
		"--terraform", filepath.Join(tools, "bin", "terraform"))
	if code != exitOK || !strings.Contains(stdout, "Offline plan for stage dev:") || !strings.Contains(stdout, "aws_dynamodb_table") {
		t.Fatalf("text: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestDeployOfflineUsage(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir(), "TOOLS_DIR": t.TempDir()}
	for _, args := range [][]string{
		{"deploy", "apply", "--offline", "--stage", "dev"},
		{"deploy", "plan", "--offline", "--stage", "dev", "--backend-bucket", "b"},
		{"deploy", "plan", "--offline", "--stage", "dev", "--dry-run"},
	} {
		if code, _, stderr := runCLI(t, env, "", args...); code != exitUsage || !strings.Contains(stderr, "--offline") && !strings.Contains(stderr, "offline") {
			t.Errorf("%v: exit %d, want %d naming --offline; stderr:\n%s", args, code, exitUsage, stderr)
		}
	}
}

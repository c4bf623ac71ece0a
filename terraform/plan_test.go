package terraform

// The plan tier: the configuration validated and planned by Terraform with
// the real hashicorp/aws provider, built from source by .ci/tools.sh
// (aws-provider) into a filesystem mirror, and the plan read back as JSON
// and checked against the code (plan_checks_test.go).
//
// Nothing leaves the machine: Terraform installs the provider only from the
// mirror ($TOOLS_DIR/terraform.rc), every AWS endpoint is a deploy.LocalAWS
// on 127.0.0.1 that answers sts:GetCallerIdentity and refuses (and records)
// anything else, HTTP(S)_PROXY point at a closed port for any other client,
// and the state is local (a backend override in a scratch copy).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/streamfold/streamfold/terraform/deploy"
)

// planTools returns the terraform binary and the CLI configuration that
// installs hashicorp/aws from the mirror; without them the test skips
// (fails under STREAMFOLD_REQUIRE_SERVICES=1), saying what to build.
func planTools(t *testing.T) (bin, rc string) {
	t.Helper()
	bin = terraformBin(t)
	dir := os.Getenv("TOOLS_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".tools")
	}
	rc, err := filepath.Abs(filepath.Join(dir, "terraform.rc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rc); err != nil {
		msg := fmt.Sprintf("%s not found: build the hashicorp/aws provider with `make tools TOOLS=aws-provider` (.ci/tools.sh; ~10 min on 2 cores): %v", rc, err)
		if os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin, rc
}

// planRun is one offline plan of a copy of the configuration.
type planRun struct {
	Result *deploy.OfflineResult
	Err    error
}

// runPlan writes files ("terraform/<name>.tf" -> text) into a scratch tree
// laid out like the repository and plans it offline for stage
// (deploy.OfflinePlan: init, validate -json, plan -refresh=false, show
// -json, every AWS endpoint on 127.0.0.1).
func runPlan(t *testing.T, files map[string][]byte, stage string) planRun {
	t.Helper()
	bin, rc := planTools(t)
	dir := copyTreeFiles(t, files)
	var log bytes.Buffer
	res, err := deploy.OfflinePlan(context.Background(), deploy.OfflineOptions{
		Config:        deploy.Config{Stage: stage, Prefix: "streamfold", WorkingDir: dir, TerraformPath: bin},
		CLIConfigFile: rc,
		Stdout:        &log,
		Stderr:        &log,
	})
	if res == nil {
		t.Fatalf("offline plan (stage %s): %v\n%s", stage, err, log.Bytes())
	}
	if err != nil && !errors.Is(err, deploy.ErrInvalidConfig) {
		err = fmt.Errorf("%w\n%s", err, errorSections(log.String()))
	}
	return planRun{Result: res, Err: err}
}

// errorSections keeps terraform's "Error:" paragraphs of an output (the
// plan's full listing is long and says nothing about the failure).
func errorSections(out string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "Error:") || strings.HasPrefix(trimmed, "│ Error:") {
			in = true
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	if b.Len() == 0 {
		return out
	}
	return b.String()
}

// diagnostics lists validate's diagnostics, one per line.
func diagnostics(v *tfjson.ValidateOutput) string {
	var b strings.Builder
	for _, d := range v.Diagnostics {
		where := ""
		if d.Range != nil {
			where = fmt.Sprintf(" (%s:%d)", d.Range.Filename, d.Range.Start.Line)
		}
		fmt.Fprintf(&b, "%s: %s%s: %s\n", d.Severity, d.Summary, where, d.Detail)
	}
	return b.String()
}

// plans caches one plan of the repository's configuration per stage: the
// checks share them (each takes tens of seconds).
var plans struct {
	sync.Mutex
	byStage map[string]planRun
}

// repoPlan returns the plan of terraform/*.tf for stage, failing the test
// if validate reports any diagnostic (warnings included), the plan fails,
// or it made any AWS call other than sts:GetCallerIdentity.
func repoPlan(t *testing.T, stage string) *tfjson.Plan {
	t.Helper()
	plans.Lock()
	defer plans.Unlock()
	if plans.byStage == nil {
		plans.byStage = map[string]planRun{}
	}
	r, ok := plans.byStage[stage]
	if !ok {
		start := time.Now()
		r = runPlan(t, readConfigFiles(t), stage)
		plans.byStage[stage] = r
		t.Logf("stage %s: offline plan in %s, %d AWS calls", stage, time.Since(start).Round(time.Second), len(r.Result.Calls))
	}
	if v := r.Result.Validate; v != nil && len(v.Diagnostics) > 0 {
		t.Fatalf("terraform validate: %d errors, %d warnings:\n%s", v.ErrorCount, v.WarningCount, diagnostics(v))
	}
	if r.Err != nil {
		t.Fatalf("offline plan (stage %s): %v", stage, r.Err)
	}
	return r.Result.Plan
}

// Package deploy drives Terraform (through github.com/hashicorp/terraform-exec)
// to plan, apply, destroy and read the outputs of streamfold's
// infrastructure in ../ (terraform/*.tf) for one stage.
//
// What to run is decided by pure functions (InitOptions, PlanOptions,
// ApplyOptions, DestroyOptions, OutputOptions and Args, which renders the
// equivalent terraform command line, and BackendOverride); Preflight checks
// the terraform binary, AWS credentials and the Lambda packages without
// touching the network; Runner does the work.
//
// State: versions.tf declares a partial `backend "s3" {}`. With a
// BackendConfig (a bucket), init passes it with -backend-config. Without
// one, Runner writes BackendOverrideFile, a git-ignored override that
// swaps in the local backend, and init passes path=<stage>.tfstate, so each
// stage keeps its own local state file; with a bucket again, Runner removes
// that file. Every init runs with -reconfigure, because the stages share one
// working directory (state is never migrated between backends: see
// docs/deployment.md).
//
// Runs are not concurrency-safe within one working directory (the .terraform
// directory and saved plans are per directory): run one deploy at a time.
package deploy

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
)

// Actions understood by Args and Runner.
const (
	ActionInit    = "init"
	ActionPlan    = "plan"
	ActionApply   = "apply"
	ActionDestroy = "destroy"
	ActionOutput  = "output"
)

// Config says what to deploy and where its state lives.
type Config struct {
	// Stage is dev, stage or prod (Terraform variable "stage").
	Stage string
	// Prefix is the first part of every resource name (variable "prefix");
	// default "streamfold".
	Prefix string
	// WorkingDir holds the *.tf files; default "terraform".
	WorkingDir string
	// TerraformPath is the terraform binary. The CLI resolves the default
	// (TOOLS_DIR/bin/terraform if present, else "terraform" on PATH).
	TerraformPath string
	// BackendConfig is passed to init as -backend-config=K=V (S3 backend:
	// bucket, key, region, dynamodb_table, encrypt). With a bucket, key
	// defaults to "streamfold/<stage>.tfstate" and encrypt to "true". With
	// no entries at all, state is kept locally, one file per stage
	// ("<stage>.tfstate" in WorkingDir) through BackendOverrideFile.
	BackendConfig map[string]string
	// VarFile is an optional -var-file.
	VarFile string
	// Vars are extra -var assignments; "stage" and "prefix" come from the
	// fields above and may not be set here.
	Vars map[string]string
	// AutoApprove lets apply plan and apply in one step and lets destroy
	// run. Without it apply applies the saved plan written by plan
	// ("<stage>.tfplan" in WorkingDir), and destroy refuses.
	AutoApprove bool
}

var (
	prefixRE  = regexp.MustCompile(`^[a-z0-9-]{1,63}$`)
	varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// SetDefaults fills in Prefix, WorkingDir and the backend key.
func (c *Config) SetDefaults() {
	c.Prefix = cmp.Or(c.Prefix, "streamfold")
	c.WorkingDir = cmp.Or(c.WorkingDir, "terraform")
	if c.BackendConfig["bucket"] != "" && c.BackendConfig["key"] == "" {
		c.BackendConfig["key"] = "streamfold/" + c.Stage + ".tfstate"
	}
	if c.BackendConfig["bucket"] != "" && c.BackendConfig["encrypt"] == "" {
		c.BackendConfig["encrypt"] = "true"
	}
}

// Validate reports the first bad field by name.
func (c *Config) Validate() error {
	switch c.Stage {
	case "dev", "stage", "prod":
	default:
		return fmt.Errorf("Stage: %q is not dev, stage or prod", c.Stage)
	}
	if !prefixRE.MatchString(c.Prefix) {
		return fmt.Errorf("Prefix: %q must be 1-63 lowercase letters, digits or '-'", c.Prefix)
	}
	if c.WorkingDir == "" {
		return fmt.Errorf("WorkingDir: empty")
	}
	if c.TerraformPath == "" {
		return fmt.Errorf("TerraformPath: empty")
	}
	if len(c.BackendConfig) > 0 && c.BackendConfig["bucket"] == "" {
		return fmt.Errorf("BackendConfig: bucket is required when any backend setting is given")
	}
	for _, k := range sortedKeys(c.Vars) {
		if k == "stage" || k == "prefix" {
			return fmt.Errorf("Vars: %q cannot be set here (use Stage/Prefix)", k)
		}
		if !varNameRE.MatchString(k) {
			return fmt.Errorf("Vars: %q is not a Terraform variable name", k)
		}
	}
	return nil
}

// ValidateAction checks that action is known and allowed by the config.
func (c *Config) ValidateAction(action string) error {
	switch action {
	case ActionInit, ActionPlan, ActionApply, ActionOutput:
		return nil
	case ActionDestroy:
		if !c.AutoApprove {
			return fmt.Errorf("AutoApprove: destroy of stage %s needs --auto-approve", c.Stage)
		}
		return nil
	}
	return fmt.Errorf("action: %q is not plan, apply, destroy or output", action)
}

// PlanFile is the saved plan written by plan and read by apply, relative
// to WorkingDir.
func (c Config) PlanFile() string { return c.Stage + ".tfplan" }

// LocalStateFile is the per-stage state file used when there is no backend
// configuration, relative to WorkingDir; "" with the S3 backend.
func (c Config) LocalStateFile() string {
	if len(c.BackendConfig) > 0 {
		return ""
	}
	return c.Stage + ".tfstate"
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// PackageDir is the directory holding the Lambda zips: Vars["package_dir"]
// when set (relative to WorkingDir unless absolute), else
// WorkingDir/../dist, the default of the Terraform variable.
func (c Config) PackageDir() string {
	if d := c.Vars["package_dir"]; d != "" {
		if filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(c.WorkingDir, d)
	}
	return filepath.Join(c.WorkingDir, "..", "dist")
}

// Package deploy drives Terraform (through github.com/hashicorp/terraform-exec)
// to plan, apply, destroy and read the outputs of streamfold's
// infrastructure in ../ (terraform/*.tf) for one stage.
//
// What to run is decided by pure functions (InitOptions, PlanOptions,
// ApplyOptions, DestroyOptions, OutputOptions and Args, which renders the
// equivalent terraform command line); Preflight checks the terraform binary
// and AWS credentials without touching the network; Runner does the work.
package deploy

import (
	"fmt"
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
	// bucket, key, region, dynamodb_table). With a bucket, key defaults to
	// "streamfold/<stage>.tfstate". With no entries at all, state is kept
	// locally, one file per stage ("<stage>.tfstate" in WorkingDir).
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

var prefixRE = regexp.MustCompile(`^[a-z0-9-]{1,63}$`)

// SetDefaults fills in Prefix, WorkingDir and the backend key.
func (c *Config) SetDefaults() {
	if c.Prefix == "" {
		c.Prefix = "streamfold"
	}
	if c.WorkingDir == "" {
		c.WorkingDir = "terraform"
	}
	if c.BackendConfig["bucket"] != "" && c.BackendConfig["key"] == "" {
		c.BackendConfig["key"] = "streamfold/" + c.Stage + ".tfstate"
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
		if k == "stage" || k == "prefix" || k == "" {
			return fmt.Errorf("Vars: %q cannot be set here (use Stage/Prefix)", k)
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
// configuration, relative to WorkingDir; "" with a backend.
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

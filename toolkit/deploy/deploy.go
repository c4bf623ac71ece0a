// Package deploy provides the operator's deploy workflow ("streamfold
// deploy"): plan, apply, destroy or show the outputs of a stage's
// infrastructure with Terraform (terraform/deploy does the work), print
// the terraform commands without running them, and plan offline, with no
// AWS account.
//
// Options.Config decides: it turns the options into the validated
// terraform/deploy.Config, and Commands gives the exact terraform command
// lines of an action, both pure. Run then checks the prerequisites
// (terraform's version, credentials, Lambda packages) and runs terraform,
// whose own output goes to the writers given. Ctrl-C (ctx cancelled) stops
// terraform cleanly; running again resumes.
package deploy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	tfdeploy "github.com/streamfold/streamfold/terraform/deploy"
	"github.com/streamfold/streamfold/toolkit"
)

// Options are one deploy's settings.
type Options struct {
	// Action is plan, apply, destroy or output (tfdeploy.Action*).
	Action string
	// Stage (dev, stage, prod) and Prefix name the resources.
	Stage, Prefix string
	// Dir holds the Terraform configuration; empty is "terraform".
	Dir string
	// VarFile is an extra -var-file (relative to Dir); Vars are extra
	// variables, NAME=VALUE each.
	VarFile string
	Vars    []string
	// Terraform is the terraform binary; empty is ToolsDir/bin/terraform
	// when that file exists, else terraform on PATH.
	Terraform string
	// ToolsDir is where "make tools" builds terraform and the provider
	// mirror (terraform.rc); empty is ".tools".
	ToolsDir string
	// Backend is the S3 state backend; no Bucket is a local state file
	// per stage.
	Backend Backend
	// AutoApprove: apply plans and applies in one go; destroy requires it.
	AutoApprove bool
	// DryRun: Run only decides (Result.Commands), it runs nothing.
	DryRun bool
	// Offline plans with no AWS account (tfdeploy.OfflinePlan); plan only.
	Offline bool
	// AssumeRoleAvailable accepts an IAM role found at run time instead of
	// configured credentials.
	AssumeRoleAvailable bool
	// CLIConfigFile is the Terraform CLI configuration of an offline plan
	// (TF_CLI_CONFIG_FILE); ToolsDir/terraform.rc wins when it exists.
	CLIConfigFile string
	// Getenv is the environment of the credentials check; nil is os.Getenv.
	Getenv func(string) string
}

// Backend is the S3 state backend: Bucket, Key (default
// streamfold/STAGE.tfstate), Region and a DynamoDB LockTable.
type Backend struct{ Bucket, Key, Region, LockTable string }

func invalid(field string, err error, problem string) error {
	return toolkit.Invalid("deploy", field, err, problem)
}

// Config is the terraform/deploy configuration the options decide, or an
// error naming the field at fault.
func (o Options) Config() (tfdeploy.Config, error) {
	cfg := tfdeploy.Config{
		Stage: o.Stage, Prefix: o.Prefix, WorkingDir: o.Dir, VarFile: o.VarFile,
		AutoApprove: o.AutoApprove, TerraformPath: o.terraform(),
	}
	b := o.Backend
	if b.Bucket == "" && (b.LockTable != "" || b.Key != "") {
		return cfg, invalid("Backend", nil, "LockTable and Key need Bucket (--backend-lock-table and --backend-key need --backend-bucket)")
	}
	if b.Bucket != "" {
		cfg.BackendConfig = map[string]string{}
		for k, v := range map[string]string{"bucket": b.Bucket, "key": b.Key, "region": b.Region, "dynamodb_table": b.LockTable} {
			if v != "" {
				cfg.BackendConfig[k] = v
			}
		}
	}
	for _, s := range o.Vars {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return cfg, invalid("Vars", nil, fmt.Sprintf("want NAME=VALUE, got %q", s))
		}
		if _, dup := cfg.Vars[name]; dup {
			return cfg, invalid("Vars", nil, name+" given twice")
		}
		if cfg.Vars == nil {
			cfg.Vars = map[string]string{}
		}
		cfg.Vars[name] = value
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, invalid("Config", err, "")
	}
	if err := cfg.ValidateAction(o.Action); err != nil {
		return cfg, invalid("Config", err, "")
	}
	if o.Offline && (o.Action != tfdeploy.ActionPlan || o.DryRun || b.Bucket != "") {
		return cfg, invalid("Offline", nil, "is for plan only, without DryRun or a Backend (an offline plan uses an empty local state)")
	}
	return cfg, nil
}

// Validate checks the options; its errors name the field at fault.
func (o Options) Validate() error {
	_, err := o.Config()
	return err
}

func (o Options) toolsDir() string { return cmp.Or(o.ToolsDir, ".tools") }

func (o Options) terraform() string {
	if o.Terraform != "" {
		return o.Terraform
	}
	p := filepath.Join(o.toolsDir(), "bin", "terraform")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return "terraform"
}

// Commands are what a dry run of action prints: a comment on the backend
// override file, then the terraform init and action command lines.
func Commands(cfg tfdeploy.Config, action string) []string {
	override := filepath.Join(cfg.WorkingDir, tfdeploy.BackendOverrideFile)
	lines := []string{"# remove " + override + " if deploy wrote it"}
	if tfdeploy.BackendOverride(cfg) != "" {
		lines[0] = "# " + override
	}
	for _, a := range []string{tfdeploy.ActionInit, action} {
		args := tfdeploy.Args(cfg, a)
		if a == tfdeploy.ActionApply || a == tfdeploy.ActionDestroy {
			// tfexec always adds it; flags go before a saved plan's path.
			args = append([]string{args[0], "-auto-approve"}, args[1:]...)
		}
		lines = append(lines, fmt.Sprintf("%s -chdir=%s %s", cfg.TerraformPath, cfg.WorkingDir, strings.Join(args, " ")))
	}
	return lines
}

// Result is what Run did.
type Result struct {
	Action string
	Config tfdeploy.Config
	// Commands are the dry run's command lines.
	Commands []string
	// Changes says whether a plan has changes.
	Changes bool
	// Outputs are the stage's Terraform outputs (action output).
	Outputs map[string]tfexec.OutputMeta
	// Offline is the offline plan's summary.
	Offline *OfflineSummary
}

// JSON is what the CLI prints with --json: the outputs, the offline
// summary or the dry run's commands; nil for the other actions.
func (r *Result) JSON() any {
	switch {
	case r.Offline != nil:
		return r.Offline
	case r.Commands != nil:
		return r.Commands
	case r.Outputs != nil:
		return r.Outputs
	}
	return nil
}

// WriteText prints the result for people.
func (r *Result) WriteText(w io.Writer) error {
	switch {
	case r.Offline != nil:
		return r.Offline.WriteText(w)
	case r.Commands != nil:
		_, err := fmt.Fprintln(w, strings.Join(r.Commands, "\n"))
		return err
	}
	names := make([]string, 0, len(r.Outputs))
	for n := range r.Outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := strings.TrimSpace(string(r.Outputs[n].Value))
		if r.Outputs[n].Sensitive {
			v = "(sensitive)"
		}
		fmt.Fprintf(w, "%s = %s\n", n, v)
	}
	return nil
}

// Run decides (Options.Config), then, unless DryRun, checks the
// prerequisites and runs the action; terraform's output goes to stdout and
// stderr, and so do its notes (to stderr).
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (*Result, error) {
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	res := &Result{Action: o.Action, Config: cfg}
	switch {
	case o.DryRun:
		res.Commands = Commands(cfg, o.Action)
		return res, nil
	case o.Offline:
		res.Offline, err = offline(ctx, o, cfg, stdout, stderr)
		return res, err
	}
	penv := tfdeploy.OSEnv()
	if o.Getenv != nil {
		penv.Getenv = o.Getenv
	}
	penv.AssumeRoleAvailable = o.AssumeRoleAvailable
	if err := tfdeploy.Preflight(cfg, o.Action, penv); err != nil {
		return nil, err
	}
	r, err := tfdeploy.NewRunner(cfg, stdout, stderr)
	if err != nil {
		return nil, fmt.Errorf("deploy %s: %w", o.Action, err)
	}
	switch o.Action {
	case tfdeploy.ActionPlan:
		if res.Changes, err = r.Plan(ctx); err == nil {
			fmt.Fprintf(stderr, "streamfold: deploy plan: saved to %s (changes: %v); run `streamfold deploy apply --stage %s` to apply it\n",
				filepath.Join(cfg.WorkingDir, cfg.PlanFile()), res.Changes, cfg.Stage)
		}
	case tfdeploy.ActionApply:
		err = r.Apply(ctx)
	case tfdeploy.ActionDestroy:
		err = r.Destroy(ctx)
	case tfdeploy.ActionOutput:
		res.Outputs, err = r.Output(ctx)
	}
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("deploy %s: interrupted: %w", o.Action, err)
	}
	return res, err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streamfold/streamfold/terraform/deploy"
)

func init() {
	register(command{name: "deploy", summary: "plan, apply, destroy or show outputs of streamfold's infrastructure with Terraform", run: runDeploy})
}

const deployHelp = `Usage:
  streamfold deploy plan    --stage STAGE [flags]  init, then plan and save it to terraform/STAGE.tfplan
  streamfold deploy apply   --stage STAGE [flags]  apply the saved plan (with --auto-approve: plan and apply in one go)
  streamfold deploy destroy --stage STAGE --auto-approve [flags]  destroy the stage
  streamfold deploy output  --stage STAGE [--json]  show the stage's Terraform outputs

Runs Terraform (TOOLS_DIR/bin/terraform from "make tools" if present, else
terraform on PATH) in ./terraform. Before running anything it checks that
terraform exists and that AWS credentials are configured (AWS_PROFILE,
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, web identity, container
credentials or a shared credentials file); it never probes the network.
With --backend-bucket state goes to S3 under key streamfold/STAGE.tfstate;
without, state is local (terraform/STAGE.tfstate). Ctrl-C interrupts
terraform, which releases its state lock before exiting.

Examples:
  streamfold deploy plan --stage dev --backend-bucket my-tfstate --backend-region eu-west-1 --backend-lock-table tf-locks
  streamfold deploy apply --stage dev --backend-bucket my-tfstate --backend-region eu-west-1
  streamfold deploy output --stage prod --backend-bucket my-tfstate --json
  streamfold deploy destroy --stage dev --auto-approve

Exit codes: 0 ok; 2 usage error (bad stage, flag, missing --auto-approve);
3 terraform or AWS credentials missing, or terraform failed.

Flags:
`

func runDeploy(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "deploy", args, deployHelp, deploy.ActionPlan, deploy.ActionApply, deploy.ActionDestroy, deploy.ActionOutput)
	if !ok {
		return code
	}
	fs := flag.NewFlagSet("deploy "+sub, flag.ContinueOnError)
	var cfg deploy.Config
	fs.StringVar(&cfg.Stage, "stage", env.getenv("STREAMFOLD_STAGE"), "stage: dev, stage or prod (env STREAMFOLD_STAGE)")
	fs.StringVar(&cfg.Prefix, "prefix", envOr(env, "STREAMFOLD_PREFIX", "streamfold"), "resource name prefix (env STREAMFOLD_PREFIX)")
	fs.StringVar(&cfg.WorkingDir, "dir", "terraform", "directory holding the Terraform configuration")
	bucket := fs.String("backend-bucket", env.getenv("STREAMFOLD_TF_BACKEND_BUCKET"), "S3 bucket for Terraform state (env STREAMFOLD_TF_BACKEND_BUCKET; empty = local state)")
	region := fs.String("backend-region", envOr(env, "STREAMFOLD_TF_BACKEND_REGION", env.getenv("AWS_REGION")), "region of the state bucket (env STREAMFOLD_TF_BACKEND_REGION, else AWS_REGION)")
	lockTable := fs.String("backend-lock-table", env.getenv("STREAMFOLD_TF_BACKEND_LOCK_TABLE"), "DynamoDB table for state locking (env STREAMFOLD_TF_BACKEND_LOCK_TABLE)")
	fs.StringVar(&cfg.VarFile, "var-file", "", "extra Terraform -var-file (relative to --dir)")
	fs.BoolVar(&cfg.AutoApprove, "auto-approve", false, "apply: plan and apply without a saved plan; destroy: required")
	fs.StringVar(&cfg.TerraformPath, "terraform", defaultTerraform(env), "terraform binary (default TOOLS_DIR/bin/terraform if present, else terraform on PATH)")
	assumeRole := fs.Bool("assume-role-available", false, "accept an IAM role found at run time (instance profile) instead of configured credentials")
	asJSON := fs.Bool("json", false, "output: print the outputs as JSON")
	fs.Usage = func() { fmt.Fprint(env.stderr, deployHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "deploy %s: unexpected arguments %q", sub, fs.Args())
	}
	backend := map[string]string{}
	for k, v := range map[string]string{"bucket": *bucket, "region": *region, "dynamodb_table": *lockTable} {
		if v != "" {
			backend[k] = v
		}
	}
	if *bucket == "" {
		backend = nil // region alone (from AWS_REGION) does not make a backend
		if *lockTable != "" {
			return errorf(env, exitUsage, "deploy %s: --backend-lock-table needs --backend-bucket", sub)
		}
	}
	cfg.BackendConfig = backend
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return errorf(env, exitUsage, "deploy %s: %v", sub, err)
	}
	if err := cfg.ValidateAction(sub); err != nil {
		return errorf(env, exitUsage, "deploy %s: %v", sub, err)
	}
	penv := deploy.OSEnv()
	penv.Getenv = env.getenv
	penv.AssumeRoleAvailable = *assumeRole
	if err := deploy.Preflight(cfg, penv); err != nil {
		fmt.Fprintln(env.stderr, err)
		return exitRuntime
	}
	r, err := deploy.NewRunner(cfg, env.stdout, env.stderr)
	if err != nil {
		return errorf(env, exitRuntime, "deploy %s: %v", sub, err)
	}
	switch sub {
	case deploy.ActionPlan:
		var changes bool
		if changes, err = r.Plan(ctx); err == nil {
			fmt.Fprintf(env.stderr, "streamfold: deploy plan: saved to %s (changes: %v); run `streamfold deploy apply --stage %s` to apply it\n",
				filepath.Join(cfg.WorkingDir, cfg.PlanFile()), changes, cfg.Stage)
		}
	case deploy.ActionApply:
		err = r.Apply(ctx)
	case deploy.ActionDestroy:
		err = r.Destroy(ctx)
	case deploy.ActionOutput:
		err = deployOutput(ctx, env, r, *asJSON)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errorf(env, exitRuntime, "deploy %s: interrupted", sub)
		}
		return errorf(env, exitRuntime, "%v", err)
	}
	return exitOK
}

func deployOutput(ctx context.Context, env *cliEnv, r *deploy.Runner, asJSON bool) error {
	out, err := r.Output(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(env.stdout, out)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := strings.TrimSpace(string(out[n].Value))
		if out[n].Sensitive {
			v = "(sensitive)"
		}
		fmt.Fprintf(env.stdout, "%s = %s\n", n, v)
	}
	return nil
}

// defaultTerraform is TOOLS_DIR/bin/terraform when that file exists, else
// "terraform" (looked up on PATH).
func defaultTerraform(env *cliEnv) string {
	p := filepath.Join(envOr(env, "STREAMFOLD_TOOLS_DIR", envOr(env, "TOOLS_DIR", ".tools")), "bin", "terraform")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return "terraform"
}

package main

import (
	"cmp"
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
  streamfold deploy plan --offline [--stage STAGE] [--json]  what would be created, with no AWS account

Runs Terraform (TOOLS_DIR/bin/terraform from "make tools" if present, else
terraform on PATH) in ./terraform. Before running anything it checks that
terraform exists and is ` + deploy.TerraformConstraint + ` ("terraform version -json";
install it from https://developer.hashicorp.com/terraform/install, or build
` + deploy.MinTerraformVersion + ` with "make tools TOOLS=terraform"), that AWS credentials are
configured (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, web
identity, container credentials or a shared credentials file) and, for
plan, apply and destroy, that "make package" has built
dist/{projector,archiver,ingest,api}.zip; it never probes the network.
The AWS region comes from AWS_REGION or the profile.

State: with --backend-bucket it goes to S3 under key streamfold/STAGE.tfstate
(--backend-key to change it; encrypted; locked with --backend-lock-table). Without, it is local, one
file per stage (terraform/STAGE.tfstate): deploy writes the git-ignored
terraform/backend_override.tf to swap the S3 backend for a local one, and
removes it again when --backend-bucket is given. Ctrl-C sends terraform
SIGINT: it stops, releases its state lock and exits; run again to resume.

Offline plan (--offline): review the infrastructure before giving it an
account. Validates and plans in a scratch copy of ./terraform from an empty
local state (your state, saved plans and backend are not touched), with no
credentials: every AWS endpoint is a local responder on 127.0.0.1 that
answers only sts:GetCallerIdentity (placeholder account ` + deploy.OfflineAccount + `, region
` + deploy.OfflineRegion + `) and the plan fails if Terraform asks AWS anything else.
The hashicorp/aws provider comes from TOOLS_DIR/terraform.rc when "make tools
TOOLS=aws-provider" has built it (then nothing leaves the machine), else from
TF_CLI_CONFIG_FILE or the Terraform registry. Missing Lambda packages are
planned from placeholders (listed). --json prints a summary: resources to
create by type, the AWS calls made, the placeholders.

Examples:
  streamfold deploy plan --offline --stage prod
  streamfold deploy plan --offline --json | jq .creates
  make package && streamfold deploy apply --stage dev --auto-approve
  streamfold deploy plan --stage prod --backend-bucket my-tfstate --backend-region eu-west-1 --backend-lock-table tf-locks
  streamfold deploy apply --stage prod --backend-bucket my-tfstate --backend-region eu-west-1
  streamfold deploy plan --stage dev --var alarm_sns_topic_arn=arn:aws:sns:eu-west-1:123456789012:ops
  streamfold deploy output --stage prod --backend-bucket my-tfstate --json
  streamfold deploy plan --stage prod --backend-bucket my-tfstate --dry-run   # the terraform commands, not run
  streamfold deploy destroy --stage dev --auto-approve

Exit codes: 0 ok; 2 usage error (bad stage, flag, missing --auto-approve);
3 terraform missing or outside ` + deploy.TerraformConstraint + `, AWS credentials or Lambda
packages missing, or terraform failed.

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
	key := fs.String("backend-key", env.getenv("STREAMFOLD_TF_BACKEND_KEY"), "state object key in the bucket (env STREAMFOLD_TF_BACKEND_KEY; default streamfold/STAGE.tfstate)")
	region := fs.String("backend-region", envOr(env, "STREAMFOLD_TF_BACKEND_REGION", env.getenv("AWS_REGION")), "region of the state bucket (env STREAMFOLD_TF_BACKEND_REGION, else AWS_REGION)")
	lockTable := fs.String("backend-lock-table", env.getenv("STREAMFOLD_TF_BACKEND_LOCK_TABLE"), "DynamoDB table for state locking (env STREAMFOLD_TF_BACKEND_LOCK_TABLE)")
	fs.StringVar(&cfg.VarFile, "var-file", "", "extra Terraform -var-file (relative to --dir)")
	fs.BoolVar(&cfg.AutoApprove, "auto-approve", false, "apply: plan and apply without a saved plan; destroy: required")
	fs.StringVar(&cfg.TerraformPath, "terraform", defaultTerraform(env), "terraform binary (default TOOLS_DIR/bin/terraform if present, else terraform on PATH)")
	dryRun := fs.Bool("dry-run", false, "print the terraform commands (and the backend override, if any) without running anything")
	assumeRole := fs.Bool("assume-role-available", false, "accept an IAM role found at run time (instance profile) instead of configured credentials")
	asJSON := fs.Bool("json", false, "output: print the outputs as JSON; plan --offline: print a JSON summary")
	offline := fs.Bool("offline", false, "plan: validate and plan with no AWS credentials or state (local STS responder, scratch copy, empty state)")
	vars := varFlag{}
	fs.Var(vars, "var", "a Terraform variable, NAME=VALUE (repeatable), e.g. --var archive_bucket_name=my-archive")
	fs.Usage = func() { fmt.Fprint(env.stderr, deployHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "deploy %s: unexpected arguments %q", sub, fs.Args())
	}
	backend := map[string]string{}
	for k, v := range map[string]string{"bucket": *bucket, "key": *key, "region": *region, "dynamodb_table": *lockTable} {
		if v != "" {
			backend[k] = v
		}
	}
	if *bucket == "" {
		backend = nil // region alone (from AWS_REGION) does not make a backend
		if *lockTable != "" || *key != "" {
			return errorf(env, exitUsage, "deploy %s: --backend-lock-table and --backend-key need --backend-bucket", sub)
		}
	}
	cfg.BackendConfig = backend
	if len(vars) > 0 {
		cfg.Vars = vars
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return errorf(env, exitUsage, "deploy %s: %v", sub, err)
	}
	if err := cfg.ValidateAction(sub); err != nil {
		return errorf(env, exitUsage, "deploy %s: %v", sub, err)
	}
	if *offline {
		if sub != deploy.ActionPlan {
			return errorf(env, exitUsage, "deploy %s: --offline is for plan only", sub)
		}
		if *dryRun || backend != nil {
			return errorf(env, exitUsage, "deploy plan --offline: --dry-run and --backend-* do not apply (an offline plan uses an empty local state)")
		}
		return deployOffline(ctx, env, cfg, *asJSON)
	}
	if *dryRun {
		if o := deploy.BackendOverride(cfg); o != "" {
			fmt.Fprintf(env.stdout, "# %s\n", filepath.Join(cfg.WorkingDir, deploy.BackendOverrideFile))
		} else {
			fmt.Fprintf(env.stdout, "# remove %s if deploy wrote it\n", filepath.Join(cfg.WorkingDir, deploy.BackendOverrideFile))
		}
		for _, a := range []string{deploy.ActionInit, sub} {
			args := deploy.Args(cfg, a)
			if a == deploy.ActionApply || a == deploy.ActionDestroy {
				// tfexec always adds it; flags go before a saved plan's path.
				args = append([]string{args[0], "-auto-approve"}, args[1:]...)
			}
			fmt.Fprintf(env.stdout, "%s -chdir=%s %s\n", cfg.TerraformPath, cfg.WorkingDir, strings.Join(args, " "))
		}
		return exitOK
	}
	penv := deploy.OSEnv()
	penv.Getenv = env.getenv
	penv.AssumeRoleAvailable = *assumeRole
	if err := deploy.Preflight(cfg, sub, penv); err != nil {
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

// varFlag collects repeated --var NAME=VALUE flags.
type varFlag map[string]string

func (v varFlag) String() string { return "" }

func (v varFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	if _, dup := v[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	v[name] = value
	return nil
}

// defaultTerraform is TOOLS_DIR/bin/terraform when that file exists, else
// "terraform" (looked up on PATH).
// deployOffline runs `deploy plan --offline` (deploy.OfflinePlan).
func deployOffline(ctx context.Context, env *cliEnv, cfg deploy.Config, asJSON bool) int {
	if err := deploy.CheckTerraform(cfg.TerraformPath, deploy.OSEnv()); err != nil {
		fmt.Fprintln(env.stderr, err)
		return exitRuntime
	}
	opts := deploy.OfflineOptions{Config: cfg, CLIConfigFile: env.getenv("TF_CLI_CONFIG_FILE"), Stdout: env.stdout, Stderr: env.stderr}
	rc := filepath.Join(envOr(env, "STREAMFOLD_TOOLS_DIR", envOr(env, "TOOLS_DIR", ".tools")), "terraform.rc")
	if st, err := os.Stat(rc); err == nil && st.Mode().IsRegular() {
		opts.CLIConfigFile = rc
	}
	if asJSON {
		opts.Stdout = env.stderr // terraform's own output; stdout is the summary
	}
	fmt.Fprintf(env.stderr, "streamfold: deploy plan --offline: stage %s, provider from %s; no AWS account is used\n",
		cfg.Stage, cmp.Or(opts.CLIConfigFile, "the Terraform registry"))
	res, err := deploy.OfflinePlan(ctx, opts)
	if res != nil && res.Validate != nil {
		for _, d := range res.Validate.Diagnostics {
			where := ""
			if d.Range != nil {
				where = fmt.Sprintf(" (%s:%d)", filepath.Base(d.Range.Filename), d.Range.Start.Line)
			}
			fmt.Fprintf(env.stderr, "validate %s: %s%s: %s\n", d.Severity, d.Summary, where, d.Detail)
		}
	}
	if err != nil {
		return errorf(env, exitRuntime, "deploy plan --offline: %v", err)
	}
	creates := res.Creates()
	total := 0
	for _, n := range creates {
		total += n
	}
	calls := []string{}
	for _, c := range res.Calls {
		calls = append(calls, c.Service+":"+c.Action)
	}
	if asJSON {
		if err := writeJSON(env.stdout, map[string]any{
			"stage": cfg.Stage, "prefix": cfg.Prefix, "account": deploy.OfflineAccount, "region": deploy.OfflineRegion,
			"resources_to_create": total, "creates": creates, "aws_calls": calls,
			"placeholder_packages": nonNil(res.Placeholders),
		}); err != nil {
			return errorf(env, exitRuntime, "deploy plan --offline: %v", err)
		}
		return exitOK
	}
	types := make([]string, 0, len(creates))
	for t := range creates {
		types = append(types, t)
	}
	sort.Strings(types)
	fmt.Fprintf(env.stdout, "\nOffline plan for stage %s: %d resources to create\n", cfg.Stage, total)
	for _, t := range types {
		fmt.Fprintf(env.stdout, "  %4d  %s\n", creates[t], t)
	}
	fmt.Fprintf(env.stdout, "AWS calls: %d, all sts:GetCallerIdentity answered locally (account %s, region %s)\n", len(calls), deploy.OfflineAccount, deploy.OfflineRegion)
	if len(res.Placeholders) > 0 {
		fmt.Fprintf(env.stdout, "Planned from placeholders (run make package for the real hashes): %s\n", strings.Join(res.Placeholders, ", "))
	}
	return exitOK
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func defaultTerraform(env *cliEnv) string {
	p := filepath.Join(envOr(env, "STREAMFOLD_TOOLS_DIR", envOr(env, "TOOLS_DIR", ".tools")), "bin", "terraform")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return "terraform"
}

package main

import (
	"cmp"
	"context"

	"github.com/alecthomas/kong"

	"github.com/streamfold/streamfold/toolkit/deploy"
)

type deployCmd struct {
	Plan    deployPlanCmd `cmd:"" help:"Init, then plan and save it to terraform/STAGE.tfplan (--offline: what would be created, with no AWS account)."`
	Apply   deployFlags   `cmd:"" help:"Apply the saved plan (with --auto-approve: plan and apply in one go)."`
	Destroy deployFlags   `cmd:"" help:"Destroy the stage (needs --auto-approve)."`
	Output  deployFlags   `cmd:"" help:"Show the stage's Terraform outputs."`
}

func (deployCmd) Help() string { return longHelp("deploy") }

type deployFlags struct {
	Stage       string   `sfenv:"STREAMFOLD_STAGE" help:"Stage: dev, stage or prod."`
	Prefix      string   `default:"streamfold" sfenv:"STREAMFOLD_PREFIX" help:"Resource name prefix."`
	Dir         string   `default:"terraform" help:"Directory holding the Terraform configuration."`
	Bucket      string   `name:"backend-bucket" sfenv:"STREAMFOLD_TF_BACKEND_BUCKET" help:"S3 bucket for Terraform state (empty: local state)."`
	Key         string   `name:"backend-key" sfenv:"STREAMFOLD_TF_BACKEND_KEY" help:"State object key in the bucket (default streamfold/STAGE.tfstate)."`
	Region      string   `name:"backend-region" sfenv:"STREAMFOLD_TF_BACKEND_REGION" help:"Region of the state bucket (default: AWS_REGION)."`
	LockTable   string   `name:"backend-lock-table" sfenv:"STREAMFOLD_TF_BACKEND_LOCK_TABLE" help:"DynamoDB table for state locking."`
	VarFile     string   `name:"var-file" help:"Extra Terraform -var-file (relative to --dir)."`
	Vars        []string `name:"var" sep:"none" placeholder:"NAME=VALUE" help:"A Terraform variable (repeatable), e.g. --var archive_bucket_name=my-archive."`
	AutoApprove bool     `name:"auto-approve" help:"Apply: plan and apply without a saved plan; destroy: required."`
	Terraform   string   `help:"Terraform binary (default TOOLS_DIR/bin/terraform if present, else terraform on PATH)."`
	DryRun      bool     `name:"dry-run" help:"Print the terraform commands (and the backend override, if any) without running anything."`
	AssumeRole  bool     `name:"assume-role-available" help:"Accept an IAM role found at run time (instance profile) instead of configured credentials."`
}

type deployPlanCmd struct {
	deployFlags
	Offline bool `help:"Validate and plan with no AWS credentials or state (local STS responder, scratch copy, empty state)."`
}

func (c *deployPlanCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	return c.run(ctx, env, out, "plan", c.Offline)
}

func (c *deployFlags) Run(ctx context.Context, env *cliEnv, out *output, k *kong.Context) error {
	return c.run(ctx, env, out, k.Selected().Name, false)
}

func (c *deployFlags) run(ctx context.Context, env *cliEnv, out *output, action string, offline bool) error {
	o := deploy.Options{Action: action, Stage: c.Stage, Prefix: c.Prefix, Dir: c.Dir, VarFile: c.VarFile, Vars: c.Vars, Terraform: c.Terraform,
		Backend:     deploy.Backend{Bucket: c.Bucket, Key: c.Key, Region: cmp.Or(c.Region, env.getenv("AWS_REGION")), LockTable: c.LockTable},
		AutoApprove: c.AutoApprove, DryRun: c.DryRun, Offline: offline, AssumeRoleAvailable: c.AssumeRole, Getenv: env.getenv,
		ToolsDir: cmp.Or(env.getenv("STREAMFOLD_TOOLS_DIR"), env.getenv("TOOLS_DIR")), CLIConfigFile: env.getenv("TF_CLI_CONFIG_FILE")}
	stdout := env.stdout
	if out.JSON {
		stdout = env.stderr // terraform's own output; standard output is the JSON
	}
	res, err := deploy.Run(ctx, o, stdout, env.stderr)
	if err != nil {
		return fail(exitUsageOr(err), "%w", err)
	}
	if v := res.JSON(); v != nil || !out.JSON {
		return env.render(out, v, res.WriteText)
	}
	return nil
}

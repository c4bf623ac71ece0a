package deploy

import (
	"context"
	"fmt"
	"io"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// Runner runs terraform for one Config, streaming its output.
//
// Cancellation: every call takes a context; tfexec starts terraform with
// that context and, when it is cancelled (the CLI's context is cancelled on
// Ctrl-C / SIGTERM), interrupts the terraform process so it can release the
// state lock, then returns ctx's error. Run again to resume.
type Runner struct {
	cfg Config
	tf  *tfexec.Terraform
}

// NewRunner validates cfg (call SetDefaults first) and prepares terraform.
// stdout and stderr receive terraform's output as it is produced.
func NewRunner(cfg Config, stdout, stderr io.Writer) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tf, err := tfexec.NewTerraform(cfg.WorkingDir, cfg.TerraformPath)
	if err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	tf.SetStdout(stdout)
	tf.SetStderr(stderr)
	return &Runner{cfg: cfg, tf: tf}, nil
}

// Init runs terraform init with the stage's backend configuration.
func (r *Runner) Init(ctx context.Context) error {
	if err := r.tf.Init(ctx, InitOptions(r.cfg)...); err != nil {
		return fmt.Errorf("deploy: terraform init: %w", err)
	}
	return nil
}

// Plan runs init then plan, saving the plan to cfg.PlanFile(). changes
// reports whether the plan has any changes.
func (r *Runner) Plan(ctx context.Context) (changes bool, err error) {
	if err := r.Init(ctx); err != nil {
		return false, err
	}
	changes, err = r.tf.Plan(ctx, PlanOptions(r.cfg)...)
	if err != nil {
		return false, fmt.Errorf("deploy: terraform plan: %w", err)
	}
	return changes, nil
}

// Apply runs init then apply (the saved plan unless AutoApprove).
func (r *Runner) Apply(ctx context.Context) error {
	if err := r.Init(ctx); err != nil {
		return err
	}
	if err := r.tf.Apply(ctx, ApplyOptions(r.cfg)...); err != nil {
		return fmt.Errorf("deploy: terraform apply: %w", err)
	}
	return nil
}

// Destroy runs init then destroy; it needs AutoApprove.
func (r *Runner) Destroy(ctx context.Context) error {
	if err := r.cfg.ValidateAction(ActionDestroy); err != nil {
		return err
	}
	if err := r.Init(ctx); err != nil {
		return err
	}
	if err := r.tf.Destroy(ctx, DestroyOptions(r.cfg)...); err != nil {
		return fmt.Errorf("deploy: terraform destroy: %w", err)
	}
	return nil
}

// Output runs init then output and returns each output's JSON value.
func (r *Runner) Output(ctx context.Context) (map[string]tfexec.OutputMeta, error) {
	if err := r.Init(ctx); err != nil {
		return nil, err
	}
	out, err := r.tf.Output(ctx, OutputOptions(r.cfg)...)
	if err != nil {
		return nil, fmt.Errorf("deploy: terraform output: %w", err)
	}
	return out, nil
}

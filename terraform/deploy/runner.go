package deploy

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// Runner runs terraform for one Config, streaming its output.
//
// Cancellation: every call takes a context; tfexec starts terraform in its
// own process group with that context and, when it is cancelled (the CLI's
// context is cancelled on Ctrl-C / SIGTERM), sends terraform SIGINT so that
// it stops gracefully and releases the state lock (it is killed only if it
// has not exited after WaitDelay, 60 s), then returns an error wrapping
// ctx's error. Run again to resume.
type Runner struct {
	cfg    Config
	tf     *tfexec.Terraform
	stdout io.Writer
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
	return &Runner{cfg: cfg, tf: tf, stdout: stdout}, nil
}

// RunError is a failed terraform command. Terraform's own messages have
// already been streamed to stderr, so Error is one line; Unwrap gives the
// full error (context.Canceled when interrupted).
type RunError struct {
	Command string // init, plan, apply, destroy, output
	Err     error
}

func (e *RunError) Error() string {
	first, _, _ := strings.Cut(e.Err.Error(), "\n")
	return "deploy: terraform " + e.Command + ": " + first
}

// Unwrap returns the underlying error.
func (e *RunError) Unwrap() error { return e.Err }

// Init writes or removes BackendOverrideFile (local state or S3), then
// runs terraform init with the stage's backend configuration.
func (r *Runner) Init(ctx context.Context) error {
	if err := SyncBackendOverride(r.cfg); err != nil {
		return err
	}
	// tfexec asks `terraform version -json` before some commands and copies
	// its output to stdout; ask once, quietly (the answer is cached).
	r.tf.SetStdout(io.Discard)
	_, _, err := r.tf.Version(ctx, false)
	r.tf.SetStdout(r.stdout)
	if err != nil {
		return &RunError{Command: "version", Err: err}
	}
	if err := r.tf.Init(ctx, InitOptions(r.cfg)...); err != nil {
		return &RunError{Command: "init", Err: err}
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
		return false, &RunError{Command: "plan", Err: err}
	}
	return changes, nil
}

// Apply runs init then apply (the saved plan unless AutoApprove).
func (r *Runner) Apply(ctx context.Context) error {
	if err := r.Init(ctx); err != nil {
		return err
	}
	if err := r.tf.Apply(ctx, ApplyOptions(r.cfg)...); err != nil {
		return &RunError{Command: "apply", Err: err}
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
		return &RunError{Command: "destroy", Err: err}
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
		return nil, &RunError{Command: "output", Err: err}
	}
	return out, nil
}

package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// OfflineOptions configure OfflinePlan.
type OfflineOptions struct {
	// Config gives the stage, prefix, working directory, terraform binary,
	// var-file and variables. Its backend settings are ignored: an offline
	// plan starts from an empty local state in a scratch copy and never
	// touches the working directory's state, plans or .terraform.
	Config Config
	// CLIConfigFile is the Terraform CLI configuration (TF_CLI_CONFIG_FILE)
	// that says where providers come from, e.g. .tools/terraform.rc (the
	// filesystem mirror .ci/tools.sh builds). Empty: Terraform's own
	// default, which downloads hashicorp/aws from the registry.
	CLIConfigFile string
	// Stdout and Stderr receive terraform's output (nil: discarded).
	Stdout, Stderr io.Writer
}

// Validate reports the first bad field by name.
func (o OfflineOptions) Validate() error {
	if err := o.Config.Validate(); err != nil {
		return fmt.Errorf("Config.%w", err)
	}
	if o.CLIConfigFile != "" {
		if _, err := os.Stat(o.CLIConfigFile); err != nil {
			return fmt.Errorf("CLIConfigFile: %w", err)
		}
	}
	return nil
}

// OfflineResult is what an offline plan found.
type OfflineResult struct {
	// Validate is `terraform validate -json`.
	Validate *tfjson.ValidateOutput
	// Plan is `terraform show -json` of the plan; nil when validate found
	// errors.
	Plan *tfjson.Plan
	// Calls are the AWS requests terraform made, all to LocalAWS.
	Calls []LocalAWSCall
	// Placeholders are the Lambda packages that were missing from the
	// package directory and planned from placeholder files (their
	// source_code_hash is not the real one).
	Placeholders []string
}

// Creates counts the resource instances the plan creates, by type.
func (r *OfflineResult) Creates() map[string]int {
	out := map[string]int{}
	if r.Plan == nil {
		return out
	}
	for _, rc := range r.Plan.ResourceChanges {
		if rc.Mode == tfjson.ManagedResourceMode && rc.Change != nil && rc.Change.Actions.Create() {
			out[rc.Type]++
		}
	}
	return out
}

// ErrInvalidConfig reports that terraform validate found errors (listed in
// OfflineResult.Validate).
var ErrInvalidConfig = errors.New("deploy: terraform validate found errors")

// OfflinePlan validates and plans the configuration for cfg.Stage without
// AWS credentials or network: in a scratch copy of the working directory
// (with the archive's named queries and the Lambda packages beside it,
// placeholders for missing packages), from an empty local state, with
// `plan -refresh=false` and every AWS endpoint a LocalAWS on 127.0.0.1. It
// fails (wrapping ErrUnexpectedCall) if terraform made any AWS call other
// than sts:GetCallerIdentity, and with ErrInvalidConfig (and the result,
// for its diagnostics) if validate found errors.
func OfflinePlan(ctx context.Context, opts OfflineOptions) (*OfflineResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("deploy: offline plan: %w", err)
	}
	cfg := opts.Config
	// terraform runs in the scratch copy: relative paths must not move.
	if strings.ContainsRune(cfg.TerraformPath, '/') || strings.ContainsRune(cfg.TerraformPath, os.PathSeparator) {
		if abs, err := filepath.Abs(cfg.TerraformPath); err == nil {
			cfg.TerraformPath = abs
		}
	}
	if opts.CLIConfigFile != "" {
		if abs, err := filepath.Abs(opts.CLIConfigFile); err == nil {
			opts.CLIConfigFile = abs
		}
	}
	scratch, err := os.MkdirTemp("", "streamfold-offline-plan-")
	if err != nil {
		return nil, fmt.Errorf("deploy: offline plan: %w", err)
	}
	defer os.RemoveAll(scratch)
	res := &OfflineResult{}
	dir, varFile, placeholders, err := scratchTree(cfg, scratch)
	if err != nil {
		return nil, fmt.Errorf("deploy: offline plan: %w", err)
	}
	res.Placeholders = placeholders

	local, err := StartLocalAWS()
	if err != nil {
		return nil, err
	}
	defer local.Close()
	tf, err := tfexec.NewTerraform(dir, cfg.TerraformPath)
	if err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	if err := tf.SetEnv(OfflineEnv(os.Environ(), local, opts.CLIConfigFile)); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	out := func(w io.Writer) io.Writer {
		if w == nil {
			return io.Discard
		}
		return w
	}
	tf.SetStdout(out(opts.Stdout))
	tf.SetStderr(out(opts.Stderr))

	if err := tf.Init(ctx); err != nil {
		return nil, &RunError{Command: "init", Err: err}
	}
	// validate -json and show -json answer in JSON on stdout: parsed, not shown.
	tf.SetStdout(io.Discard)
	res.Validate, err = tf.Validate(ctx)
	tf.SetStdout(out(opts.Stdout))
	if err != nil {
		return nil, &RunError{Command: "validate", Err: err}
	}
	if !res.Validate.Valid || res.Validate.ErrorCount > 0 {
		res.Calls = local.Calls()
		return res, ErrInvalidConfig
	}
	planOpts := []tfexec.PlanOption{tfexec.Refresh(false), tfexec.Lock(false), tfexec.Out("offline.tfplan")}
	if varFile != "" {
		planOpts = append(planOpts, tfexec.VarFile(varFile))
	}
	vars := []string{"stage=" + cfg.Stage, "prefix=" + cfg.Prefix}
	for _, k := range sortedKeys(cfg.Vars) {
		if k != "package_dir" { // the scratch tree's dist/ holds the packages
			vars = append(vars, k+"="+cfg.Vars[k])
		}
	}
	for _, v := range vars {
		planOpts = append(planOpts, tfexec.Var(v))
	}
	if _, err := tf.Plan(ctx, planOpts...); err != nil {
		res.Calls = local.Calls()
		if u := local.Unexpected(); u != nil {
			return res, fmt.Errorf("%w (terraform plan: %v)", u, firstLine(err))
		}
		return res, &RunError{Command: "plan", Err: err}
	}
	tf.SetStdout(io.Discard)
	res.Plan, err = tf.ShowPlanFile(ctx, "offline.tfplan")
	if err != nil {
		return res, &RunError{Command: "show", Err: err}
	}
	res.Calls = local.Calls()
	return res, local.Unexpected()
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// OfflineEnv is the whole environment an offline terraform runs with:
// environ without AWS_* and TF_* variables, plus local's endpoint and
// placeholder credentials and no checkpoint calls. With a CLI configuration
// (a local provider mirror) the proxies point at a closed port of 127.0.0.1,
// so that any client that would leave the machine fails; without one,
// terraform init needs the registry, and the caller's proxies are kept.
func OfflineEnv(environ []string, local *LocalAWS, cliConfigFile string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		proxy := strings.EqualFold(k, "http_proxy") || strings.EqualFold(k, "https_proxy") || strings.EqualFold(k, "no_proxy")
		if strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "TF_") || (proxy && cliConfigFile != "") {
			continue
		}
		env[k] = v
	}
	for k, v := range local.Env() {
		env[k] = v
	}
	env["CHECKPOINT_DISABLE"] = "1"
	if cliConfigFile != "" {
		env["TF_CLI_CONFIG_FILE"] = cliConfigFile
		env["HTTP_PROXY"] = "http://127.0.0.1:9"
		env["HTTPS_PROXY"] = "http://127.0.0.1:9"
		env["NO_PROXY"] = "127.0.0.1,localhost"
	}
	return env
}

// scratchTree lays out root like the repository for the configuration:
// root/terraform (the *.tf files but override files, generated/, and a
// local backend override), root/archiver/queries (the named queries) and
// root/dist (links to the Lambda packages, placeholders for missing
// ones). It
// returns the terraform directory, the var-file's path in it ("" for
// none) and the placeholder packages.
func scratchTree(cfg Config, root string) (dir, varFile string, placeholders []string, err error) {
	dir = filepath.Join(root, "terraform")
	if err := os.MkdirAll(filepath.Join(dir, "generated"), 0o755); err != nil {
		return "", "", nil, err
	}
	tfs, err := filepath.Glob(filepath.Join(cfg.WorkingDir, "*.tf"))
	if err != nil {
		return "", "", nil, err
	}
	if len(tfs) == 0 {
		return "", "", nil, fmt.Errorf("WorkingDir: no *.tf files in %s", cfg.WorkingDir)
	}
	gen, _ := filepath.Glob(filepath.Join(cfg.WorkingDir, "generated", "*"))
	for _, f := range append(tfs, gen...) {
		base := filepath.Base(f)
		if base == "override.tf" || strings.HasSuffix(base, "_override.tf") {
			continue // deploy's own backend override, or a user's
		}
		rel, _ := filepath.Rel(cfg.WorkingDir, f)
		if err := copyFile(f, filepath.Join(dir, rel)); err != nil {
			return "", "", nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "zz_offline_override.tf"),
		[]byte("# streamfold deploy plan --offline: an empty local state in a scratch copy.\nterraform {\n  backend \"local\" {}\n}\n"), 0o644); err != nil {
		return "", "", nil, err
	}
	queries, _ := filepath.Glob(filepath.Join(cfg.WorkingDir, "..", "archiver", "queries", "*.sql"))
	for _, q := range queries {
		if err := copyFile(q, filepath.Join(root, "archiver", "queries", filepath.Base(q))); err != nil {
			return "", "", nil, err
		}
	}
	pkgDir := cfg.PackageDir()
	for _, fn := range Functions {
		src := filepath.Join(pkgDir, fn+".zip")
		dst := filepath.Join(root, "dist", fn+".zip")
		if fileExists(src) {
			// Terraform only hashes the zips: link them, do not copy.
			err = linkFile(src, dst)
		} else {
			placeholders = append(placeholders, src)
			err = writeFile(dst, []byte("placeholder: "+src+" was not built (make package)"))
		}
		if err != nil {
			return "", "", nil, err
		}
	}
	if cfg.VarFile != "" {
		src := cfg.VarFile
		if !filepath.IsAbs(src) {
			src = filepath.Join(cfg.WorkingDir, src)
		}
		varFile = filepath.Join(root, "vars.tfvars")
		if err := copyFile(src, varFile); err != nil {
			return "", "", nil, fmt.Errorf("VarFile: %w", err)
		}
	}
	sort.Strings(placeholders)
	return dir, varFile, placeholders, nil
}

func linkFile(src, dst string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Symlink(abs, dst)
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, b)
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	version "github.com/hashicorp/go-version"
)

// TerraformConstraint is the range of Terraform versions the configuration
// accepts: exactly versions.tf's required_version (a test in ../ keeps the
// two equal). Preflight refuses a terraform outside it before running
// anything, where Terraform itself would fail only after init.
const TerraformConstraint = ">= 1.5.7, < 2.0"

// MinTerraformVersion is the lowest version TerraformConstraint accepts, and
// the one `make tools TOOLS=terraform` builds on the project's machines.
const MinTerraformVersion = "1.5.7"

// terraformInstallHint says what to install; it ends every terraform error.
const terraformInstallHint = "install Terraform " + TerraformConstraint +
	" (https://developer.hashicorp.com/terraform/install), or build " + MinTerraformVersion +
	" under .tools/bin with `make tools TOOLS=terraform`, or pass --terraform PATH"

// Env is what Preflight may look at, injectable for tests.
type Env struct {
	// Getenv looks up an environment variable ("" = unset).
	Getenv func(string) string
	// FileExists reports whether a regular file exists at path.
	FileExists func(path string) bool
	// LookPath finds an executable; default exec.LookPath.
	LookPath func(string) (string, error)
	// AssumeRoleAvailable accepts a role the SDK finds at run time (EC2
	// instance profile via IMDS), which is not checked here: no network.
	AssumeRoleAvailable bool
	// TerraformVersion reports the version of the terraform binary at path
	// ("1.5.7"); default TerraformVersionOf, which runs it.
	TerraformVersion func(path string) (string, error)
}

// OSEnv is the real process environment.
func OSEnv() Env {
	return Env{Getenv: os.Getenv, FileExists: fileExists, LookPath: exec.LookPath, TerraformVersion: TerraformVersionOf}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Functions are the Lambda functions whose zips Terraform reads from the
// package directory (Config.PackageDir): one per cmd/<name>.
var Functions = []string{"projector", "archiver", "ingest", "api", "reconcile"}

// Preflight fails fast, before anything runs: the terraform binary must be
// present and within TerraformConstraint, AWS credentials configured, and
// for plan, apply and destroy (which evaluate the configuration, hashing
// every zip) the Lambda packages present too. It runs `terraform version
// -json` and never calls the network. Errors wrap ErrNoTerraform,
// ErrTerraformVersion (a *TerraformVersionError), ErrNoCredentials or
// ErrNoPackages.
func Preflight(cfg Config, action string, env Env) error {
	if err := CheckTerraform(cfg.TerraformPath, env); err != nil {
		return err
	}
	if err := CheckCredentials(env); err != nil {
		return err
	}
	switch action {
	case ActionPlan, ActionApply, ActionDestroy:
		return CheckPackages(cfg, env)
	}
	return nil
}

// CheckPackages reports the missing <PackageDir>/<function>.zip files, by
// name.
func CheckPackages(cfg Config, env Env) error {
	exists := env.FileExists
	if exists == nil {
		exists = fileExists
	}
	dir := cfg.PackageDir()
	var missing []string
	for _, fn := range Functions {
		p := filepath.Join(dir, fn+".zip")
		if !exists(p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s missing (a cmd that does not exist yet cannot be deployed)", ErrNoPackages, strings.Join(missing, ", "))
	}
	return nil
}

// CheckTerraform finds the terraform binary (a path containing a separator
// must exist; a bare name is looked up on PATH) and checks that its version
// is within TerraformConstraint. Errors wrap ErrNoTerraform or are a
// *TerraformVersionError; both say what to install.
func CheckTerraform(path string, env Env) error {
	found := ""
	if strings.ContainsRune(path, os.PathSeparator) || strings.ContainsRune(path, '/') {
		if env.FileExists != nil && env.FileExists(path) {
			found = path
		}
	} else {
		look := env.LookPath
		if look == nil {
			look = exec.LookPath
		}
		if p, err := look(path); err == nil {
			found = p
		}
	}
	if found == "" {
		return fmt.Errorf("%w at %q: %s", ErrNoTerraform, path, terraformInstallHint)
	}
	versionOf := env.TerraformVersion
	if versionOf == nil {
		versionOf = TerraformVersionOf
	}
	v, err := versionOf(found)
	if err != nil {
		return &TerraformVersionError{Path: path, Err: err}
	}
	return CheckTerraformVersion(path, v)
}

// CheckTerraformVersion returns a *TerraformVersionError unless v (as
// terraform reports it: "1.9.8", "v1.14.0", "1.10.0-beta1") is within
// TerraformConstraint. A prerelease counts as its release: 1.6.0-rc1 is
// accepted, 2.0.0-alpha1 is not.
func CheckTerraformVersion(path, v string) error {
	parsed, err := version.NewVersion(strings.TrimPrefix(strings.TrimSpace(v), "v"))
	if err != nil {
		return &TerraformVersionError{Path: path, Version: v, Err: fmt.Errorf("unparseable version %q", v)}
	}
	if !TerraformVersionAllowed(parsed) {
		return &TerraformVersionError{Path: path, Version: v}
	}
	return nil
}

var terraformConstraints = version.MustConstraints(version.NewConstraint(TerraformConstraint))

// TerraformVersionAllowed reports whether v (its prerelease part ignored)
// satisfies TerraformConstraint.
func TerraformVersionAllowed(v *version.Version) bool {
	return terraformConstraints.Check(v.Core())
}

// terraformVersionTimeout bounds `terraform version`: it reads no
// configuration and, with CHECKPOINT_DISABLE, calls no network.
const terraformVersionTimeout = 20 * time.Second

var textVersion = regexp.MustCompile(`(?m)^Terraform v([0-9][0-9A-Za-z.+-]*)`)

// TerraformVersionOf runs `path version -json` (Terraform 0.13 and later)
// and returns its terraform_version; from an older terraform, which has no
// -json and prints text, it reads the first "Terraform vX.Y.Z" line.
// CHECKPOINT_DISABLE=1 keeps terraform from asking HashiCorp about updates.
func TerraformVersionOf(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), terraformVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version", "-json")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	var doc struct {
		TerraformVersion string `json:"terraform_version"`
	}
	if jerr := json.Unmarshal(out, &doc); jerr == nil && doc.TerraformVersion != "" {
		return doc.TerraformVersion, nil
	}
	if m := textVersion.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("`%s version -json` did not finish in %v", path, terraformVersionTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("`%s version -json` failed: %v", path, err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return "", fmt.Errorf("`%s version -json` printed no terraform_version (first line %q)", path, first)
}

// CheckCredentials looks for a credential source the AWS SDK would use:
// static keys, a profile, web identity, a container role, or a shared
// credentials file. Instance roles (IMDS) are accepted only when
// env.AssumeRoleAvailable is set.
func CheckCredentials(env Env) error {
	get := env.Getenv
	if get == nil {
		get = func(string) string { return "" }
	}
	exists := env.FileExists
	if exists == nil {
		exists = func(string) bool { return false }
	}
	switch {
	case get("AWS_ACCESS_KEY_ID") != "" && get("AWS_SECRET_ACCESS_KEY") != "":
		return nil
	case get("AWS_PROFILE") != "":
		return nil
	case get("AWS_WEB_IDENTITY_TOKEN_FILE") != "":
		return nil
	case get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "", get("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "":
		return nil
	case env.AssumeRoleAvailable:
		return nil
	}
	if f := get("AWS_SHARED_CREDENTIALS_FILE"); f != "" {
		if exists(f) {
			return nil
		}
	} else if home := get("HOME"); home != "" && exists(filepath.Join(home, ".aws", "credentials")) {
		return nil
	}
	return ErrNoCredentials
}

package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

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
}

// OSEnv is the real process environment.
func OSEnv() Env {
	return Env{Getenv: os.Getenv, FileExists: fileExists, LookPath: exec.LookPath}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Functions are the Lambda functions whose zips Terraform reads from the
// package directory (Config.PackageDir): one per cmd/<name>.
var Functions = []string{"projector", "archiver", "ingest", "api"}

// Preflight fails fast, before anything runs: the terraform binary and AWS
// credentials must be present, and for plan, apply and destroy (which
// evaluate the configuration, hashing every zip) the Lambda packages too.
// It never calls the network. Errors wrap ErrNoTerraform, ErrNoCredentials
// or ErrNoPackages.
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

// CheckTerraform finds the terraform binary: a path containing a separator
// must exist; a bare name is looked up on PATH.
func CheckTerraform(path string, env Env) error {
	if strings.ContainsRune(path, os.PathSeparator) || strings.ContainsRune(path, '/') {
		if env.FileExists != nil && env.FileExists(path) {
			return nil
		}
	} else {
		look := env.LookPath
		if look == nil {
			look = exec.LookPath
		}
		if _, err := look(path); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w at %q: run `make tools` (installs it under .tools/bin) or pass --terraform", ErrNoTerraform, path)
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

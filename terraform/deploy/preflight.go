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

// Preflight fails fast, before anything runs: the terraform binary and AWS
// credentials must be present. It never calls the network. Errors wrap
// ErrNoTerraform or ErrNoCredentials.
func Preflight(cfg Config, env Env) error {
	if err := CheckTerraform(cfg.TerraformPath, env); err != nil {
		return err
	}
	return CheckCredentials(env)
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

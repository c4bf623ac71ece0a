package deploy

import (
	"errors"
	"fmt"
)

// Sentinel errors returned (wrapped) by Preflight and Runner; test with errors.Is.
var (
	// ErrNoTerraform means the terraform binary was not found.
	ErrNoTerraform = errors.New("deploy: terraform not found")
	// ErrTerraformVersion means the terraform binary is outside
	// TerraformConstraint, or its version could not be read; the error is a
	// *TerraformVersionError.
	ErrTerraformVersion = errors.New("deploy: unsupported terraform version")
	// ErrNoCredentials means no AWS credential source was found.
	ErrNoCredentials = errors.New("deploy: no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run where an IAM role is available and pass --assume-role-available)")
	// ErrNoPackages means Lambda zips are missing from the package
	// directory (Terraform hashes them while planning): run `make package`.
	ErrNoPackages = errors.New("deploy: Lambda packages missing: run `make package`")
	// ErrForeignOverride means BackendOverrideFile exists but was not
	// written by deploy; it is neither overwritten nor removed.
	ErrForeignOverride = errors.New("deploy: " + BackendOverrideFile + " was not written by streamfold deploy; move it away")
)

// TerraformVersionError is returned by CheckTerraform and Preflight when the
// terraform at Path is outside TerraformConstraint (Version set, Err nil) or
// its version could not be read (Err set). errors.Is(err,
// ErrTerraformVersion) holds; errors.Unwrap gives Err.
type TerraformVersionError struct {
	Path    string // the --terraform value
	Version string // what terraform reported; "" when Err says why it is unknown
	Err     error
}

func (e *TerraformVersionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("deploy: cannot tell the version of terraform at %q (%v): %s", e.Path, e.Err, terraformInstallHint)
	}
	return fmt.Sprintf("deploy: terraform at %q is %s, outside %s (terraform/versions.tf): %s", e.Path, e.Version, TerraformConstraint, terraformInstallHint)
}

// Is makes errors.Is(err, ErrTerraformVersion) true.
func (e *TerraformVersionError) Is(target error) bool { return target == ErrTerraformVersion }

// Unwrap returns why the version could not be read, if that is the error.
func (e *TerraformVersionError) Unwrap() error { return e.Err }

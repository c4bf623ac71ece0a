package deploy

import "errors"

// Sentinel errors returned (wrapped) by Preflight and Runner; test with errors.Is.
var (
	// ErrNoTerraform means the terraform binary was not found.
	ErrNoTerraform = errors.New("deploy: terraform not found")
	// ErrNoCredentials means no AWS credential source was found.
	ErrNoCredentials = errors.New("deploy: no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run where an IAM role is available and pass --assume-role-available)")
	// ErrNoPackages means Lambda zips are missing from the package
	// directory (Terraform hashes them while planning): run `make package`.
	ErrNoPackages = errors.New("deploy: Lambda packages missing: run `make package`")
	// ErrForeignOverride means BackendOverrideFile exists but was not
	// written by deploy; it is neither overwritten nor removed.
	ErrForeignOverride = errors.New("deploy: " + BackendOverrideFile + " was not written by streamfold deploy; move it away")
)

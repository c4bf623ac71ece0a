package devstack

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these (test with
// errors.Is) and add the details: which service, which path or port, and for
// ErrNotReady the last lines of the service's log file.
var (
	// ErrInvalidConfig: Config.Validate rejected a field; the message names it.
	ErrInvalidConfig = errors.New("devstack: invalid config")

	// ErrToolMissing: a binary or jar needed to start a service is not installed.
	ErrToolMissing = errors.New("devstack: tool missing (run `make tools` to install DynamoDB Local and MinIO into .tools/)")

	// ErrPortInUse: the service's port is taken by something that does not answer
	// like the expected service, so we neither reuse it nor start our own.
	ErrPortInUse = errors.New("devstack: port in use by another program")

	// ErrNotReady: a service we started did not answer within Config.StartTimeout,
	// or exited before it did.
	ErrNotReady = errors.New("devstack: service not ready")
)

// Package toolkit holds what the operator's workflows share. The workflows
// themselves are its subpackages, one per job, each a typed function that
// takes an options struct with Validate and returns a result struct that a
// program renders as text or JSON:
//
//   - conn: connection settings (naming, AWS clients, the archive)
//   - emit: append NDJSON events to the event table
//   - localrun: run the consumers (projector, archiver) over the event
//     table's stream locally, with Lambda's semantics
//   - apiserver: serve the HTTP API, the dashboard and the ingest routes
//   - inspect: what the event table holds, one subject's events, what was
//     projected
//   - redrive: list and replay dead letters; redrive failed stream batches
//   - repair: verify the projections against the archive; rebuild them
//   - localstack: start, check and stop the local stack (dev up, status, down)
//   - queryview: answer an access pattern and render it as a table
//   - simulation: generate a deterministic workload, appended or as NDJSON
//   - archivetools: list, compact, maintain, register and migrate the
//     Iceberg archive; its table schemas and named queries
//   - audit: reconcile the event table against the projections and the
//     archive, and heal the gaps
//   - deploy: plan, apply, destroy and show the infrastructure (Terraform),
//     also offline
//
// The streamfold CLI (cmd/streamfold) is a thin layer over them: flags,
// wiring and rendering. None of them ships to Lambda (internal/laptop/walls).
package toolkit

import "errors"

// ErrInvalidOptions is wrapped by every workflow's Options.Validate error
// (an *OptionsError): the options are wrong, so retrying cannot help. The
// CLI maps it to its usage exit code.
var ErrInvalidOptions = errors.New("invalid options")

// OptionsError names the workflow, the field at fault and what is wrong
// with it: "emit: Options.BatchLines: must not be negative, got -1".
type OptionsError struct {
	Workflow, Field, Problem string
	// Err is the underlying error, if any.
	Err error
}

func (e *OptionsError) Error() string {
	return e.Workflow + ": Options." + e.Field + ": " + e.Problem
}

// Unwrap makes errors.Is(err, ErrInvalidOptions) true, and reaches Err.
func (e *OptionsError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidOptions, e.Err}
	}
	return []error{ErrInvalidOptions}
}

// Invalid is an *OptionsError; err, when not nil, gives the problem and is
// wrapped.
func Invalid(workflow, field string, err error, problem string) error {
	if err != nil {
		if problem != "" {
			problem += ": "
		}
		problem += err.Error()
	}
	return &OptionsError{Workflow: workflow, Field: field, Problem: problem, Err: err}
}

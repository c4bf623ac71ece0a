package schema

import (
	"slices"
	"strconv"
)

// Keys and vocabularies of the projections that both the projector (which
// writes them) and the query package (which reads them) must agree on.

// JobKey is the partition key of a workflow-jobs item (seed 003):
// "<installation>#<job id>".
func JobKey(installation, job int64) string {
	return strconv.FormatInt(installation, 10) + "#" + strconv.FormatInt(job, 10)
}

// RunKey is the partition key of a run's items in workflow-runs (seed 003;
// older projectors' shares and rows of its summary, see SummarizeRun):
// "<installation>#<run id>#<run attempt>".
func RunKey(installation, run, attempt int64) string {
	return JobKey(installation, run) + "#" + strconv.FormatInt(attempt, 10)
}

// DeploymentKey is the partition key of a deployments item (seed 003):
// "<installation>#<deployment id>".
func DeploymentKey(installation, deployment int64) string {
	return JobKey(installation, deployment)
}

// JobStatuses returns seed 003's job statuses in lifecycle order (a fresh
// slice each call).
func JobStatuses() []string { return Statuses(AggregateJob) }

// FailedConclusions returns the job conclusions that count as failures in
// a run summary's failed_jobs (a fresh slice each call).
func FailedConclusions() []string { return slices.Clone(failedConclusions) }

var failedConclusions = []string{"failure", "timed_out", "startup_failure"}

// MessageStatuses returns seed 004's message statuses in lifecycle order,
// the counters of a per-stage message-count row (a fresh slice each call).
func MessageStatuses() []string { return Statuses(AggregateMessage) }

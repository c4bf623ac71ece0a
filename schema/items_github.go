package schema

import "encoding/json"

// JobItem is a GitHub workflow job of the workflow_jobs table (seed 003),
// with its RunsOn runner's details, as the job fold writes it. An
// attribute no event carried is absent: a job known only from runner
// events has no created_at, and so is in none of the GSIs yet.
type JobItem struct {
	// PK is JobKey(installation, job), SK "v".
	PK string `dynamodbav:"pk" json:"pk"`
	SK string `dynamodbav:"sk" json:"sk"`
	// InstallationID and JobID are always present.
	InstallationID int64 `dynamodbav:"installation_id" json:"installation_id"`
	JobID          int64 `dynamodbav:"job_id" json:"job_id"`
	// WasInterrupted is true once a runner of the job was interrupted;
	// always present.
	WasInterrupted bool   `dynamodbav:"was_interrupted" json:"was_interrupted"`
	RunID          int64  `dynamodbav:"run_id,omitempty" json:"run_id,omitempty"`
	RunAttempt     int64  `dynamodbav:"run_attempt,omitempty" json:"run_attempt,omitempty"`
	OrgName        string `dynamodbav:"org_name,omitempty" json:"org_name,omitempty"`
	RepoFullName   string `dynamodbav:"repo_full_name,omitempty" json:"repo_full_name,omitempty"`
	RepoIsPrivate  *bool  `dynamodbav:"repo_is_private,omitempty" json:"repo_is_private,omitempty"`
	// WorkflowID is present only when a webhook carried workflow_id.
	WorkflowID    int64  `dynamodbav:"workflow_id,omitempty" json:"workflow_id,omitempty"`
	WorkflowName  string `dynamodbav:"workflow_name,omitempty" json:"workflow_name,omitempty"`
	JobName       string `dynamodbav:"job_name,omitempty" json:"job_name,omitempty"`
	HeadSHA       string `dynamodbav:"head_sha,omitempty" json:"head_sha,omitempty"`
	HeadBranch    string `dynamodbav:"head_branch,omitempty" json:"head_branch,omitempty"`
	DefaultBranch string `dynamodbav:"default_branch,omitempty" json:"default_branch,omitempty"`
	JobHTMLURL    string `dynamodbav:"job_html_url,omitempty" json:"job_html_url,omitempty"`
	// Status is one of JobStatuses(); Conclusion is the completed
	// webhook's, absent before.
	Status     string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	Conclusion string `dynamodbav:"conclusion,omitempty" json:"conclusion,omitempty"`
	// CreatedAt is the job's created_at (else the earliest time known of
	// it, for webhooks without one); ReceivedAt the first webhook's
	// recordedat; ScheduledAt the runner's first scheduling; StartedAt the
	// earliest started_at of an in_progress or completed webhook;
	// CompletedAt the completed webhook's completed_at.
	CreatedAt   string `dynamodbav:"created_at,omitempty" json:"created_at,omitempty"`
	ReceivedAt  string `dynamodbav:"received_at,omitempty" json:"received_at,omitempty"`
	ScheduledAt string `dynamodbav:"scheduled_at,omitempty" json:"scheduled_at,omitempty"`
	StartedAt   string `dynamodbav:"started_at,omitempty" json:"started_at,omitempty"`
	CompletedAt string `dynamodbav:"completed_at,omitempty" json:"completed_at,omitempty"`
	// The instance attributes are the latest runner event's.
	InstanceID        string `dynamodbav:"instance_id,omitempty" json:"instance_id,omitempty"`
	InstanceType      string `dynamodbav:"instance_type,omitempty" json:"instance_type,omitempty"`
	InstanceLifecycle string `dynamodbav:"instance_lifecycle,omitempty" json:"instance_lifecycle,omitempty"`
	FleetID           string `dynamodbav:"fleet_id,omitempty" json:"fleet_id,omitempty"`
	PoolName          string `dynamodbav:"pool_name,omitempty" json:"pool_name,omitempty"`
	RunnerID          int64  `dynamodbav:"runner_id,omitempty" json:"runner_id,omitempty"`
	RunnerName        string `dynamodbav:"runner_name,omitempty" json:"runner_name,omitempty"`
	RunnerGroupID     int64  `dynamodbav:"runner_group_id,omitempty" json:"runner_group_id,omitempty"`
	// Labels are the latest webhook's runner labels, in its order.
	Labels       []string `dynamodbav:"labels,omitempty" json:"labels,omitempty"`
	DeploymentID int64    `dynamodbav:"deployment_id,omitempty" json:"deployment_id,omitempty"`
	// UsageInSeconds and UsageInDollars sum the instances' latest usage
	// reports, exact decimals; absent when no runner reported one.
	UsageInSeconds json.Number `dynamodbav:"usage_in_seconds,omitempty" json:"usage_in_seconds,omitempty"`
	UsageInDollars json.Number `dynamodbav:"usage_in_dollars,omitempty" json:"usage_in_dollars,omitempty"`
	// InternalQueueDurationInMs is started_at - scheduled_at and
	// OverallQueueDurationInMs started_at - created_at, each present when
	// both times are known and in order.
	InternalQueueDurationInMs *int64 `dynamodbav:"internal_queue_duration_in_ms,omitempty" json:"internal_queue_duration_in_ms,omitempty"`
	OverallQueueDurationInMs  *int64 `dynamodbav:"overall_queue_duration_in_ms,omitempty" json:"overall_queue_duration_in_ms,omitempty"`
	// LastUpdatedAt is the latest recordedat of the job's events.
	LastUpdatedAt string `dynamodbav:"last_updated_at,omitempty" json:"last_updated_at,omitempty"`
	// TTL is the expiry, epoch seconds (AttrTTL).
	TTL int64 `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
	// CountsInRun (AttrCountsInRun, projector bookkeeping) is true when the
	// item is its job's share of its run's summary (SummarizeRun): the
	// item names the run and is in GSI3. Items an older projector wrote
	// lack it; their runs count them from a RunJobItem or a summary row.
	CountsInRun bool `dynamodbav:"_r,omitempty" json:"_r,omitempty"`
}

// RunItem is a workflow run's summary (seed 003's workflow_runs item, pk
// RunKey(installation, run, attempt), sk RunSummarySK) as readers get it:
// the sum of its jobs' shares (their marked job items, and RunJobItems an
// older projector wrote), SummarizeRun. A counter that sums to 0 is absent.
type RunItem struct {
	PK string `dynamodbav:"pk" json:"pk"`
	SK string `dynamodbav:"sk" json:"sk"`
	RunAttrs
	RunCounters
	// Status (in_progress, waiting or completed) and Conclusion (success
	// or failure, present once completed) are derived from the counters.
	Status     string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	Conclusion string `dynamodbav:"conclusion,omitempty" json:"conclusion,omitempty"`
	// TTL is the expiry of the run's last job, rounded up to midnight.
	TTL int64 `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
}

// RunAttrs are a run's own attributes: its ids, and those its jobs carry
// (in a summary, each the latest job's).
type RunAttrs struct {
	InstallationID int64  `dynamodbav:"installation_id,omitempty" json:"installation_id,omitempty"`
	RunID          int64  `dynamodbav:"run_id,omitempty" json:"run_id,omitempty"`
	RunAttempt     int64  `dynamodbav:"run_attempt,omitempty" json:"run_attempt,omitempty"`
	RepoFullName   string `dynamodbav:"repo_full_name,omitempty" json:"repo_full_name,omitempty"`
	WorkflowName   string `dynamodbav:"workflow_name,omitempty" json:"workflow_name,omitempty"`
	HeadSHA        string `dynamodbav:"head_sha,omitempty" json:"head_sha,omitempty"`
	HeadBranch     string `dynamodbav:"head_branch,omitempty" json:"head_branch,omitempty"`
}

// RunCounters count a run's jobs: TotalJobs all of them, CompletedJobs the
// completed ones, SuccessJobs and FailedJobs those concluded success and
// failed (FailedConclusions), WaitingJobs those waiting for a deployment's
// approval. In a job's share each is 0 or 1 (TotalJobs 1).
type RunCounters struct {
	TotalJobs     int64 `dynamodbav:"total_jobs,omitempty" json:"total_jobs,omitempty"`
	CompletedJobs int64 `dynamodbav:"completed_jobs,omitempty" json:"completed_jobs,omitempty"`
	SuccessJobs   int64 `dynamodbav:"success_jobs,omitempty" json:"success_jobs,omitempty"`
	FailedJobs    int64 `dynamodbav:"failed_jobs,omitempty" json:"failed_jobs,omitempty"`
	WaitingJobs   int64 `dynamodbav:"waiting_jobs,omitempty" json:"waiting_jobs,omitempty"`
}

// DeploymentItem is a deployment's approval state of the deployments
// table (pk DeploymentKey(installation, deployment), sk "v").
type DeploymentItem struct {
	PK             string `dynamodbav:"pk" json:"pk"`
	SK             string `dynamodbav:"sk" json:"sk"`
	InstallationID int64  `dynamodbav:"installation_id" json:"installation_id"`
	DeploymentID   int64  `dynamodbav:"deployment_id" json:"deployment_id"`
	RepoFullName   string `dynamodbav:"repo_full_name,omitempty" json:"repo_full_name,omitempty"`
	Environment    string `dynamodbav:"environment,omitempty" json:"environment,omitempty"`
	// Status is pending, approved or rejected.
	Status           string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	RequiresApproval *bool  `dynamodbav:"requires_approval,omitempty" json:"requires_approval,omitempty"`
	// CreatedAt is the pending event's time, or the first event's until
	// that is known; ApprovedAt and RejectedAt the earliest such events'.
	CreatedAt  string `dynamodbav:"created_at,omitempty" json:"created_at,omitempty"`
	ApprovedAt string `dynamodbav:"approved_at,omitempty" json:"approved_at,omitempty"`
	RejectedAt string `dynamodbav:"rejected_at,omitempty" json:"rejected_at,omitempty"`
	// JobIDs are the jobs the deployment gates, sorted; absent when none.
	JobIDs []int64 `dynamodbav:"job_ids,omitempty" json:"job_ids,omitempty"`
	// TTL is the expiry, epoch seconds (AttrTTL).
	TTL int64 `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
}

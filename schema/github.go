package schema

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GitHub workflow_job webhook event types; the suffix is the payload's action.
const (
	TypeJobQueued     = "github.workflow_job.queued"
	TypeJobWaiting    = "github.workflow_job.waiting"
	TypeJobInProgress = "github.workflow_job.in_progress"
	TypeJobCompleted  = "github.workflow_job.completed"
)

// RunsOn runner event types (seed 003's internal events).
const (
	TypeRunnerScheduled   = "runson.runner.scheduled"
	TypeRunnerRescheduled = "runson.runner.rescheduled"
	TypeRunnerAttached    = "runson.runner.attached"
	TypeRunnerInterrupted = "runson.runner.interrupted"
	TypeRunnerTerminated  = "runson.runner.terminated"
)

// Deployment approval event types (seed 003's deployments table).
const (
	TypeDeploymentPending  = "github.deployment.pending"
	TypeDeploymentApproved = "github.deployment.approved"
	TypeDeploymentRejected = "github.deployment.rejected"
)

// WorkflowJobTypePrefix prefixes every workflow_job event type.
const WorkflowJobTypePrefix = "github.workflow_job."

// ActionStarted is the workflow_job action GitHub sent, before it was
// renamed in_progress (2021), when a runner picked the job up; GitHub
// Enterprise Server versions of that time still send it. It is read as
// "in_progress" (JobAction).
const ActionStarted = "started"

// JobAction returns the action a workflow_job delivery's event type is
// named after: the legacy ActionStarted is "in_progress", every other
// action is itself.
func JobAction(action string) string {
	if action == ActionStarted {
		return "in_progress"
	}
	return action
}

// The kinds of subject of the github domain's events.
const (
	AggregateJob        = "job"        // JobSubject: a job's webhooks and its runner's events
	AggregateDeployment = "deployment" // DeploymentSubject: a deployment's approval events
)

func init() {
	webhook := func() Payload { return new(WorkflowJobWebhook) }
	runner := func() Payload { return new(RunnerEvent) }
	deployment := func() Payload { return new(DeploymentEvent) }
	registerDomain(Descriptor{
		Domain: DomainGitHub,
		Doc:    "GitHub workflow_job webhooks, RunsOn runner events and deployment approvals (seed 003)",
		Aggregates: []Aggregate{
			{
				Kind: AggregateJob, Subject: "github/<installation>/job/<job id>",
				// A late queued webhook (a redelivery, or the second queued
				// delivery of an approved deployment) never moves a job back;
				// scheduled comes from runson.runner.scheduled.
				Lifecycle: Lifecycle{{"queued", 0}, {"waiting", 1}, {"scheduled", 2}, {"in_progress", 3}, {"completed", 4}},
			},
			{
				Kind: AggregateDeployment, Subject: "github/<installation>/deployment/<deployment id>",
				Lifecycle: Lifecycle{{"pending", 0}, {"approved", 1}, {"rejected", 1}},
			},
		},
		Types: slices.Concat(
			// A webhook's status is its action (validation checks that the
			// type names it); the fold turns a queued delivery of a job
			// that already waits for an approval into waiting.
			eventTypes(AggregateJob, webhook,
				TypeJobQueued, "queued",
				TypeJobWaiting, "waiting",
				TypeJobInProgress, "in_progress",
				TypeJobCompleted, "completed"),
			eventTypes(AggregateJob, runner,
				TypeRunnerScheduled, "scheduled",
				TypeRunnerRescheduled, "",
				TypeRunnerAttached, "",
				TypeRunnerInterrupted, "",
				TypeRunnerTerminated, ""),
			eventTypes(AggregateDeployment, deployment,
				TypeDeploymentPending, "pending",
				TypeDeploymentApproved, "approved",
				TypeDeploymentRejected, "rejected"),
		),
		Tables: []string{TableWorkflowJobs, TableWorkflowRuns, TableDeployments},
	})
}

// JobSubject is the subject of a workflow job's events. Job ids are scoped by
// installation (GHES installations reuse ids), so both are in it.
func JobSubject(installationID, jobID int64) string {
	return "github/" + strconv.FormatInt(installationID, 10) + "/job/" + strconv.FormatInt(jobID, 10)
}

// DeploymentSubject is the subject of a deployment's approval events.
func DeploymentSubject(installationID, deploymentID int64) string {
	return "github/" + strconv.FormatInt(installationID, 10) + "/deployment/" + strconv.FormatInt(deploymentID, 10)
}

// WorkflowJobWebhook is the body of a GitHub workflow_job webhook delivery,
// with the fields streamfold uses; every other field stays in the raw data.
//
// Payloads of older GitHub Enterprise Server versions decode with these
// fallbacks (the raw data keeps what was sent):
//
//   - Action "started" (ActionStarted) decodes as "in_progress";
//   - a missing or null workflow_job.run_attempt decodes as 1 (it was
//     added in 2021; before, every run had one attempt);
//   - workflow_job.created_at (added in 2022) may be missing: CreatedAt is
//     then nil, EventTime falls back to started_at, and the projector takes
//     the job's earliest known time (see projector.JobState).
type WorkflowJobWebhook struct {
	Action       string         `json:"action"`
	WorkflowJob  WorkflowJob    `json:"workflow_job"`
	Deployment   *GitHubID      `json:"deployment,omitempty"`
	Repository   GitHubRepo     `json:"repository"`
	Organization *GitHubAccount `json:"organization,omitempty"`
	Installation *GitHubID      `json:"installation,omitempty"`
	Sender       *GitHubAccount `json:"sender,omitempty"`
}

// WorkflowJob is the workflow_job object of the webhook.
type WorkflowJob struct {
	ID              int64      `json:"id"`
	RunID           int64      `json:"run_id"`
	RunAttempt      int        `json:"run_attempt"`
	WorkflowName    string     `json:"workflow_name"`
	Name            string     `json:"name"`
	HeadSHA         string     `json:"head_sha"`
	HeadBranch      string     `json:"head_branch"`
	HTMLURL         string     `json:"html_url"`
	Status          string     `json:"status"`
	Conclusion      *string    `json:"conclusion"`
	CreatedAt       *time.Time `json:"created_at"`
	StartedAt       *time.Time `json:"started_at"`
	CompletedAt     *time.Time `json:"completed_at"`
	Labels          []string   `json:"labels"`
	RunnerID        *int64     `json:"runner_id"`
	RunnerName      *string    `json:"runner_name"`
	RunnerGroupID   *int64     `json:"runner_group_id"`
	RunnerGroupName *string    `json:"runner_group_name"`
}

// GitHubID is an object of which only the id matters (installation, deployment).
type GitHubID struct {
	ID int64 `json:"id"`
}

// GitHubAccount is a user or organization.
type GitHubAccount struct {
	Login string `json:"login"`
}

// GitHubRepo is the repository object of a webhook.
type GitHubRepo struct {
	ID            int64          `json:"id"`
	FullName      string         `json:"full_name"`
	Private       bool           `json:"private"`
	DefaultBranch string         `json:"default_branch"`
	Owner         *GitHubAccount `json:"owner,omitempty"`
}

// runAttemptAbsent marks a run_attempt that the payload did not carry.
const runAttemptAbsent = -1 << 31

// UnmarshalJSON decodes the payload with the fallbacks of older GitHub
// Enterprise Server versions (see WorkflowJobWebhook). An explicit
// run_attempt of 0 or less is kept, for validation to refuse.
func (p *WorkflowJobWebhook) UnmarshalJSON(b []byte) error {
	type plain WorkflowJobWebhook // without this method
	v := plain{WorkflowJob: WorkflowJob{RunAttempt: runAttemptAbsent}}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.WorkflowJob.RunAttempt == runAttemptAbsent {
		v.WorkflowJob.RunAttempt = 1
	}
	v.Action = JobAction(v.Action)
	*p = WorkflowJobWebhook(v)
	return nil
}

// InstallationID is the GitHub App installation id, 0 when the delivery has none.
func (p *WorkflowJobWebhook) InstallationID() int64 {
	if p.Installation == nil {
		return 0
	}
	return p.Installation.ID
}

// Subject is JobSubject(installation, job).
func (p *WorkflowJobWebhook) Subject() string {
	return JobSubject(p.InstallationID(), p.WorkflowJob.ID)
}

// JobConclusions are the conclusions GitHub reports for a completed job.
var JobConclusions = []string{"success", "failure", "cancelled", "skipped", "neutral", "timed_out", "action_required", "stale", "startup_failure"}

// EventTime is when the action happened according to the payload: the job's
// completed_at, started_at or created_at, whichever the action implies,
// else the next of completed_at, started_at, created_at (queued and
// waiting: created_at, then started_at) that the payload has: a queued
// delivery without created_at, as older GitHub Enterprise Server versions
// send, takes its started_at, which GitHub sets to the queueing time. It
// returns the zero time when the payload has none of them.
func (p *WorkflowJobWebhook) EventTime() time.Time {
	j := p.WorkflowJob
	pick := func(ts ...*time.Time) time.Time {
		for _, t := range ts {
			if t != nil && !t.IsZero() {
				return t.UTC()
			}
		}
		return time.Time{}
	}
	switch p.Action {
	case "completed":
		return pick(j.CompletedAt, j.StartedAt, j.CreatedAt)
	case "in_progress":
		return pick(j.StartedAt, j.CreatedAt)
	default:
		return pick(j.CreatedAt, j.StartedAt)
	}
}

func (p *WorkflowJobWebhook) validate(c *checker, t string) {
	if c.oneOf("action", p.Action, "queued", "waiting", "in_progress", "completed") && t != WorkflowJobTypePrefix+p.Action {
		c.fail("action", `must match the event type "`+t+`"`)
	}
	j := p.WorkflowJob
	if j.ID <= 0 {
		c.fail("workflow_job.id", "must be a positive integer")
	}
	if j.RunID <= 0 {
		c.fail("workflow_job.run_id", "must be a positive integer")
	}
	if j.RunAttempt < 1 {
		c.fail("workflow_job.run_attempt", "must be at least 1")
	}
	c.required("workflow_job.name", j.Name)
	// created_at is optional: older GitHub Enterprise Server versions do
	// not send it (see WorkflowJobWebhook).
	if p.Action == "completed" {
		if j.Conclusion == nil || *j.Conclusion == "" {
			c.fail("workflow_job.conclusion", "is required when action is completed")
		} else {
			c.oneOf("workflow_job.conclusion", *j.Conclusion, JobConclusions...)
		}
	}
	if p.Action == "in_progress" && j.StartedAt == nil {
		c.fail("workflow_job.started_at", "is required when action is in_progress")
	}
	if c.required("repository.full_name", p.Repository.FullName) {
		if owner, name, ok := strings.Cut(p.Repository.FullName, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			c.fail("repository.full_name", `must be "owner/name"`)
		}
	}
	if p.Installation != nil && p.Installation.ID < 0 {
		c.fail("installation.id", "must not be negative")
	}
	c.maxBytes("repository.full_name", p.Repository.FullName, MaxRepoFullNameBytes)
	c.maxBytes("workflow_job.name", j.Name, MaxNameBytes)
	c.maxBytes("workflow_job.workflow_name", j.WorkflowName, MaxNameBytes)
}

// RunnerEvent is an internal RunsOn event about the EC2 runner of a job. It
// carries the metrics that webhooks lack (seed 003): instance type and
// lifecycle, pool, scheduling time, interruption, usage.
type RunnerEvent struct {
	InstallationID    int64      `json:"installation_id"`
	JobID             int64      `json:"job_id"`
	RunID             int64      `json:"run_id,omitempty"`
	RunAttempt        int        `json:"run_attempt,omitempty"`
	RepoFullName      string     `json:"repo_full_name,omitempty"`
	InstanceID        string     `json:"instance_id,omitempty"`
	InstanceType      string     `json:"instance_type,omitempty"`
	InstanceLifecycle string     `json:"instance_lifecycle,omitempty"`
	FleetID           string     `json:"fleet_id,omitempty"`
	PoolName          string     `json:"pool_name,omitempty"`
	Region            string     `json:"region,omitempty"`
	ScheduledAt       *time.Time `json:"scheduled_at,omitempty"`
	Reason            string     `json:"reason,omitempty"`
	UsageInSeconds    *float64   `json:"usage_in_seconds,omitempty"`
	UsageInDollars    *float64   `json:"usage_in_dollars,omitempty"`
}

// Subject is JobSubject(installation_id, job_id): runner events fold into the job.
func (p *RunnerEvent) Subject() string { return JobSubject(p.InstallationID, p.JobID) }

func (p *RunnerEvent) validate(c *checker, t string) {
	if p.InstallationID < 0 {
		c.fail("installation_id", "must not be negative")
	}
	if p.JobID <= 0 {
		c.fail("job_id", "must be a positive integer")
	}
	switch t {
	case TypeRunnerScheduled:
		c.required("instance_type", p.InstanceType)
		c.oneOf("instance_lifecycle", p.InstanceLifecycle, "on-demand", "spot")
		if p.ScheduledAt == nil {
			c.fail("scheduled_at", "is required")
		}
	case TypeRunnerRescheduled:
		c.required("reason", p.Reason)
	case TypeRunnerAttached, TypeRunnerInterrupted, TypeRunnerTerminated:
		if c.required("instance_id", p.InstanceID) && !strings.HasPrefix(p.InstanceID, "i-") {
			c.fail("instance_id", `must be an EC2 instance id ("i-...")`)
		}
	}
	if p.InstanceLifecycle != "" && t != TypeRunnerScheduled {
		c.oneOf("instance_lifecycle", p.InstanceLifecycle, "on-demand", "spot")
	}
	if p.UsageInSeconds != nil && *p.UsageInSeconds < 0 {
		c.fail("usage_in_seconds", "must not be negative")
	}
	if p.UsageInDollars != nil && *p.UsageInDollars < 0 {
		c.fail("usage_in_dollars", "must not be negative")
	}
	c.maxBytes("repo_full_name", p.RepoFullName, MaxRepoFullNameBytes)
}

// DeploymentEvent tracks a deployment's approval (seed 003's deployments table).
type DeploymentEvent struct {
	InstallationID   int64   `json:"installation_id"`
	DeploymentID     int64   `json:"deployment_id"`
	RepoFullName     string  `json:"repo_full_name"`
	Environment      string  `json:"environment"`
	RequiresApproval bool    `json:"requires_approval"`
	JobIDs           []int64 `json:"job_ids,omitempty"`
}

// Subject is DeploymentSubject(installation_id, deployment_id).
func (p *DeploymentEvent) Subject() string {
	return DeploymentSubject(p.InstallationID, p.DeploymentID)
}

func (p *DeploymentEvent) validate(c *checker, t string) {
	if p.InstallationID < 0 {
		c.fail("installation_id", "must not be negative")
	}
	if p.DeploymentID <= 0 {
		c.fail("deployment_id", "must be a positive integer")
	}
	c.required("repo_full_name", p.RepoFullName)
	c.required("environment", p.Environment)
	c.maxBytes("repo_full_name", p.RepoFullName, MaxRepoFullNameBytes)
	c.maxBytes("environment", p.Environment, MaxNameBytes)
	for i, id := range p.JobIDs {
		if id <= 0 {
			c.fail("job_ids["+strconv.Itoa(i)+"]", "must be a positive integer")
		}
	}
}

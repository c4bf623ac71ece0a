package archiver

import "github.com/streamfold/streamfold/schema"

// TableGitHubJobs holds schema.DomainGitHub: github.workflow_job.*,
// runson.runner.* and github.deployment.*.
const TableGitHubJobs = "github_jobs"

type (
	jobP    = *schema.WorkflowJobWebhook
	runnerP = *schema.RunnerEvent
	deployP = *schema.DeploymentEvent
)

// githubJobCols are the typed columns, in file order: add a column only at the
// end (see newTableDef).
var githubJobCols = []colDef{
	anyCol("installation_id", TypeBigint, "GitHub App installation id (0: GHES without installation)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return p.InstallationID()
		case runnerP:
			return p.InstallationID
		case deployP:
			return p.InstallationID
		}
		return nil
	}),
	anyCol("job_id", TypeBigint, "workflow job id (scoped by installation)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return p.WorkflowJob.ID
		case runnerP:
			return p.JobID
		}
		return nil
	}),
	anyCol("run_id", TypeBigint, "workflow run id", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return p.WorkflowJob.RunID
		case runnerP:
			return optI64v(p.RunID)
		}
		return nil
	}),
	anyCol("run_attempt", TypeInt, "workflow run attempt (1+)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return int32(p.WorkflowJob.RunAttempt)
		case runnerP:
			if p.RunAttempt == 0 {
				return nil
			}
			return int32(p.RunAttempt)
		}
		return nil
	}),
	anyCol("repo_full_name", TypeString, "owner/name", true, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return optStr(p.Repository.FullName)
		case runnerP:
			return optStr(p.RepoFullName)
		case deployP:
			return optStr(p.RepoFullName)
		}
		return nil
	}),
	payloadCol("workflow_name", TypeString, "workflow name", true, func(p jobP) any { return optStr(p.WorkflowJob.WorkflowName) }),
	payloadCol("job_name", TypeString, "job name", true, func(p jobP) any { return optStr(p.WorkflowJob.Name) }),
	payloadCol("head_branch", TypeString, "branch", true, func(p jobP) any { return optStr(p.WorkflowJob.HeadBranch) }),
	payloadCol("status", TypeString, "job status in the webhook: queued, waiting, in_progress, completed", true, func(p jobP) any { return optStr(p.WorkflowJob.Status) }),
	payloadCol("conclusion", TypeString, "success, failure, cancelled, skipped, ... (completed)", true, func(p jobP) any { return optStrPtr(p.WorkflowJob.Conclusion) }),
	payloadCol("labels", TypeString, "runs-on labels as a JSON array", true, func(p jobP) any {
		if p.WorkflowJob.Labels == nil {
			return nil
		}
		return jsonText(p.WorkflowJob.Labels)
	}),
	payloadCol("runner_name", TypeString, "runner name", false, func(p jobP) any { return optStrPtr(p.WorkflowJob.RunnerName) }),
	payloadCol("created_at", TypeTimestamp, "job created (UTC, microseconds)", false, func(p jobP) any { return optTime(p.WorkflowJob.CreatedAt) }),
	payloadCol("started_at", TypeTimestamp, "job started (UTC, microseconds)", false, func(p jobP) any { return optTime(p.WorkflowJob.StartedAt) }),
	payloadCol("completed_at", TypeTimestamp, "job completed (UTC, microseconds)", false, func(p jobP) any { return optTime(p.WorkflowJob.CompletedAt) }),
	payloadCol("queue_ms", TypeBigint, "started_at - created_at in ms (in_progress, completed)", false, func(p jobP) any {
		j := p.WorkflowJob
		if p.Action == "queued" || p.Action == "waiting" {
			return nil // a queued body's started_at is its created_at
		}
		return diffMillis(j.CreatedAt, j.StartedAt)
	}),
	payloadCol("duration_ms", TypeBigint, "completed_at - started_at in ms (completed)", false, func(p jobP) any {
		return diffMillis(p.WorkflowJob.StartedAt, p.WorkflowJob.CompletedAt)
	}),
	payloadCol("instance_id", TypeString, "EC2 instance id (runner events)", false, func(p runnerP) any { return optStr(p.InstanceID) }),
	payloadCol("instance_type", TypeString, "EC2 instance type (runner events)", true, func(p runnerP) any { return optStr(p.InstanceType) }),
	payloadCol("instance_lifecycle", TypeString, "on-demand or spot (runner events)", true, func(p runnerP) any { return optStr(p.InstanceLifecycle) }),
	payloadCol("pool_name", TypeString, "RunsOn pool (runner events)", true, func(p runnerP) any { return optStr(p.PoolName) }),
	payloadCol("region", TypeString, "AWS region (runner events)", true, func(p runnerP) any { return optStr(p.Region) }),
	payloadCol("scheduled_at", TypeTimestamp, "runner scheduled (UTC, microseconds)", false, func(p runnerP) any { return optTime(p.ScheduledAt) }),
	payloadCol("reason", TypeString, "reschedule or interruption reason", true, func(p runnerP) any { return optStr(p.Reason) }),
	payloadCol("usage_seconds", TypeDouble, "instance usage in seconds (interrupted, terminated)", false, func(p runnerP) any { return optF64(p.UsageInSeconds) }),
	payloadCol("usage_dollars", TypeDouble, "instance cost in USD (interrupted, terminated)", false, func(p runnerP) any { return optF64(p.UsageInDollars) }),
	anyCol("deployment_id", TypeBigint, "deployment id (deployment events, and jobs of a protected environment)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case deployP:
			return p.DeploymentID
		case jobP:
			if p.Deployment != nil {
				return p.Deployment.ID
			}
		}
		return nil
	}),
	payloadCol("environment", TypeString, "deployment environment", true, func(p deployP) any { return optStr(p.Environment) }),
	payloadCol("requires_approval", TypeBoolean, "whether the deployment waits for approval", false, func(p deployP) any { return p.RequiresApproval }),
}

func init() {
	registerTable(newTableDef(schema.DomainGitHub, TableGitHubJobs, "GitHub workflow_job webhooks (github.workflow_job.*), RunsOn runner events (runson.runner.*) and deployment approvals (github.deployment.*), one row per event.", githubJobCols))
}

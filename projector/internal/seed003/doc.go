// Package seed003 is benchmark-only code: seed 003's own design for RunsOn
// job tracking (the "DynamoDB Schema for Workflow Job Tracking" ADR),
// executed as that design prescribes, so that streamfold's cost can be
// measured against it on the same events (BenchmarkCostVsSeed in package
// projector). Nothing in streamfold uses it.
//
// # Tables
//
// Tables holds the four tables exactly as the seed defines them: keys PK
// and SK (string, SK "v" for single items), workflow_jobs with its three
// GSIs (GSI1 on "installation_id#status", GSI2 on
// "installation_id#repo_full_name", GSI3 on
// "installation_id#run_id#run_attempt", each sorted by created_at and
// projecting ALL attributes), workflow_job_events keyed by
// "timestamp#event_type", workflow_runs and deployments; TTL attribute
// "ttl": 90 days, 14 for workflow_job_events.
//
// # Writes
//
// Writer.Apply handles one event as the seed's webhook handler and
// scheduler would, with no event table of its own:
//
//   - a workflow_job webhook: GetItem of the job (eventually consistent,
//     the seed's 0.5 RCU), then PutItem of a new job
//     (attribute_not_exists(PK)) or UpdateItem of the attributes that
//     changed and last_updated_at; a webhook never moves a job's status
//     back;
//   - a RunsOn runner event (the seed's internal events): no read (the
//     scheduler holds the runner in memory; Writer keeps the last state it
//     wrote of each job), then the same Put or Update;
//   - every job event: PutItem of a workflow_job_events row with its
//     event_type, status, action, source and changes ({field: {from, to}},
//     every attribute that changed, all of them for a new job);
//   - the run summary: UpdateItem of workflow_runs (ADD total_jobs on a
//     job's first webhook, completed_jobs and failed_jobs when it
//     completes), only when a counter moves;
//   - a deployment event: PutItem of the deployments item when it is new,
//     else UpdateItem of what changed.
//
// Apply is not safe for concurrent use; events are applied in the order
// given. A duplicate delivery (same id) is applied again: the caller
// removes them, as streamfold's event table does.
package seed003

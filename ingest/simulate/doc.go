// Package simulate generates a deterministic, realistic workload of raw
// events over streamfold's four domains, for load tests, demos and the
// projectors' fold tests.
//
// # Contract
//
// Determinism: the same Config (Seed included) gives byte-identical events,
// on every platform. All randomness comes from one math/rand/v2 PCG stream
// seeded by Config.Seed and is used through integer arithmetic only; nothing
// reads the clock or crypto/rand. Ids (GitHub delivery GUIDs, EventBridge
// event ids, execution, task, message and correlation ids) are UUIDs formed
// from that stream.
//
// Count: exactly Config.Events events are produced, redeliveries included.
// The run stops when the count is reached, so the aggregates then in flight
// are partial; every event is still valid on its own (schema.Validate is
// called on each one before it is handed out, and a failure is returned as
// an error). Aggregates that would go past the end of the window
// [Start, Start+Days) are cut there too: an execution then stays RUNNING, a
// job queued. Every event's time lies in the window.
//
// Arrival order: events come in the order a producer would append them, which
// is roughly time order (each event arrives a little after it happens, after
// its transport's latency), with the aggregates interleaved. Within one
// subject events arrive in time order, except for these perturbations, which
// Stats.OutOfOrder counts:
//
//   - about 5% of GitHub jobs have their queued webhook arrive after
//     in_progress;
//   - about 2% of Step Functions executions have RUNNING arrive after their
//     terminal status;
//   - a second queued delivery (see below) can arrive after the runner events
//     that followed the first.
//
// Redeliveries: about 3% of GitHub deliveries (workflow_job webhooks and
// deployment events) and about 1% of EventBridge events are delivered again,
// seconds to minutes later, with the SAME id: duplicates of (subject, id)
// that the appender must report as such. Stats.Redeliveries counts them.
// GitHub also sends some queued webhooks twice under DIFFERENT delivery ids
// (seed 003): every job of a protected environment is queued again once its
// deployment is approved, and about 2% of other jobs get a second queued
// delivery. Those are distinct events, not redeliveries.
//
// # Domains
//
// GitHub (schema.DomainGitHub): workflow runs of 1-6 jobs in dependency
// levels, for three github.com installations and a GHES server (installation
// 0: its webhooks carry no installation object). Webhook data is GitHub's
// native workflow_job body, source "https://github.com/<owner>", time the
// payload's EventTime; as on GitHub, a queued body's started_at equals its
// created_at. Jobs go queued -> in_progress -> completed (mostly success,
// some failure or cancelled; jobs after a failed one complete as skipped);
// production deployments go queued -> waiting, with github.deployment.pending
// then approved (the job is queued again) or rejected (the job completes as
// failure). About 40% of runs with a failed job are re-run as run_attempt 2,
// with new job ids. RunsOn events (source "runs-on") follow each self-hosted
// job: scheduled, attached, for some spot instances interrupted (with the
// instance's usage), rescheduled and a new on-demand scheduled/attached, and
// terminated with usage_in_seconds and usage_in_dollars.
//
// Step Functions (schema.DomainStates): EventBridge execution status change
// details (source "aws.states") of five agent state machines, tagged with
// schema.AgentTags, and two that are not agents (a Type=Batch machine and a
// Type=Agent machine of another application). RUNNING, then SUCCEEDED (about
// 80%), FAILED, TIMED_OUT or ABORTED.
//
// Albums (schema.DomainAlbums): sf and ldf executions in equal shares (source
// "streamfold.albums/<workflowType>"): started, steps, 1-8 albums extracted,
// for about a third a human validation task (created, then completed or
// expired), validated (with the extracted year in yearOriginal), priced, and
// completed with durationMs and estimatedCost, or failed (about 10%).
//
// Messages (schema.DomainMessages): rez_agent messages (source
// "rez_agent/<stage>"): created, queued (optional for manual notifications),
// processing with retry_count 0, further processing events with increasing
// retry_count for retries, then completed or failed.
//
// # Memory
//
// Stream keeps only the events of the aggregates in flight (started and not
// yet fully emitted), so its memory follows the event rate, not
// Config.Events. Generate keeps every event.
package simulate

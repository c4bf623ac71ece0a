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
// # Order
//
// Config.Order says how the aggregates' events interleave.
//
// OrderTime (the default) is a busy production stream: each day of the
// window holds one slice of a steady stream, centred on 13:00 UTC, in which
// events arrive at Config.Rate events per second (default 100). The days
// share Config.Events by activity (a weekend day gets less than half of a
// weekday), so a slice lasts its share divided by the rate: 5,000 events in
// one day are 50 seconds of traffic. Aggregates start at that pace from up
// to 90 minutes (at most 30 times the slice) before the slice, so that it
// opens on what a steady stream has in flight (jobs queued, running and
// finishing, albums waiting for a person); their deliveries that arrived
// before the slice are left out (a late one that arrives in it is kept, with
// its earlier time). When a day's share has arrived its slice ends, and the
// aggregates then in flight are cut. At the default rate thousands of
// events separate a job's webhooks, a batch of 100 records holds about 82
// distinct subjects and about 2.5% of consecutive events share a subject
// (MeasureShape reports these figures). Lifecycles are partial at both ends
// of each slice; to get mostly complete ones, give each day an hour or more
// of traffic (Events/Days >= 3600*Rate, e.g. Rate 5 for 20,000 events a day)
// or use OrderSubject.
//
// OrderSubject is the thin order of the first generator, kept byte for byte:
// aggregates start over every hour of the window (busier on weekday working
// hours), so at a few thousand events a day few are in flight at once and
// most of an aggregate's events arrive next to each other (in 5,000 events
// in a day, 46% of consecutive events share a subject and a batch of 100
// records holds about 29 subjects). Lifecycles are complete, except at the
// end of the run.
//
// In both orders events come in the order a producer would append them,
// which is roughly time order (each event arrives a little after it happens,
// after its transport's latency). Within one subject events arrive in time
// order, except for these perturbations, which Stats.OutOfOrder counts:
//
//   - about 5% of GitHub jobs have their queued webhook arrive after
//     in_progress (0.5-20 seconds after it);
//   - about 2% of Step Functions executions have RUNNING arrive after their
//     terminal status (up to 3 seconds after it);
//   - a second queued delivery (see below) can arrive after the runner events
//     that followed the first.
//
// Redeliveries: about 3% of GitHub deliveries (workflow_job webhooks and
// deployment events) and about 1% of EventBridge events are delivered again
// with the SAME id: duplicates of (subject, id) that the appender must
// report as such. Stats.Redeliveries counts them. In OrderTime, whose slices
// are short, they follow within a minute (GitHub) or 30 seconds
// (EventBridge); in OrderSubject within 15 and 5 minutes. GitHub also sends
// some queued webhooks twice under DIFFERENT delivery ids (seed 003): every
// job of a protected environment is queued again once its deployment is
// approved, and about 2% of other jobs get a second queued delivery. Those
// are distinct events, not redeliveries.
//
// # Domains
//
// GitHub (schema.DomainGitHub): workflow runs of 1-6 jobs in dependency
// levels, for three github.com installations and a GHES server (installation
// 0: its webhooks carry no installation object). Webhook data is GitHub's
// native workflow_job body, source "https://github.com/<owner>", time the
// payload's EventTime; as on GitHub, a queued body's started_at equals its
// created_at. Config.GitHubPayloads chooses its size: PayloadsTrimmed (the
// default, 1.1-2.6 KB) keeps a few fields of the repository, organization,
// sender and installation objects, PayloadsFull has all of them, with their
// URLs, as GitHub sends them (7-11 KB minified). Both decode to the same
// schema.WorkflowJobWebhook, so they project the same. Jobs go queued -> in_progress -> completed (mostly success,
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
//
// # Cost
//
// OrderTime also builds the aggregates of each slice's warm-up (up to 90
// minutes of the stream, at most 30 times the slice) and those in flight
// when it ends; only the events emitted are marshalled. It generates a third
// to a fifth as many events per second as OrderSubject.
package simulate

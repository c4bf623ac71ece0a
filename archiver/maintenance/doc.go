// Package maintenance is the archive's scheduled upkeep, run by the archiver
// function when EventBridge Scheduler invokes it with a maintenance event
// instead of a stream batch (terraform/maintenance.tf):
//
//	{"maintenance": {"task": "compact"}}
//	{"maintenance": {"task": "verify"}}
//
// The event names a task, never a storage format: "compact" is "make the
// day's data few large files, then do the table format's upkeep", and
// "verify" is "recompute the counters from the archive and compare". With
// the archive's Iceberg tables, compact runs archiver.Archive.Compact (a
// deduplicating rewrite committed as one snapshot) for the day, then
// archiver.Archive.Maintain on every table: snapshot expiry (older than 7
// days, keeping the newest 10; the files only expired snapshots held are
// deleted) and orphan-file cleanup (files of failed commits older than 3
// days). The schedules did not change when the format did.
//
// Contracts:
//   - compact works on the day before yesterday (UTC) unless the event names
//     a date: yesterday's partition may still receive retried or late
//     batches, and objects younger than a day are left alone anyway
//     (archiver.DefaultCompactMinAge). It is idempotent: a second run over
//     a compacted day merges nothing (archiver.Archive.Compact plans from
//     the table's current snapshot, and a partition of one large file has
//     nothing to merge; expiry and orphan cleanup are idempotent too), so
//     Lambda's retries of the asynchronous invocation and a manual rerun
//     are safe.
//   - verify's difference count is published as the metric
//     VerifyDifferences; differences are not a failure of the task (the
//     alarm on the metric reports them), an unreadable archive or table is.
//   - Every task that completes writes MaintenanceSucceeded=1 for its task:
//     the alarm fires when a day passes without one (failure, timeout, or
//     a schedule that never fired), so no failure mode goes unseen.
//
// Metrics are CloudWatch embedded metric format lines written to the
// function's standard output (EMF): no SDK client, no extra permission.
package maintenance

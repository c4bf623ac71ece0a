// Package rebuild rebuilds projections from the archive and verifies the
// live projections against it.
//
// The archive (package archiver) holds every event forever; the event table
// keeps them 14 days and its stream 24 hours. Because the projector's folds
// are joins (idempotent, commutative, associative; see docs/projector.md),
// the projections are a function of the set of events, whatever their order
// or multiplicity, so the archive alone determines them.
//
// # Rebuild
//
// Rebuild reads every event of a Source (in any order), groups the events by
// subject and hands whole subjects, in chunks, to a projector.Projector over
// the target Store. Each aggregate is folded and committed exactly as the
// stream projector would: version-checked transactions, counter deltas,
// derived row attributes. Consequences:
//
//   - Idempotence: a second Rebuild over the same archive finds every state
//     already holding its events and writes nothing (Stats.Changed == 0).
//   - Order: irrelevant; the source may yield events in any order and with
//     duplicates.
//   - Concurrency: safe against a projector (or another Rebuild) writing the
//     same tables; version conflicts are retried (Options.Rounds).
//   - In place, Rebuild only adds: it cannot undo a write that no event
//     explains (a counter changed by hand). Verify finds those; a fresh
//     rebuild (PrepareFresh, then Rebuild into the new tables) repairs them.
//
// Memory: up to Options.BufferEvents events are held at once. A subject
// whose events straddle two buffers is folded in two commits, which is
// correct but costs an extra write.
//
// # Run
//
// Run is the whole operator job behind "streamfold rebuild": from a Config
// (the archive, the DynamoDB client, Mode Fresh or InPlace and the tables)
// it prepares a fresh target with PrepareFresh, or checks that the live
// tables exist, then folds the archive into them with Rebuild.
//
// # Verify
//
// Verify recomputes the derived counter rows (sf/ldf daily metrics rows in
// the workflows table, per-stage message counts in the metrics table, run
// summaries in workflow-runs) by folding the whole archive into an in-memory
// projector.MemStore, then reads the same rows from the live tables (Live)
// and lists every difference: rows missing on either side and every
// attribute that differs. Counters compare exactly (as decimals; an absent
// number equals 0, and a row whose population counter is 0 equals no row);
// derived averages within a tolerance (RowKind.Derived,
// VerifyOptions.Tolerance). On the archive side the derived attributes are
// recomputed from the final counters, so they do not depend on the order
// the fold committed in. A Report with no Difference (Report.OK) means the
// live rows are exactly what the archive implies.
//
// Reading the live side scans the metrics and workflow-runs tables and
// queries GSI1 of the workflows table for its metrics rows: verify is an
// operator's batch job, not a dashboard path.
package rebuild

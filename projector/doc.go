// Package projector folds the event log into the projections dashboards
// read: current-state items (agent executions, sf/ldf executions, albums and
// tasks, GitHub jobs, deployments, messages), daily counter rows (sf/ldf
// metrics, per-stage message counts) and run summaries.
//
// # Exactly-once in effect
//
// Every subject (aggregate) has a folded state, stored compressed with a
// version in the aggregates table, next to the counter contributions that
// were applied for it. Folds are joins (Aggregate.Apply is idempotent,
// commutative and associative), so applying an event twice, or events in
// any order, yields the same state. Projection items are pure functions of
// the state, owned by their aggregate and versioned. Counter rows move by
// contributions(new state) minus what was applied, so a row always equals
// the sum of what was applied for every aggregate, across deploys that
// change the counting rules. A change that moves no counter is one
// conditional write of the state; one that moves counters commits the
// state and the rows (written whole, compare-and-set on their version,
// derived attributes included) in one transaction. Items follow the
// commit, and a redelivery repairs an item whose write failed. See
// docs/projector.md for the full argument.
//
// # Ordering and concurrency
//
// Inputs of one subject are folded in (recordedat, id) order; different subjects
// are independent. The aggregates of a batch that share counter rows commit
// one transaction after the other (one write per row per transaction);
// the others commit concurrently (Config.Concurrency). A Projector and a
// Handler are safe for concurrent use (e.g. one batch per shard, or several
// projectors on the same records): every write is conditioned on the
// version read, and conflicts are retried with jittered backoff.
//
// # Failures
//
// Handler.Handle reports the lowest failed SequenceNumber as its only batch
// item failure; records after it are re-sent and are no-ops where already
// applied. Poison records (undecodable image, unknown type, invalid data)
// are written to the dead-letter table and never block the shard, and so
// are the records of an aggregate that can never be stored (an item over
// DynamoDB's 400 KB, an item owned by another aggregate, a counter row
// its change would take past 400 KB); TTL REMOVE records and other
// non-INSERT records are skipped and counted. What can be decided from a
// record alone (an event dated more than Config.MaxFutureSkew ahead of
// its recordedat, a task whose id is its execution's) quarantines that
// record alone, before any fold: the other records of its aggregate are
// projected without it.
//
// # Late events
//
// An event recorded at or after its aggregate's expiry (the greatest
// expiry of its items and TTL'd counter rows, from the events recorded
// before it) is late: not projected, counted in Outcome.Late, kept by the
// archive. A subject's inputs are applied in (recordedat, id) order, so
// the rule is a function of the events alone and a fold of the archive
// (rebuild, verify) decides the same.
package projector

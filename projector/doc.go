// Package projector folds the event log into the projections dashboards
// read: current-state items (agent executions, sf/ldf executions, albums and
// tasks, GitHub jobs, deployments, messages), daily counter rows (sf/ldf
// metrics, per-stage message counts) and run summaries.
//
// # Exactly-once in effect
//
// Every subject (aggregate) has a folded state, stored as JSON with a
// version in the aggregates table. Folds are joins (Aggregate.Apply is
// idempotent, commutative and associative), so applying an event twice, or
// events in any order, yields the same state. Projection items are pure
// functions of the state, and counter rows receive ADD deltas equal to
// contributions(new state) - contributions(old state), so a counter row
// always equals the sum of every aggregate's current contribution. The
// state, its items and its deltas commit in one transaction conditioned on
// the version that was read; a redelivered event leaves the state unchanged
// and writes nothing. See docs/projector.md for the full argument.
//
// # Ordering and concurrency
//
// Inputs of one subject are folded in the order given; different subjects
// are independent and commit concurrently (Config.Concurrency). Several
// aggregates share a transaction (up to MaxTxActions writes), with deltas to
// the same counter row merged. A Projector and a Handler are safe for
// concurrent use (e.g. one batch per shard).
//
// # Failures
//
// Handler.Handle reports the lowest failed SequenceNumber as its only batch
// item failure; records after it are re-sent and are no-ops where already
// applied. Poison records (undecodable image, unknown type, invalid data)
// are written to the dead-letter table and never block the shard; TTL
// REMOVE records and other non-INSERT records are skipped and counted.
package projector

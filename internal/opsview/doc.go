// Package opsview is the operations view a person reads (the API's
// /api/operations routes and the dashboard's operations page): how far
// each stream consumer is (its heartbeats, opsrec.Progress), the dead
// letters with the command that replays each, the last reconcile's result
// and the gaps the consumers noticed. It only reads: the heartbeats, gaps
// and reconcile results through opsrec.Store, the dead letters through
// deadletter.Table.List (the reading code of `streamfold deadletter
// list`).
//
// # Contract
//
// Every answer is computed on the clock the caller passes (the API's
// Config.Now), never on the machine's: ages, staleness and the default
// windows ("the last 7 days") are relative to it.
//
// Consumers: one ConsumerStatus per expected consumer (Config.Consumers,
// "projector" and "archiver" by default, listed even without a heartbeat)
// and per other consumer that wrote one, in that order. A consumer's
// figures are those of its current shards: the shards whose heartbeat is
// within Config.StaleAfter of its newest one (DynamoDB Streams closes a
// shard every few hours; a closed shard's last heartbeat stays behind and
// must not count). It is stale when its newest heartbeat is older than
// StaleAfter: it is stopped, or (a Lambda consumer only beats when it
// handles a batch) has had no records since. Shards whose heartbeat is
// older than ShardHistory are left out of the list (counted in
// HiddenShards).
//
// Dead letters: read per consumer (one Query of the consumer's partition:
// the dead-letter table is keyed by consumer and stream position, not by
// time, so a time window filters after reading; letters expire after
// schema.DeadLetterRetentionDays, which bounds the read), newest first, at
// most Filter.Limit, with Total the number that matched.
//
// A View is safe for concurrent use; it keeps no state between calls.
package opsview

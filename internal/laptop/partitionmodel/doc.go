// Package partitionmodel models the write units each DynamoDB partition
// key value receives, per table and per global secondary index, under
// simulated traffic: issue 22's "hot index partitions at 10,000 events/s".
//
// A Model takes writes (the item before and after, as DynamoDB sees a put,
// an update or a delete) and charges them by DynamoDB's rules: one write
// unit per started KB of the larger of the two items, twice inside a
// multi-action transaction; on each index one write where the entry stays
// at its key, a delete and a put (on two index partitions) where the index
// key changes, one write where the item enters or leaves the index. The
// tables and indexes come from schema's table specs. Units are summed per
// partition key value and per window of simulated time (1 s: DynamoDB's
// limit of 1,000 write units per second is per partition).
//
// Run drives the model with the real code: simulate's workload at a given
// rate, spread over stream shards by a hash of the event's subject, batched
// as the deployed event source mapping batches (500 records or 1 s), and
// folded by the projector on a MemStore that records every write. A run is
// deterministic: the same Traffic gives the same reports.
//
//	go test ./internal/laptop/partitionmodel -run '^$' -bench Partitions -benchtime 1x -v
package partitionmodel

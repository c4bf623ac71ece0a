// Package deadletter is the one dead-letter mechanism of the stream
// consumers: the poison sentinel (ErrPoison), the dead-letter record
// (Letter), where dead letters go (Sink), and the decode-and-quarantine loop
// (Batch) that every consumer's Lambda handler runs, so that the projector
// and the archiver classify, quarantine and count a batch the same way.
//
// # Sinks
//
// A Sink takes one stream record that will never be handled, with its
// cause. Its Quarantine method has the signature of streamrun's OnPoison,
// so the same sink serves a handler's poison and a runner's retries-exhausted
// records. Where a consumer's dead letters land is part of its contract, and
// the CLI reads them there:
//
//   - The dead-letters table (Table, through TableSink): a Letter keyed by
//     consumer and stream position, read by `streamfold deadletter
//     list|replay`. The projector's poison goes there (reason "poison"), and
//     so do the records of either consumer that exhausted a runner's
//     retries (reason "retries-exhausted"; streamrun.Config.OnPoison =
//     Table.OnPoison). The ingest function's dead letters are Letters in
//     the same table too (consumer "ingest"), but they are EventBridge
//     events, not stream records: that function writes them with Table.Put,
//     never through a Sink or a Batch.
//   - The archive's errors/ prefix (the archiver's sink, in package
//     archiver): the archiver's poison, read by `streamfold archive errors`.
//
// A sink is idempotent: quarantining the same record again keeps one dead
// letter (the table's key is consumer + position; an errors/ object's key
// is its date and position). Sinks are safe for concurrent use.
//
// # The batch loop
//
// Batch.Run decodes each record of a batch in order with the consumer's
// Decoder: a record the decoder skips is counted (TTL deletions, other
// non-INSERT records, INSERTs the consumer does not handle), a record it
// cannot decode is poison and goes to the Sink, and the rest go, in stream
// order, to the consumer's BatchFunc. What the BatchFunc finds poison after
// all (Outcome.Poison) goes to the Sink as well. A poison record never
// fails its batch; only a failed quarantine, a record the BatchFunc reports
// failed or its error does. The Result names what to retry as a Lambda
// partial batch response (ReportBatchItemFailures): the lowest failed
// SequenceNumber, from which the event source mapping re-sends the batch;
// with Batch.WholeBatch (a consumer whose work can only be redone batch by
// batch, such as the archiver), any failure names the batch's first record
// and a failed quarantine stops the batch before its BatchFunc runs.
//
// Run is safe for concurrent use if its Sink and BatchFunc are (one batch
// per shard runs at a time under Lambda and under streamrun).
package deadletter

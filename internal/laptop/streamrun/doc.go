// Package streamrun is a local DynamoDB Streams consumer with the semantics
// of Lambda's event source mapping. It calls a Handler with the signature
// of a Lambda function (events.DynamoDBEvent in, events.DynamoDBEventResponse
// out, ReportBatchItemFailures style), so the same function runs in Lambda
// and under a Runner: in development, in tests and in long-running workers.
//
// The contract:
//
//   - Ordering. Each shard is read strictly sequentially
//     (ParallelizationFactor 1): the handler sees a shard's records in
//     stream order, and a record is only handed over once everything before
//     it in its shard has been dealt with. A child shard is read only after
//     its parent is done (or the parent has left the stream, i.e. was
//     trimmed), so the records of an item are never handed out of order
//     across a shard rollover.
//
//   - Concurrency. Different shards are read concurrently, one goroutine
//     each: the handler must be safe for concurrent use, and records of
//     different shards (different items) interleave.
//
//   - At-least-once. A record may be handed over more than once: a failed
//     batch is retried, a partial batch response re-sends every record after
//     the lowest failing one, and after a crash or restart everything after
//     the last checkpoint is read again. Side effects must be idempotent.
//     Nothing is skipped except through OnPoison (or trimming, below).
//
//   - Checkpoints. A checkpoint (consumer, shard) holds the sequence number
//     of the last record dealt with — handled successfully, or given to
//     OnPoison — and every record before it in the shard is dealt with too.
//     It is saved after each successful batch, after the successful prefix
//     of a partial failure and after each poisoned record. Done means the
//     shard is closed and fully dealt with. A Runner starts each shard
//     AFTER_SEQUENCE_NUMBER of its checkpoint, at TRIM_HORIZON when there is
//     none (or at LATEST: Config.StartingPosition). One Runner per consumer
//     at a time (there is no lease). A checkpoint also keeps the sequence
//     number in a second attribute only a Runner writes, and the record's
//     creation time, so that a checkpoint moved by something else is seen.
//
//   - Failures. A handler error (or a panic) fails the whole batch; with
//     BisectOnError such a batch is split in halves, each retried on its
//     own. BatchItemFailures: the records before the lowest reported
//     sequence number (compared as integers) are checkpointed and the batch
//     is retried from that record. An ItemIdentifier that is empty or is not
//     a sequence number of the batch, even beside valid ones, fails the
//     whole batch (retried from its first record, not bisected), as Lambda
//     treats an empty, null or unknown itemIdentifier as a complete failure
//     of the batch (AWS Lambda developer guide, "Configuring partial batch
//     response with DynamoDB and Lambda", success and failure conditions).
//     A handler error that reports Permanent() true (errors.As; an archive
//     that is gone, say) is not retried: Run stops with a *StoppedError
//     wrapping it, nothing of the batch checkpointed, where Lambda would
//     retry until the records expire.
//     A batch is retried MaxRetryAttempts times after its first attempt,
//     with jittered exponential backoff; a retry that makes progress starts
//     a new count.
//
//   - Poison. When the retries are exhausted, the lowest failing record
//     (the first of what is left of the batch) goes to OnPoison with the
//     last cause, is checkpointed past, and the shard goes on: one bad record
//     does not block its shard for the 24 hours of stream retention. If
//     OnPoison fails, Run stops with its error and the record is not
//     checkpointed: nothing is silently lost.
//
//   - Stream plumbing. Shards are discovered with a paginated DescribeStream
//     every DescribeInterval and whenever a shard finishes. Expired iterators
//     (and iterators about to expire, after 14 minutes) are re-acquired after
//     the last record read; throttling and 5xx errors are retried with
//     backoff; a TrimmedDataAccessException (records older than the 24 hour
//     retention) is logged at error level, counted in Stats.Trimmed, and the
//     shard restarts at TRIM_HORIZON.
//
//   - Gaps. What may have been missed is noticed where it happens, logged
//     (level warn, "gap" in the message, with the consumer, shard and kind)
//     and recorded through Config.Ops (opsrec.Gap in the checkpoints table,
//     which reconcile reads to narrow its window): a shard started at
//     LATEST that held records (GapLatest, from its oldest record to the
//     start); records trimmed before they were read, a checkpoint older
//     than the trim horizon or a shard that vanished (GapTrimmed, from the
//     last record read to the first read after); a checkpoint moved past
//     records never handed over (GapSequenceJump: its sequence number is
//     past the one the Runner saved, or, for a checkpoint no Runner saved,
//     past the last heartbeat's record); every record given to OnPoison
//     (GapDiscarded). DynamoDB Streams sequence numbers are not
//     consecutive, so a jump between two records read in a row cannot be
//     seen; reconcile, which reads the event table, is what is exact.
//
//   - Heartbeats. With Config.Ops, each shard writes an opsrec.Progress
//     (last record, lag, records since the previous one) when its first
//     batch is handed over, then at most once per HeartbeatInterval (also
//     while idle at the tip, lag 0), and once more when its reading stops:
//     one PutItem per interval and shard.
//
// Progress is visible through Runner.Stats and Config.Progress: batches,
// records, retries, poisoned records and the lag of the last record handed
// over, so a consumer that reads nothing is noticed.
//
// Delivery is that batching, retrying, resuming and bisecting, on its own:
// a Runner delivers each batch it reads with one (OnFailure is OnPoison,
// Done saves the checkpoint), and `streamfold deadletter redrive` delivers
// the records of the batches an event source mapping gave up on with
// another (no OnFailure: a batch that exhausts its retries is reported), so
// both read a handler's response the same way.
//
// ReadRange reads one shard's records between two sequence numbers, as a
// Lambda on-failure destination names a batch the event source mapping
// gave up on; `streamfold deadletter redrive` hands them to the consumer
// again. Records past the stream's retention give ErrTrimmed.
package streamrun

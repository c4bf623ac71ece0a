// Package archiver writes every event of the event table's stream to S3 as
// Parquet, partitioned for Athena, and reads it back: the permanent history
// that analysts query and that projections can be rebuilt from.
//
// # Tables
//
// One table per source (Tables, TableFor): agent_executions
// (aws.states.execution_status_change), album_workflow (album.*),
// github_jobs (github.workflow_job.*, runson.runner.*, github.deployment.*)
// and messages (rez.message.*). Every row holds the envelope (event_id,
// event_type, subject, source, event_time, recorded_at), typed columns
// taken from the payload for filtering and aggregation, the raw event data
// JSON byte for byte (data) and the stream position (stream_sequence,
// stream_event_id), so no field is ever lost. Types are those Athena reads
// from Parquet: int32/int64, double, boolean, UTF-8 strings and
// TIMESTAMP(MICROS, UTC). Times with a sub-microsecond part (recorded_at
// usually has one) or a non-UTC zone are also kept as RFC 3339 text in
// event_time_raw and recorded_at_raw, so that Decode returns the event
// exactly as it was written. Typed columns are nullable; a payload that
// does not decode leaves them null. The Parquet schema is built from the
// same column definitions as the Glue schema (Glue, GlueJSON), in the same
// order. Files are zstd-compressed (compaction outputs at a higher level),
// version 1 data pages, row groups of up to 1,000,000 rows or about
// 128 MiB, rows sorted by event_time.
//
// # Layout
//
//	PREFIX/<table>/event_date=YYYY-MM-DD/<seq, 40 digits>.parquet       one per batch, table and date
//	PREFIX/<table>/event_date=YYYY-MM-DD/compact-<hash>-<n>.parquet     compaction outputs
//	PREFIX/_symlink/<table>/event_date=YYYY-MM-DD/manifest              what is visible (see Manifests)
//	PREFIX/_compaction/<table>/event_date=YYYY-MM-DD/{lock,journal-<hash>.json}
//	PREFIX/errors/event_date=YYYY-MM-DD/<seq, 40 digits>.json           poison records
//
// event_date is the event's own UTC date (a Hive partition, not a column
// of the files).
//
// # Batches and idempotence
//
// WriteBatch groups a batch's records by (table, event_date) and writes each
// group as one object named after the group's first (lowest) stream sequence
// number. Why each record ends up archived exactly once although batches are
// retried, bisected and re-sent: the deliveries of a shard start where its
// checkpoint is, and the checkpoint only moves forward, to the end of a
// delivery that succeeded. So the checkpointed deliveries [s1, e1],
// [s2 = e1+1, e2], ... partition the stream, and every other delivery
// (a failed attempt, a redelivery after a lost checkpoint, bigger or
// smaller, the first half of a bisected batch) starts at some si and comes
// before the checkpointed delivery from si and every later one. Take such a
// delivery D = [si, e] and the key k it wrote for group G: k is the first
// record of G in [si, e]. Let k lie in the checkpointed [sj, ej]; j >= i, so
// G has no record in [sj, k) either, k is the first record of G in
// [sj, ej], and that later delivery writes key k again. Hence every key ends
// up holding what a checkpointed delivery wrote, and those hold each record
// once. Objects of different shards never collide (sequence numbers are
// unique in a stream). The one case this does not cover is a batch whose
// retries are exhausted (MaximumRetryAttempts): its first record is
// skipped, and objects its failed attempts listed may hold records that
// later batches archive again. Configure the archiver's event source
// mapping with unlimited retries (its failures are S3 outages, not poison,
// which never fails a batch); compaction removes such duplicates (it keeps
// one row per subject and event id). A consumer that buffers several stream
// batches into one WriteBatch keeps this property if it checkpoints only
// after the write.
//
// The Handler therefore never reports a partial failure for an S3 error:
// any failed write fails the whole batch, reported as its first record's
// SequenceNumber, so the retry starts from the same record.
//
// # Manifests
//
// S3 has no atomic swap of several objects, so visibility is one object per
// partition: the manifest, a Hive symlink file (one s3:// URI per line)
// that Athena reads with SymlinkTextInputFormat, as do Objects, Scan and
// Events. A data object exists for readers exactly when its partition's
// manifest lists it. WriteBatch writes all data objects of a batch first,
// then adds their URIs to the manifests with an optimistic read-modify-
// write: read the manifest and its ETag, add the URI (a URI listed already
// is a no-op), write it back with If-Match: ETag (If-None-Match: * when
// there was none); on 412 PreconditionFailed (or 409
// ConditionalRequestConflict) another writer got there first, so read again
// and redo, with jittered backoff. Concurrent batches of different shards
// thus never lose each other's entries. A data object written by a batch
// that failed before listing it is an orphan (Orphans): invisible, and
// listed when the batch is retried (it rewrites and lists the same key).
// Never list orphans by hand: their records may be listed elsewhere;
// deleting orphans older than the stream retention (24 h) is always safe.
//
// # Compaction
//
// Batches make many small objects, which makes Athena slow. Compact merges
// a partition's small objects into few large ones (CompactOptions), and no
// reader ever sees an event twice or misses one:
//
//  1. take the partition's lock (a conditional create of _compaction/.../lock,
//     with an expiry; an expired lock is taken over with If-Match);
//  2. finish the journals that interrupted runs left (below);
//  3. read the manifest (ETag E) and plan: the listed objects smaller than
//     the target and older than MinAge, packed into groups of at most the
//     target size; outputs are named compact-<hash of the inputs>-<n>, so
//     a re-run of the same plan writes the same keys;
//  4. write a journal naming inputs and outputs;
//  5. write the outputs: the inputs' rows merged in (event_time, sequence)
//     order, one row per (subject, event id);
//  6. swap the manifest with If-Match E: the inputs' URIs are replaced by
//     the outputs', every other URI is kept; on a conflict (a batch added a
//     URI meanwhile) re-read and redo, keeping the new URIs; if an input is
//     no longer listed, abort (ErrCompactionConflict) and delete the outputs;
//  7. delete the inputs (now or, with Grace, in a later run), then the
//     journal; release the lock.
//
// What readers see: before step 6, the old manifest and its inputs; after
// it, the new manifest and its outputs; the swap is one PutObject, atomic.
// A reader that read the old manifest an instant before the swap may find
// an input deleted in step 7: its query fails (NoSuchKey) but never returns
// wrong data; Grace keeps the inputs for such readers. A crash between any
// two steps leaves the manifest either before or after the swap, never in
// between. The next Compact of the partition finds the journal and deletes
// every input or output of it that the manifest does not list (the outputs
// of a run that did not swap, the inputs of one that did): unlisted objects
// are invisible, so deleting them is safe. The lock makes sure the journal
// belongs to a run that is over. MinAge (default 24 h, the stream
// retention) keeps compaction away from objects a retried batch could still
// rewrite: a batch can only be re-delivered while its records are in the
// stream.
//
// # Athena
//
// The Glue tables (terraform/generated/glue_tables.json, generated by
// `go test ./archiver -run TestGlueSchema -update`) point LOCATION at
// PREFIX/_symlink/<table>/ with SymlinkTextInputFormat and the Parquet
// SerDe, and project event_date (storage.location.template
// .../_symlink/<table>/event_date=${event_date}/), so no crawler or MSCK is
// needed. Athena lists a partition's directory, finds the manifest, and
// reads exactly the objects it lists: what it sees changes only when a
// manifest is replaced, and each replacement is atomic.
//
// # Errors and non-events
//
// TTL deletions and other non-INSERT records are counted and skipped. A
// poison record (an image that does not decode, an event that fails
// schema.Validate) is stored as JSON under errors/event_date=<the record's
// ApproximateCreationDateTime date>/<seq>.json with the raw record, the
// reason and the stream position (Errors lists them) and does not fail the
// batch.
//
// # Concurrency
//
// An Archive and a Handler are safe for concurrent use by many goroutines
// and processes: batches of different shards, a compaction and readers may
// run at once. One compaction per partition runs at a time (the lock).
package archiver

// Package archiver writes every event of the event table's stream to S3 as
// Apache Iceberg tables (Parquet data files, day partitions), and reads it
// back: the permanent history that analysts query in Athena and that
// projections can be rebuilt from.
//
// # Tables
//
// One table per source domain (Tables, TableFor): agent_executions
// (aws.states.execution_status_change), album_workflow (album.*),
// github_jobs (github.workflow_job.*, runson.runner.*, github.deployment.*)
// and messages (rez.message.*). Each table is declared in its own file,
// table_<domain>.go, for the schema.Domain whose events it holds; TableFor
// routes an event type to the table of its domain. Every row holds the envelope (event_id,
// event_type, subject, source, event_time, recorded_at), typed columns
// taken from the payload for filtering and aggregation, the raw event data
// JSON byte for byte (data) and the stream position (stream_sequence,
// stream_event_id), so no field is ever lost. Types are those Athena reads
// from Parquet: int32/int64, double, boolean, UTF-8 strings and
// TIMESTAMP(MICROS, UTC). Times with a sub-microsecond part (recorded_at
// usually has one) or a non-UTC zone are also kept as RFC 3339 text in
// event_time_raw and recorded_at_raw, so that Decode returns the event
// exactly as it was written. Typed columns are nullable; a payload that
// does not decode leaves them null. The Parquet schema and the Iceberg
// schema (IcebergSchema; Doc for Terraform and the docs) are built from the
// same column definitions. Files are zstd-compressed (compaction outputs at a higher level),
// version 1 data pages, row groups of up to 1,000,000 rows or about
// 128 MiB, rows sorted by event_time.
//
// # Tables, catalog and layout
//
// Each table is an Apache Iceberg table (format version 2) of the same
// name, partitioned by day(event_time) (hidden partitioning: a query
// filtering event_time reads only the matching days), with the columns in
// id order (Column.ID: the envelope 1-12, then the typed columns; Parquet
// field ids carry them, and columns are only ever added, optional, at the
// end). The tables are registered in an Iceberg catalog (Config.Catalog):
// the AWS Glue Data Catalog in AWS, where Athena reads them natively, and
// an Iceberg SQL catalog in an SQLite file locally and in tests. The
// archive creates a missing table, and adds columns a table lacks, the
// first time a process uses it (the tables are the archiver's, not
// Terraform's: no Terraform resource can declare their partition spec).
//
//	PREFIX/<table>/metadata/...                                            Iceberg metadata, manifest lists, manifests
//	PREFIX/<table>/data/event_date=YYYY-MM-DD/<first>-<last>-<id>.parquet  one per batch, table and day
//	PREFIX/<table>/data/event_date=YYYY-MM-DD/compact-<hash>-<run>-<n>.parquet  compaction outputs
//	PREFIX/<table>/data/event_date=YYYY-MM-DD/heal-<set>-<run>.parquet       healed events (see Healing)
//	PREFIX/errors/event_date=YYYY-MM-DD/<seq>-<id>.json                     poison records
//
// Sequence numbers are padded to 40 digits; <id> is the first 128 bits (32
// hex digits) of the SHA-256 of "eventID\x00" and the stream record's
// eventID: of the group's first record in a batch file's name, of the
// poison record in an error record's.
//
// The event_date directory is only where files go; what a table holds is
// its current snapshot, never a listing. Table metadata, manifests and
// data go through the archive's own S3 client (the "s3" scheme of the
// Iceberg library is this package's, see s3io.go).
//
// # Batches and idempotence
//
// WriteBatch groups a batch's records by (table, event_date), writes each
// group as one file named after the group's first (lowest) record, its
// sequence number and eventID, and its last sequence number, and commits
// each table's files in one snapshot. The group's first record is its key.
// Why each record ends up archived exactly once although batches are
// retried, bisected and re-sent:
// the deliveries of a shard start where its checkpoint is, and the
// checkpoint only moves forward, to the end of a delivery that succeeded.
// So the checkpointed deliveries [s1, e1], [s2 = e1+1, e2], ... partition
// the stream, and every other delivery (a failed attempt, a redelivery
// after a lost checkpoint, bigger or smaller, the first half of a bisected
// batch) starts at some si and comes before the checkpointed delivery from
// si and every later one. Take such a delivery D = [si, e] and the key k it
// committed for group G: k is the first record of G in [si, e]. Let k lie
// in the checkpointed [sj, ej]; j >= i, so G has no record in [sj, k)
// either, k is the first record of G in [sj, ej], and that later delivery
// commits key k again. A commit of key k replaces any file of key k with
// other content in the same snapshot (and skips the group when the same
// file is committed already: a redelivery of the same range). Hence every
// key ends up holding what a checkpointed delivery wrote, and those hold
// each record once.
//
// Keys of different shards never collide: a key is a stream record, named
// by its eventID, which DynamoDB makes unique per stream record; sequence
// numbers are unique only within a shard (two shards' batches can start,
// and end, at the same one). Within the first record's shard, the last
// sequence number then names the file's content. None of this needs a
// shard id, which Lambda's DynamoDB stream records do not carry (a
// per-shard watermark in table properties would need one). A record
// without an eventID (Lambda, streamrun and on-failure payloads always
// carry one) is named by its event's subject and id instead, also unique.
//
// Files written before keys named their first record
// (<first>-<last>.parquet) stay in the tables, readable as any other. A
// group whose first sequence number such a legacy file shares is checked
// against it by reading it once: when it holds the group's first record
// (the same sequence number, event and eventID) it is an earlier delivery
// of the group, skipped as committed when its last sequence number is the
// group's, else replaced by the group's file in the same commit; when it
// does not, it is another shard's batch and is left alone. So a batch
// archived before the change and redelivered after it (within the stream's
// 24 hours) is archived once. Error records likewise: a poison record
// already under its legacy key (<seq>.json) holding the same eventID is not
// stored again.
//
// The one case this does not cover is a batch whose retries are exhausted
// (MaximumRetryAttempts): its first record is skipped, and files its
// failed attempts committed may hold records that later batches archive
// again. Configure the archiver's event source mapping with unlimited
// retries (its failures are S3 or catalog outages, not poison, which never
// fails a batch); compaction removes such duplicates (it keeps one row per
// subject and event id). A consumer that buffers several stream batches
// into one WriteBatch keeps this property if it checkpoints only after the
// write.
//
// The Handler therefore never reports a partial failure for an S3 or
// catalog error: any failed write fails the whole batch, reported as its
// first record's SequenceNumber, so the retry starts from the same record.
//
// # Healing
//
// Heal archives events that no stream consumer delivered (reconcile found
// them in the event table, not in the archive; EventRefs is its view of
// the archive). Healed rows have no stream position: stream_sequence is
// HealSeq ("0", which DynamoDB never gives a record) and stream_event_id
// is HealEventIDPrefix and a hash of the event's subject and id. Per table,
// Heal reads which of the events the current snapshot holds (the subject
// and event_id columns of their days' files) and leaves them alone
// (AlreadyArchived), writes the others as one file per day,
// heal-<set>-<run>.parquet (set: the first 128 bits of the SHA-256 of the
// sorted "subject\x00id" keys, each followed by a newline; run: random,
// per call), and commits them only on the snapshot it read: when another
// commit came in between (a batch, a compaction, another heal), the
// optimistic commit fails and Heal decides again on the new snapshot,
// deleting the files it no longer commits (the run's own: no one else can
// have committed them). Hence a heal never archives an event another
// writer committed first, and a heal run twice, or again after a crash
// (some tables committed, others not), writes only what is still missing;
// a crashed run's uncommitted files are orphans that Maintain deletes.
//
// What Heal cannot rule out is a stream record of a healed event that is
// delivered afterwards (a consumer that was late rather than lossy, or a
// redrive of an on-failure destination): WriteBatch does not read the
// table's rows, so it archives the event again, with the same content.
// Readers see it twice until Compact keeps one row per (subject, event id)
// of the files it merges. Healing only events older than the stream's
// retention (24 hours), after redriving dead letters, closes that window.
//
// # Commits and concurrency
//
// A commit is optimistic: it writes the new metadata and asks the catalog
// to move the table's pointer from the metadata it read (SQL: a
// conditional UPDATE; Glue: UpdateTable with the version id). When another
// writer moved it first, the archive reloads the table, recomputes what is
// committed already, and commits again, with jittered backoff, up to 30
// attempts (ErrCommitContention). Batches of different shards, compactions
// and maintenance may therefore run at once. A file written by a batch
// that failed before its commit is an orphan (Orphans): invisible, and
// committed or replaced when the batch is retried; Maintain deletes
// orphans older than three days.
//
// # Compaction and maintenance
//
// Batches make many small files, which makes Athena slow. Compact merges a
// partition's small files (older than MinAge, default 24 h: a batch can be
// redelivered only while its records are in the stream) into few large
// ones, one row per (subject, event id) (Iceberg's own rewrite does not
// deduplicate), and commits one snapshot replacing the inputs with the
// outputs. Readers plan on one snapshot: they see the inputs or the
// outputs, never both, never neither. If another commit removed an input
// first, Compact deletes its own outputs (named per run) and returns
// ErrCompactionConflict. Replaced files stay for readers and time travel
// until Maintain expires the snapshots that hold them (default: older than
// 7 days, keeping the newest 10); the files only those held are deleted
// once no metadata file at the table's location references them any more.
//
// # A lost catalog
//
// A table's history is its metadata files at its location, not the
// catalog's entry. A writer that finds no table registers the newest
// metadata file there (highest version number) instead of creating an
// empty table, recreating a missing namespace first; readers fail with
// ErrUnregisteredTable; Register is the operator's command. Maintain never
// deletes a file any metadata file at the location references, and refuses
// (HistoryError, ErrShortHistory) a table whose catalog entry is not the
// whole history at its location (register.go, history.go).
//
// # Errors and non-events
//
// TTL deletions and other non-INSERT records are counted and skipped. A
// poison record (an image that does not decode, an event that fails
// schema.Validate) is stored as JSON under errors/event_date=<the record's
// ApproximateCreationDateTime date>/<seq>-<id>.json with the raw record,
// the reason and the stream position (Errors lists them) and does not fail
// the batch.
//
// An archive that is gone (its bucket, or an object its catalog's table
// metadata leads to: the metadata file, a manifest) fails a batch with a
// *GoneError naming the table and the missing location, matching
// ErrArchiveGone. It is permanent (Permanent reports true): a local runner
// stops on it (Handler.Process returns it); the Lambda Handler logs it and
// writes the ArchiveUnavailable metric (Handler.EmitMetrics), which the
// deployment alarms on, and fails the batch as for any write error.
//
// # Concurrency
//
// An Archive and a Handler are safe for concurrent use by many goroutines
// and processes: batches of different shards, compactions, maintenance and
// readers may run at once (see Commits and concurrency).
package archiver

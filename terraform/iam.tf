# Each function's inline policy: only the actions its code calls, on the
# resources it touches, by their own ARNs (reconcile's is in reconcile.tf,
# its writes only with var.reconcile_heal). No "*" action anywhere and no "*"
# resource. The few wildcard resources are listed, with their reasons, in
# terraform/iam_test.go's allow-list and in a comment at each use:
#
#   - "<table>/stream/*" for dynamodb:ListStreams (it lists a table's
#     streams; the stream label is not known before the call);
#   - "<log group>:*" for logs:CreateLogStream/PutLogEvents (Lambda names
#     the log streams at run time);
#   - "<bucket>/<prefix>/*" for the archiver's and reconcile's object
#     actions (object keys are made at run time);
#   - "table/<archive database>/*" for the archiver's glue:GetTables (it
#     lists the database's tables; the request names no table);
#   - "<failures bucket>/aws/lambda/*" for the stream consumers' s3:PutObject
#     (the event source mapping names its on-failure objects);
#   - "arn:...:states:<region>:<account>:stateMachine:*" for the ingest
#     function's states:ListTagsForResource (seed 002: one account-wide rule
#     for every state machine, new agents included; tag reads only).

# What both stream consumers (projector, archiver) are granted, in two
# parts that keep each policy's statement order.
locals {
  # Reading the event table's stream.
  stream_read_statements = [
    { sid = "ReadEventStream", actions = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"], resources = [aws_dynamodb_table.table["events"].stream_arn] },
    # Wildcard: ListStreams names no stream; this is the events table's streams only.
    { sid = "ListEventStreams", actions = ["dynamodb:ListStreams"], resources = ["${aws_dynamodb_table.table["events"].arn}/stream/*"] },
  ]
  stream_record_statements = [
    # internal/opswatch: the gaps the function notices and its heartbeats
    # (internal/opsrec records, "ops#" items of the checkpoints table). One
    # PutItem per gap and per heartbeat interval; no reads.
    { sid = "OpsRecords", actions = ["dynamodb:PutItem"], resources = [aws_dynamodb_table.table["checkpoints"].arn] },
    # The event source mapping writes its failed batches to the on-failure
    # bucket (onfailure.tf) with the function's execution role: PutObject
    # under Lambda's key prefix and ListBucket, nothing else. Wildcard:
    # Lambda names the objects (aws/lambda/<mapping UUID>/...).
    { sid = "OnFailureObjects", actions = ["s3:PutObject"], resources = ["${aws_s3_bucket.failures.arn}/${local.failures_key_prefix}/*"] },
    { sid = "OnFailureBucket", actions = ["s3:ListBucket"], resources = [aws_s3_bucket.failures.arn] },
  ]
}

# --- projector ---------------------------------------------------------------

data "aws_iam_policy_document" "projector" {
  # The event table's stream (local.stream_read_statements).
  dynamic "statement" {
    for_each = local.stream_read_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }

  # Load: BatchGetItem of folded states; Commit: TransactWriteItems whose
  # Puts (version-checked) need PutItem on the table.
  statement {
    sid       = "AggregateState"
    actions   = ["dynamodb:BatchGetItem", "dynamodb:PutItem"]
    resources = [aws_dynamodb_table.table["aggregates"].arn]
  }

  # Commit: TransactWriteItems Puts (items) and Updates (counter deltas);
  # Derive: GetItem (consistent) and a conditional UpdateItem.
  statement {
    sid       = "WriteProjections"
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
    resources = local.projection_table_arns
  }

  statement {
    sid       = "PutDeadLetters"
    actions   = ["dynamodb:PutItem"]
    resources = [aws_dynamodb_table.table["dead-letters"].arn]
  }

  # Operations records and failed batches (local.stream_record_statements).
  dynamic "statement" {
    for_each = local.stream_record_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }

  statement {
    sid     = "OwnLogGroup"
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    # Wildcard: the log streams of this function's own log group.
    resources = ["${aws_cloudwatch_log_group.function["projector"].arn}:*"]
  }
}

# --- archiver ----------------------------------------------------------------

data "aws_iam_policy_document" "archiver" {
  # The event table's stream (local.stream_read_statements).
  dynamic "statement" {
    for_each = local.stream_read_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }

  # The Iceberg tables' objects under the archive prefix: metadata,
  # manifest lists and manifests (<table>/metadata/), Parquet data files
  # (<table>/data/), poison records (errors/). The scheduled maintenance
  # runs in this function (maintenance.tf) and deletes: compaction's
  # replaced files, expired snapshots' files and orphan files (and a
  # compaction output whose commit lost a conflict), so it keeps
  # s3:DeleteObject, under the archive prefix only; in stage and prod the
  # bucket is versioned and the role has no s3:DeleteObjectVersion, so a
  # delete (by maintenance or by a bug) leaves the data recoverable for
  # archive_noncurrent_version_days (docs/decisions.md).
  statement {
    sid     = "ArchiveObjects"
    actions = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    # Wildcard: object keys under the archive prefix are made at run time.
    resources = ["${aws_s3_bucket.archive.arn}/${var.archive_prefix}/*"]
  }

  # ListObjectsV2 of the tables' directories (orphan-file deletion) and of
  # the poison records. No s3:prefix condition: S3 answers a GetObject of a
  # missing key with 404 only to a caller that may list the bucket, and the
  # archiver tells a missing object from a refused one by that 404 (a
  # conditional grant would turn it into 403 AccessDenied).
  statement {
    sid       = "ListArchive"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.archive.arn]
  }

  # The Glue Data Catalog holding the Iceberg tables (ARCHIVE_CATALOG=glue,
  # ARCHIVE_NAMESPACE = the database): Glue authorises each call on the
  # catalog, the database and the table it touches. GetDatabase: the
  # namespace's properties when a table is created.
  statement {
    sid       = "GlueArchiveDatabase"
    actions   = ["glue:GetDatabase"]
    resources = [local.glue_catalog_arn, aws_glue_catalog_database.archive.arn]
  }

  # The archive's tables, by name (generated/iceberg_tables.json): the
  # archiver loads them (GetTable), creates a missing one at its first batch
  # (CreateTable) and commits snapshots and schema changes (UpdateTable,
  # checked against the table's version id). No DeleteTable: the tables
  # outlive any container.
  statement {
    sid       = "GlueArchiveTables"
    actions   = ["glue:GetTable", "glue:CreateTable", "glue:UpdateTable"]
    resources = concat([local.glue_catalog_arn, aws_glue_catalog_database.archive.arn], local.glue_table_arns)
  }

  statement {
    sid     = "GlueListArchiveTables"
    actions = ["glue:GetTables"]
    # Wildcard: GetTables lists the database's tables; the request names no
    # table. This database's tables only.
    resources = [local.glue_catalog_arn, aws_glue_catalog_database.archive.arn, "${local.glue_arn_prefix}:table/${aws_glue_catalog_database.archive.name}/*"]
  }

  # Operations records and failed batches (local.stream_record_statements).
  dynamic "statement" {
    for_each = local.stream_record_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }

  # Scheduled verify (maintenance.tf; archiver/rebuild.DynamoLive): a Query
  # of the workflows table's GSI1 (metrics rows) and consistent Scans of
  # the metrics, workflow-runs and workflow-jobs tables (run summaries are
  # summed from the job items). Reads only.
  statement {
    sid       = "VerifyReadsWorkflowMetrics"
    actions   = ["dynamodb:Query"]
    resources = ["${aws_dynamodb_table.table["workflows"].arn}/index/GSI1"]
  }

  statement {
    sid       = "VerifyScansCounters"
    actions   = ["dynamodb:Scan"]
    resources = [aws_dynamodb_table.table["metrics"].arn, aws_dynamodb_table.table["workflow-runs"].arn, aws_dynamodb_table.table["workflow-jobs"].arn]
  }

  statement {
    sid     = "OwnLogGroup"
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    # Wildcard: the log streams of this function's own log group.
    resources = ["${aws_cloudwatch_log_group.function["archiver"].arn}:*"]
  }
}

# --- ingest ------------------------------------------------------------------

data "aws_iam_policy_document" "ingest" {
  # ingest.Appender: one conditional PutItem per event.
  statement {
    sid       = "AppendEvents"
    actions   = ["dynamodb:PutItem"]
    resources = [aws_dynamodb_table.table["events"].arn]
  }

  statement {
    sid     = "StateMachineTags"
    actions = ["states:ListTagsForResource"]
    # Wildcard: seed 002's rule is account-wide and agents are recognised by
    # their tags, so any state machine of this account and region may need
    # a tag read; no other Step Functions action is granted.
    resources = ["arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:stateMachine:*"]
  }

  # The EventBridge events that can never be appended, under the consumer
  # "ingest" only (the table's partition key).
  statement {
    sid       = "IngestDeadLetters"
    actions   = ["dynamodb:PutItem"]
    resources = [aws_dynamodb_table.table["dead-letters"].arn]

    condition {
      test     = "ForAllValues:StringEquals"
      variable = "dynamodb:LeadingKeys"
      values   = ["ingest"]
    }
  }

  statement {
    sid       = "IngestSecrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.github_webhook.arn, aws_secretsmanager_secret.ingest_token.arn]
  }

  # The asynchronous invocation's on-failure destination (EventBridge
  # events that still fail after Lambda's retries).
  statement {
    sid       = "OnFailureQueue"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.failures["ingest"].arn]
  }

  statement {
    sid     = "OwnLogGroup"
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    # Wildcard: the log streams of this function's own log group.
    resources = ["${aws_cloudwatch_log_group.function["ingest"].arn}:*"]
  }
}

# --- api ---------------------------------------------------------------------

data "aws_iam_policy_document" "api" {
  statement {
    sid       = "ReadProjections"
    actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"]
    resources = local.projection_table_arns
  }

  # Every index of every projection table, by name.
  statement {
    sid       = "QueryProjectionIndexes"
    actions   = ["dynamodb:Query"]
    resources = local.projection_index_arns
  }

  # GET /api/vocabulary/data (query.Client.Observed): one Scan of the job
  # items (their runs' shares, bounded to 250 items) and one of what older
  # projectors left in workflow-runs (bounded to 1,000), for the
  # installations and repositories the dashboard offers (docs/api.md).
  statement {
    sid       = "SampleRuns"
    actions   = ["dynamodb:Scan"]
    resources = [aws_dynamodb_table.table["workflow-runs"].arn, aws_dynamodb_table.table["workflow-jobs"].arn]
  }

  # One aggregate's events (Query by subject: the job timeline and its
  # duplicate deliveries); the API reads no single event.
  statement {
    sid       = "ReadEvents"
    actions   = ["dynamodb:Query"]
    resources = [aws_dynamodb_table.table["events"].arn]
  }

  # The operations view: the consumers' heartbeats, gaps and reconcile
  # results (records in the checkpoints table, internal/opsrec) and the dead
  # letters (one consumer's partition per Query), read only.
  statement {
    sid       = "ReadOperations"
    actions   = ["dynamodb:Query"]
    resources = [aws_dynamodb_table.table["checkpoints"].arn, aws_dynamodb_table.table["dead-letters"].arn]
  }

  statement {
    sid       = "ApiSecrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.api_token.arn, aws_secretsmanager_secret.cursor_key.arn]
  }

  statement {
    sid     = "OwnLogGroup"
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    # Wildcard: the log streams of this function's own log group.
    resources = ["${aws_cloudwatch_log_group.function["api"].arn}:*"]
  }
}

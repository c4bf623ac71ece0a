# Reconcile (docs/operations.md, docs/deployment.md): the reconcile
# function (cmd/reconcile, in local.functions of lambda.tf) checks that
# every event the event table holds for a window was applied by the
# projector and written to the archive. EventBridge Scheduler invokes it on
# var.reconcile_schedule (daily by default) with
#
#   {"since": var.reconcile_window, "heal": var.reconcile_heal}
#
# and a person can invoke it on demand (`aws lambda invoke`, payload
# {"since": "72h"} or {"from": ..., "to": ...}). Gaps are not a function
# error: the function publishes ReconcileGaps (the alarm below), logs a
# "reconcile gap" line per domain and day, and stores the result in the
# checkpoints table for the operations page. A failed run is a function
# error (the Errors alarm of alarms.tf).
#
# Its role reads the event table, the projector's folded states and the
# archive, and writes only its own result (the checkpoints
# table). Only with var.reconcile_heal = true does it get the projector's
# writes (aggregates and projection tables) and the archiver's (objects
# under the archive prefix, the Glue tables' commits), the paths heal feeds
# the missing events through.

resource "aws_scheduler_schedule" "reconcile" {
  name                         = "${local.name}-reconcile"
  description                  = "${local.name}: checks the event table against the projections and the archive over the last ${var.reconcile_window}${var.reconcile_heal ? ", and heals" : ""} (cmd/reconcile)"
  schedule_expression          = var.reconcile_schedule
  schedule_expression_timezone = "UTC"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.function["reconcile"].arn
    role_arn = aws_iam_role.reconcile_scheduler.arn
    input    = jsonencode({ since = var.reconcile_window, heal = var.reconcile_heal })

    # Delivery retries (the invocation itself is asynchronous: Lambda's own
    # retries then apply; a run is idempotent, heal included).
    retry_policy {
      maximum_event_age_in_seconds = 3600
      maximum_retry_attempts       = 3
    }
  }
}

# Its own scheduler role (not maintenance.tf's): it may invoke the
# reconcile function and nothing else. Assumable by EventBridge Scheduler of
# this account only (data.aws_iam_policy_document.scheduler_assume).
resource "aws_iam_role" "reconcile_scheduler" {
  name               = "${local.name}-reconcile-scheduler"
  description        = "EventBridge Scheduler: invokes ${local.name}-reconcile, nothing else."
  assume_role_policy = data.aws_iam_policy_document.scheduler_assume.json
}

data "aws_iam_policy_document" "reconcile_scheduler" {
  statement {
    sid       = "InvokeReconcile"
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.function["reconcile"].arn]
  }
}

resource "aws_iam_role_policy" "reconcile_scheduler" {
  name   = "${local.name}-reconcile-scheduler"
  role   = aws_iam_role.reconcile_scheduler.id
  policy = data.aws_iam_policy_document.reconcile_scheduler.json
}

# What reconcile may also do when it heals (var.reconcile_heal): the paths
# heal feeds the missing events through, as iam.tf grants them to the
# projector and the archiver.
locals {
  reconcile_heal_statements = [
    # The events to heal, read again by key (BatchGetItem) before they are
    # fed to the consumers' paths.
    { sid = "HealReadEvents", actions = ["dynamodb:BatchGetItem"], resources = [aws_dynamodb_table.table["events"].arn] },
    # The projector's commit (TransactWriteItems of version-checked state
    # Puts and projection Puts and Updates; derive's GetItem).
    { sid = "HealAggregates", actions = ["dynamodb:PutItem"], resources = [aws_dynamodb_table.table["aggregates"].arn] },
    { sid = "HealProjections", actions = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"], resources = local.projection_table_arns },
    # The archiver's batch: data and metadata files written, the metadata a
    # commit replaces deleted (write.metadata.delete-after-commit). No
    # s3:DeleteObjectVersion. Wildcard: object keys under the archive
    # prefix are made at run time.
    { sid = "HealArchiveObjects", actions = ["s3:PutObject", "s3:DeleteObject"], resources = ["${aws_s3_bucket.archive.arn}/${var.archive_prefix}/*"] },
    # A table missing from the catalog is created (the database's
    # properties read first); a batch is a commit (UpdateTable,
    # version-checked).
    { sid = "HealGlueDatabase", actions = ["glue:GetDatabase"], resources = [local.glue_catalog_arn, aws_glue_catalog_database.archive.arn] },
    { sid = "HealGlueTables", actions = ["glue:CreateTable", "glue:UpdateTable"], resources = concat([local.glue_catalog_arn, aws_glue_catalog_database.archive.arn], local.glue_table_arns) },
  ]
}

# The reconcile function's inline policy (lambda.tf attaches it to its own
# role, like every function's; iam.tf's rules apply: no "*", wildcards only
# from terraform/iam_test.go's allow-list).
data "aws_iam_policy_document" "reconcile" {
  # The window's events: a parallel Scan of the event table (eventually
  # consistent, metered).
  statement {
    sid       = "ScanEvents"
    actions   = ["dynamodb:Scan"]
    resources = [aws_dynamodb_table.table["events"].arn]
  }

  # What the projector applied (projector.Check): the folded states of the
  # window's subjects. Events the projector refuses by rule (dead letters)
  # are judged from the events themselves: no dead-letter read.
  statement {
    sid       = "ReadAggregates"
    actions   = ["dynamodb:BatchGetItem"]
    resources = [aws_dynamodb_table.table["aggregates"].arn]
  }

  # The operations records (internal/opsrec): the gaps the consumers
  # noticed (Query) and this run's result (PutItem).
  statement {
    sid       = "OperationsRecords"
    actions   = ["dynamodb:PutItem", "dynamodb:Query"]
    resources = [aws_dynamodb_table.table["checkpoints"].arn]
  }

  # What the archive holds: the Iceberg tables' metadata and data files.
  # ListBucket: S3 answers a missing key with 404 (not 403) only to a
  # caller that may list the bucket (see the archiver's ListArchive).
  statement {
    sid     = "ReadArchiveObjects"
    actions = ["s3:GetObject"]
    # Wildcard: object keys under the archive prefix are made at run time.
    resources = ["${aws_s3_bucket.archive.arn}/${var.archive_prefix}/*"]
  }

  statement {
    sid       = "ListArchive"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.archive.arn]
  }

  # The archive's tables in the Glue Data Catalog, by name: load only.
  statement {
    sid       = "GlueReadArchiveTables"
    actions   = ["glue:GetTable"]
    resources = concat([local.glue_catalog_arn, aws_glue_catalog_database.archive.arn], local.glue_table_arns)
  }

  # --- heal only (var.reconcile_heal): local.reconcile_heal_statements ------
  dynamic "statement" {
    for_each = [for st in local.reconcile_heal_statements : st if var.reconcile_heal]
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
    resources = ["${aws_cloudwatch_log_group.function["reconcile"].arn}:*"]
  }
}

# The last run found events the projector or the archiver missed (or whose
# archived content conflicts), healed or not: something made a consumer
# skip records (docs/operations.md). A one-day period keeps the alarm up
# until the next daily run.
resource "aws_cloudwatch_metric_alarm" "reconcile_gaps" {
  alarm_name        = "${local.name}-reconcile-gaps"
  alarm_description = "The scheduled reconcile found events missing from the projections or the archive${var.reconcile_heal ? " (and healed them)" : ""}: read the \"reconcile gap\" lines in ${aws_cloudwatch_log_group.function["reconcile"].name}, find why a consumer skipped them, then heal (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "Streamfold"
  metric_name       = "ReconcileGaps"
  dimensions = {
    Deployment = local.name
  }
  statistic           = "Maximum"
  period              = 86400
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

# The archive's scheduled maintenance (docs/archiver.md, "Scheduled
# maintenance"; docs/decisions.md). EventBridge Scheduler invokes the
# archiver function daily with a maintenance event naming a task:
#
#   {"maintenance": {"task": "compact"}}  merge the small data files of the day
#                                         before yesterday (UTC), deduplicating
#                                         by event id; then expire the Iceberg
#                                         snapshots older than 7 days (keeping
#                                         the last 10) and delete orphan files
#                                         older than 3 days; idempotent
#   {"maintenance": {"task": "verify"}}   recompute the counters from the
#                                         archive, publish VerifyDifferences
#
# The schedules name tasks, not a table format: the archive's move to
# Iceberg changed the function's implementation of the tasks and not these
# schedules (package archiver/maintenance). No Glue table optimizers: their
# compaction cannot deduplicate by event id, which ours must.
#
# The invocation is asynchronous: Lambda retries a failed task twice, and a
# task that still fails (or times out, or never runs) shows as a day without
# its MaintenanceSucceeded metric, which is what the alarm below watches.

locals {
  maintenance_tasks = {
    compact = {
      description = "compacts the archive's partitions of the day before yesterday (UTC), then expires old Iceberg snapshots and deletes orphan files"
      schedule    = var.maintenance_compact_schedule
    }
    verify = {
      description = "recomputes the projections' counters from the archive and publishes the difference count (VerifyDifferences)"
      schedule    = var.maintenance_verify_schedule
    }
  }
}

resource "aws_scheduler_schedule" "maintenance" {
  for_each = local.maintenance_tasks

  name                         = "${local.name}-${each.key}"
  description                  = "${local.name}: ${each.value.description}"
  schedule_expression          = each.value.schedule
  schedule_expression_timezone = "UTC"
  # Paused (var.maintenance_paused): e.g. compact while an operator works
  # on the archive by hand.
  state = contains(var.maintenance_paused, each.key) ? "DISABLED" : "ENABLED"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.function["archiver"].arn
    role_arn = aws_iam_role.scheduler.arn
    input    = jsonencode({ maintenance = { task = each.key } })

    # Delivery retries (the invocation itself is asynchronous: Lambda's own
    # retries then apply).
    retry_policy {
      maximum_event_age_in_seconds = 3600
      maximum_retry_attempts       = 3
    }
  }
}

# The scheduler's role may invoke the archiver function and nothing else,
# and only EventBridge Scheduler of this account may assume it.
data "aws_iam_policy_document" "scheduler_assume" {
  statement {
    sid     = "SchedulerAssumesTheRole"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["scheduler.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_iam_role" "scheduler" {
  name               = "${local.name}-maintenance-scheduler"
  description        = "EventBridge Scheduler: invokes ${local.name}-archiver with maintenance events, nothing else."
  assume_role_policy = data.aws_iam_policy_document.scheduler_assume.json
}

data "aws_iam_policy_document" "scheduler" {
  statement {
    sid       = "InvokeArchiverMaintenance"
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.function["archiver"].arn]
  }
}

resource "aws_iam_role_policy" "scheduler" {
  name   = "${local.name}-maintenance-scheduler"
  role   = aws_iam_role.scheduler.id
  policy = data.aws_iam_policy_document.scheduler.json
}

# A task that has not succeeded for 26 hours (a daily schedule plus two
# hours of slack): failed after Lambda's retries, timed out, or never ran.
# Missing data is breaching: silence is exactly what this alarm is for.
resource "aws_cloudwatch_metric_alarm" "maintenance_missed" {
  for_each = local.maintenance_tasks

  alarm_name        = "${local.name}-maintenance-${each.key}-missed"
  alarm_description = "The archive's scheduled ${each.key} has not succeeded for 26 hours: read ${aws_cloudwatch_log_group.function["archiver"].name} and rerun it (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "Streamfold"
  metric_name       = "MaintenanceSucceeded"
  dimensions = {
    Deployment = local.name
    Task       = each.key
  }
  statistic           = "Sum"
  period              = 3600
  evaluation_periods  = 26
  datapoints_to_alarm = 26
  comparison_operator = "LessThanThreshold"
  threshold           = 1
  treat_missing_data  = "breaching"
  # A paused task misses every day by design: no notification.
  actions_enabled = !contains(var.maintenance_paused, each.key)
  alarm_actions   = local.alarm_actions
  ok_actions      = local.alarm_actions
}

# The last verify found differences between the projections and the
# archive. A one-day period keeps the alarm up until the next verify.
resource "aws_cloudwatch_metric_alarm" "verify_differences" {
  alarm_name        = "${local.name}-verify-differences"
  alarm_description = "The scheduled verify found the projections differing from the archive: run streamfold verify and rebuild (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "Streamfold"
  metric_name       = "VerifyDifferences"
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

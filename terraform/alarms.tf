# Alarms for what users of stream consumers say goes wrong silently:
#   - a consumer falling behind the stream (IteratorAge per stream mapping);
#   - records given up on (any message in an on-failure queue);
#   - function errors (each function);
#   - an archive that is gone (the archiver's ArchiveUnavailable metric).
# They notify var.alarm_sns_topic_arn when it is set.

locals {
  alarm_actions = var.alarm_sns_topic_arn == "" ? [] : [var.alarm_sns_topic_arn]
}

resource "aws_cloudwatch_metric_alarm" "iterator_age" {
  for_each = local.stream_consumers

  alarm_name        = "${local.name}-${each.key}-iterator-age"
  alarm_description = "${local.name}-${each.key} is more than ${var.iterator_age_alarm_ms} ms behind the event stream (stream records expire after 24 h)."
  namespace         = "AWS/Lambda"
  metric_name       = "IteratorAge"
  dimensions = {
    FunctionName = aws_lambda_function.function[each.key].function_name
  }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.iterator_age_alarm_ms
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

resource "aws_cloudwatch_metric_alarm" "failures_queue" {
  for_each = local.failure_queues

  alarm_name        = "${local.name}-${each.key}-failures-not-empty"
  alarm_description = "${aws_sqs_queue.failures[each.key].name} holds ${each.value}: look at them (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "AWS/SQS"
  metric_name       = "ApproximateNumberOfMessagesVisible"
  dimensions = {
    QueueName = aws_sqs_queue.failures[each.key].name
  }
  statistic           = "Maximum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

resource "aws_cloudwatch_metric_alarm" "function_errors" {
  for_each = local.functions

  alarm_name        = "${local.name}-${each.key}-errors"
  alarm_description = "${local.name}-${each.key} reported more than ${var.function_errors_alarm_threshold} errors in 5 minutes."
  namespace         = "AWS/Lambda"
  metric_name       = "Errors"
  dimensions = {
    FunctionName = aws_lambda_function.function[each.key].function_name
  }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.function_errors_alarm_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

# The archive is gone: the archiver found its bucket, or the Iceberg
# metadata its Glue table points at, missing (archiver.GoneError), and
# fails every batch until a person restores it. The archiver reports it in
# its batch response, not as a function error, so function_errors does not
# see it; it writes one CloudWatch embedded-metric-format line per failed
# batch (archiver.UnavailableMetric, dimension Deployment) with the table
# and location as fields. The stream keeps the records for 24 hours.
resource "aws_cloudwatch_metric_alarm" "archive_unavailable" {
  alarm_name        = "${local.name}-archive-unavailable"
  alarm_description = "${local.name}-archiver finds the archive's bucket or table metadata gone and fails every batch (records expire from the stream after 24 h): read ${aws_cloudwatch_log_group.function["archiver"].name} (\"archive gone\", table and location) and restore it (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "Streamfold"
  metric_name       = "ArchiveUnavailable"
  dimensions = {
    Deployment = local.name
  }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

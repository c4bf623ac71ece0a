# Every dead letter pages. The projector and ingest functions write one
# CloudWatch embedded-metric-format line per dead letter they store
# (projector.DeadLetters.EmitMetrics): namespace "Streamfold", metric
# "DeadLettered", dimensions Table (the dead-letter table) and Consumer.
# A quarantined record blocks nothing, so without this alarm it would wait
# unseen until its TTL (schema.DeadLetterRetentionDays, 90 days).

locals {
  # The consumers that write dead letters from Lambda: the stream projector
  # and the ingest function (Step Functions events that can never succeed).
  dead_letter_consumers = toset(["projector", "ingest"])
}

resource "aws_cloudwatch_metric_alarm" "dead_letters" {
  for_each = local.dead_letter_consumers

  alarm_name        = "${local.name}-${each.key}-dead-letters"
  alarm_description = "${local.name}-${each.key} quarantined a record in ${aws_dynamodb_table.table["dead-letters"].name}: run `streamfold deadletter list --consumer ${each.key}` (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "Streamfold"
  metric_name       = "DeadLettered"
  dimensions = {
    Table    = aws_dynamodb_table.table["dead-letters"].name
    Consumer = each.key
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

# Throttles: a function that hits its reserved concurrency
# (var.lambda_reserved_concurrency) is throttled. For the function URLs it
# means a flood (or an undersized reservation); for the stream consumers,
# records waiting while the stream's 24 hours run.

resource "aws_cloudwatch_metric_alarm" "throttles" {
  for_each = local.functions

  alarm_name        = "${local.name}-${each.key}-throttles"
  alarm_description = "${local.name}-${each.key} was throttled: its reserved concurrency (lambda_reserved_concurrency) was used up. For ingest and api, look for a flood of requests; for the stream consumers, raise it (docs/deployment.md)."
  namespace         = "AWS/Lambda"
  metric_name       = "Throttles"
  dimensions = {
    FunctionName = aws_lambda_function.function[each.key].function_name
  }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

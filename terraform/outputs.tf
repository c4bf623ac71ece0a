output "table_names" {
  description = "Physical DynamoDB table names by logical name (schema.Tables())."
  value = {
    "events"        = aws_dynamodb_table.events.name
    "executions"    = aws_dynamodb_table.executions.name
    "workflows"     = aws_dynamodb_table.workflows.name
    "workflow-jobs" = aws_dynamodb_table.workflow_jobs.name
    "workflow-runs" = aws_dynamodb_table.workflow_runs.name
    "deployments"   = aws_dynamodb_table.deployments.name
    "messages"      = aws_dynamodb_table.messages.name
    "metrics"       = aws_dynamodb_table.metrics.name
    "dead-letters"  = aws_dynamodb_table.dead_letters.name
    "aggregates"    = aws_dynamodb_table.aggregates.name
    "checkpoints"   = aws_dynamodb_table.checkpoints.name
  }
}

output "events_stream_arn" {
  description = "ARN of the events table's DynamoDB stream (NEW_IMAGE), read by the projector and archiver."
  value       = aws_dynamodb_table.events.stream_arn
}

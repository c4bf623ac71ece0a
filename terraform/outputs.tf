output "table_names" {
  description = "Physical DynamoDB table names by logical name (schema.Tables())."
  value       = { for k, t in aws_dynamodb_table.table : k => t.name }
}

output "events_stream_arn" {
  description = "ARN of the events table's DynamoDB stream (NEW_IMAGE), read by the projector and archiver."
  value       = aws_dynamodb_table.table["events"].stream_arn
}

output "function_names" {
  description = "Lambda function names by function (projector, archiver, ingest, api, reconcile)."
  value       = { for k, f in aws_lambda_function.function : k => f.function_name }
}

output "github_webhook_url" {
  description = "Payload URL to give GitHub for workflow_job webhooks: the ingest URL's /webhooks/github (content type application/json, secret = the value of github_webhook_secret_arn)."
  value       = "${aws_lambda_function_url.webhook.function_url}webhooks/github"
}

output "ingest_url" {
  description = "Base URL of the ingest function's routes: POST webhooks/github, POST events (CloudEvents) and POST eventbridge (bearer token = the value of ingest_token_secret_arn)."
  value       = aws_lambda_function_url.webhook.function_url
}

output "ingest_token_secret_arn" {
  description = "Secrets Manager secret holding the bearer token of the ingest function's POST /events and POST /eventbridge; set its value out of band."
  value       = aws_secretsmanager_secret.ingest_token.arn
}

output "github_webhook_secret_arn" {
  description = "Secrets Manager secret holding the GitHub webhook secret; set its value out of band (docs/deployment.md)."
  value       = aws_secretsmanager_secret.github_webhook.arn
}

output "api_url" {
  description = "URL of the read API and dashboard (bearer token = the value of api_token_secret_arn)."
  value       = aws_lambda_function_url.api.function_url
}

output "api_token_secret_arn" {
  description = "Secrets Manager secret holding the API bearer token; set its value out of band."
  value       = aws_secretsmanager_secret.api_token.arn
}

output "api_cursor_key_secret_arn" {
  description = "Secrets Manager secret holding the key the API signs pagination cursors with; set its value out of band."
  value       = aws_secretsmanager_secret.cursor_key.arn
}

output "step_functions_rule_arn" {
  description = "ARN of the EventBridge rule sending Step Functions execution status changes to the ingest function."
  value       = aws_cloudwatch_event_rule.step_functions.arn
}

output "failure_queue_urls" {
  description = "On-failure SQS queue URLs by consumer (ingest: EventBridge events given up on; the stream consumers' failed batches are in failed_batches)."
  value       = { for k, q in aws_sqs_queue.failures : k => q.url }
}

output "failed_batches" {
  description = "Where each stream consumer's event source mapping writes the batches it gave up on, s3://<failures bucket>/aws/lambda/<mapping UUID>/, by consumer: the argument of `streamfold deadletter redrive --consumer <consumer>`."
  value       = { for k, m in aws_lambda_event_source_mapping.stream : k => "s3://${aws_s3_bucket.failures.bucket}/${local.failures_key_prefix}/${m.uuid}/" }
}

output "archive_uri" {
  description = "Root of the archive's Iceberg tables, s3://<bucket>/<prefix> (the archiver's ARCHIVE_BUCKET and ARCHIVE_PREFIX)."
  value       = local.archive_root
}

output "archive_bucket" {
  description = "Name of the archive bucket."
  value       = aws_s3_bucket.archive.bucket
}

output "glue_database" {
  description = "Glue database holding the archive's Iceberg tables (the archiver's ARCHIVE_NAMESPACE); Athena queries run in it."
  value       = aws_glue_catalog_database.archive.name
}

output "archive_tables" {
  description = "The archive's Iceberg tables by name (generated/iceberg_tables.json): the Athena name <database>.<table> and the table location. The archiver creates each at its first batch for it; until then Athena does not know it."
  value = {
    for name, t in local.iceberg.tables : name => {
      athena   = "${aws_glue_catalog_database.archive.name}.${name}"
      location = "${local.archive_root}/${t.location}"
    }
  }
}

output "athena_workgroup" {
  description = "Athena workgroup for archive queries (results in the archive bucket, per-query scan limit)."
  value       = aws_athena_workgroup.archive.name
}

output "alarm_names" {
  description = "CloudWatch alarm names: IteratorAge per stream consumer, failure-queue depth per queue, errors per function."
  value = concat(
    [for a in aws_cloudwatch_metric_alarm.iterator_age : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.failures_queue : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.function_errors : a.alarm_name],
  )
}

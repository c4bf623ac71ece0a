# The event table's stream feeds two consumers, each through its own Lambda
# event source mapping with the same failure settings (checked by
# terraform/esm_test.go):
#
#   - ReportBatchItemFailures: the function reports the SequenceNumber of the
#     first record it could not process; Lambda resumes there and re-sends
#     everything after it (the consumers are idempotent);
#   - BisectBatchOnFunctionError: a failing batch is split to isolate a
#     poison record;
#   - MaximumRetryAttempts (per consumer: bounded for the projector, -1 for
#     the archiver, whose only batch failures are S3 outages) and
#     MaximumRecordAgeInSeconds (at most the stream's 24 h), then the
#     on-failure S3 bucket (onfailure.tf): one object per failed batch,
#     holding the whole invocation payload (the records), which
#     `streamfold deadletter redrive s3://...` replays at any time, where an
#     SQS/SNS destination would get only the shard and sequence range;
#   - metrics_config EventCount: the mapping's own CloudWatch metrics
#     (PolledEventCount, InvokedEventCount, FailedInvokeEventCount,
#     DroppedEventCount, OnFailureDestinationDeliveredEventCount, ... by
#     EventSourceMappingUUID), which the alarms in onfailure.tf use;
#   - FilterCriteria keeping INSERT only: the table is append-only, so
#     MODIFY never happens and REMOVE is a TTL expiry, which must neither
#     change a projection nor enter the archive. Filtered records are not
#     billed as invocations.

locals {
  stream_consumers = {
    projector = {
      batch_size              = var.projector_batch_size
      batching_window_seconds = var.projector_batching_window_seconds
      maximum_retry_attempts  = var.projector_maximum_retry_attempts
    }
    archiver = {
      batch_size              = var.archiver_batch_size
      batching_window_seconds = var.archiver_batching_window_seconds
      maximum_retry_attempts  = var.archiver_maximum_retry_attempts
    }
  }

  # Every on-failure queue: ingest's asynchronous (EventBridge)
  # invocations. The stream consumers send theirs to S3 (onfailure.tf).
  failure_queues = {
    ingest = "EventBridge Step Functions events the ingest function failed on after Lambda's retries (asynchronous invocation on-failure destination)"
  }
}

resource "aws_sqs_queue" "failures" {
  for_each = local.failure_queues

  name                      = "${local.name}-${each.key}-failures"
  message_retention_seconds = 1209600 # 14 days, the SQS maximum: time to look
  sqs_managed_sse_enabled   = true
}

resource "aws_lambda_event_source_mapping" "stream" {
  for_each = local.stream_consumers

  function_name     = aws_lambda_function.function[each.key].arn
  event_source_arn  = aws_dynamodb_table.table["events"].stream_arn
  starting_position = "TRIM_HORIZON"

  batch_size                         = each.value.batch_size
  maximum_batching_window_in_seconds = each.value.batching_window_seconds

  # Keep 1 (order per aggregate). Above 1, Lambda processes a shard's
  # records concurrently and keeps order only per item, which in this
  # append-only table means per event: two events of one subject
  # (aggregate) could then be applied concurrently or out of order.
  # The projector's version checks would survive that (a conflict, a reload,
  # a retry), but they would turn into conflicts and retries, and the
  # archiver's object keys assume one consumer per shard.
  parallelization_factor = 1

  function_response_types        = ["ReportBatchItemFailures"]
  bisect_batch_on_function_error = true
  maximum_retry_attempts         = each.value.maximum_retry_attempts
  maximum_record_age_in_seconds  = var.stream_maximum_record_age_seconds

  # The whole failed batch, records included, as one object (onfailure.tf).
  destination_config {
    on_failure {
      destination_arn = aws_s3_bucket.failures.arn
    }
  }

  metrics_config {
    metrics = ["EventCount"]
  }

  filter_criteria {
    filter {
      pattern = jsonencode({ eventName = ["INSERT"] })
    }
  }

  # The role must be able to read the stream and write to the on-failure
  # bucket before the mapping is created (Lambda validates it).
  depends_on = [aws_iam_role_policy.function]
}

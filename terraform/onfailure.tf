# Where the stream consumers' failed batches are kept whole.
#
# An event source mapping whose on-failure destination is an S3 bucket
# writes one JSON object per batch it gave up on (retries exhausted, or the
# records older than MaximumRecordAgeInSeconds). Unlike an SQS or SNS
# destination, which gets only the shard and sequence range, the object
# holds the whole invocation payload, i.e. the records themselves, so
# `streamfold deadletter redrive s3://<bucket>/...` can replay a batch
# long after the stream's 24 h (docs/deployment.md, "When an alarm fires").
#
# A bucket of its own, not a prefix of the archive bucket: Lambda chooses
# the keys (aws/lambda/<mapping UUID>/<shard id>/YYYY/MM/DD/<time>-<uuid>),
# so no prefix can be configured on the mapping, and a separate bucket
# keeps the archive's lifecycle, versioning and Athena locations apart from
# what an operator reads and deletes by hand.
#
# The mapping writes with the function's execution role: each stream
# consumer's policy (iam.tf, statements "OnFailureObjects" and
# "OnFailureBucket") may s3:PutObject under aws/lambda/ and s3:ListBucket
# this bucket, nothing else (the mapping's UUID is only known once it
# exists, and the mapping validates its role when it is created).

locals {
  failures_bucket = var.failures_bucket_name != "" ? var.failures_bucket_name : "${local.name}-failures"
  # Lambda's fixed key prefix for event source mapping on-failure objects.
  failures_key_prefix = "aws/lambda"
}

resource "aws_s3_bucket" "failures" {
  bucket = local.failures_bucket
  # Failed batches are evidence: only a dev stage's bucket is destroyed with
  # its contents.
  force_destroy = local.archive_force_destroy[var.stage]
}

resource "aws_s3_bucket_public_access_block" "failures" {
  bucket = aws_s3_bucket.failures.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "failures" {
  bucket = aws_s3_bucket.failures.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

# SSE-S3 (AES256), as the archive: with SSE-KMS and a customer managed key
# the functions' roles would also need kms:GenerateDataKey on the key.
resource "aws_s3_bucket_server_side_encryption_configuration" "failures" {
  bucket = aws_s3_bucket.failures.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

# Only requests over TLS.
data "aws_iam_policy_document" "failures_bucket" {
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.failures.arn, "${aws_s3_bucket.failures.arn}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "failures" {
  bucket = aws_s3_bucket.failures.id
  policy = data.aws_iam_policy_document.failures_bucket.json

  depends_on = [aws_s3_bucket_public_access_block.failures]
}

# Failed batches are kept var.failures_retention_days (redrive them, then
# delete them; what is left expires).
resource "aws_s3_bucket_lifecycle_configuration" "failures" {
  bucket = aws_s3_bucket.failures.id

  rule {
    id     = "expire-failed-batches"
    status = "Enabled"

    filter {
      prefix = "${local.failures_key_prefix}/"
    }

    expiration {
      days = var.failures_retention_days
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

# The mappings' EventCount metrics (metrics_config in streams.tf), by
# mapping UUID, namespace AWS/Lambda:
#   - DroppedEventCount: records the mapping gave up on (retries exhausted
#     or older than the maximum record age) and sent to the bucket above.
#     Any is a page: a projection or the archive misses those events until
#     they are redriven.
#   - FailedInvokeEventCount: records in invocations that failed (the
#     function errored or reported a batch item failure). Retries may still
#     succeed; many of them for long is a consumer stuck on a batch.
resource "aws_cloudwatch_metric_alarm" "stream_dropped" {
  for_each = local.stream_consumers

  alarm_name        = "${local.name}-${each.key}-stream-dropped"
  alarm_description = "The ${each.key}'s event source mapping gave up on stream records and wrote the failed batch to s3://${aws_s3_bucket.failures.bucket}/${local.failures_key_prefix}/: redrive it (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "AWS/Lambda"
  metric_name       = "DroppedEventCount"
  dimensions = {
    EventSourceMappingUUID = aws_lambda_event_source_mapping.stream[each.key].uuid
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

resource "aws_cloudwatch_metric_alarm" "stream_failed_invokes" {
  for_each = local.stream_consumers

  alarm_name        = "${local.name}-${each.key}-stream-failed-invokes"
  alarm_description = "The ${each.key} failed on stream records in each of the last 3 periods of 5 minutes (FailedInvokeEventCount): it is retrying a batch it cannot process; read its log (docs/deployment.md, \"When an alarm fires\")."
  namespace         = "AWS/Lambda"
  metric_name       = "FailedInvokeEventCount"
  dimensions = {
    EventSourceMappingUUID = aws_lambda_event_source_mapping.stream[each.key].uuid
  }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 3
  datapoints_to_alarm = 3
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
}

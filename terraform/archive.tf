# The Parquet archive (cmd/archiver) and how Athena reads it.
#
# Layout (archiver/layout.go), under s3://<bucket>/<archive_prefix>/:
#   <table>/event_date=YYYY-MM-DD/*.parquet            data
#   _symlink/<table>/event_date=YYYY-MM-DD/manifest    Hive symlink manifests listing the live files
#   errors/                                            poison records
# Athena reads each partition's manifest (SymlinkTextInputFormat) and the
# Parquet files it names, so a compaction in progress is never read twice.

locals {
  archive_bucket = var.archive_bucket_name != "" ? var.archive_bucket_name : "${local.name}-archive"
  archive_root   = "s3://${aws_s3_bucket.archive.bucket}/${var.archive_prefix}"

  # The archive's tables and their columns, generated from the archiver's
  # table definitions (the same ones its Parquet schema is built from), so
  # the Glue columns equal the Parquet columns by construction; with the
  # archiver's storage layout (formats, SerDe, directories).
  glue = jsondecode(file("${path.module}/generated/glue_tables.json"))
  # s3://<bucket>/<prefix>/_symlink/: the Glue tables' locations.
  glue_location_root = "${local.archive_root}/${local.glue.storage.location_dir}"

  # Versioning by stage. Stage and prod: on, so that an object overwritten
  # or deleted by mistake (a compaction bug, a bad rebuild) stays
  # recoverable for archive_noncurrent_version_days; the archiver's
  # conditional writes (If-Match on manifests) work either way. Dev: off
  # (never enabled), so destroying a dev stage leaves no versions behind.
  archive_versioning = {
    dev   = "Disabled"
    stage = "Enabled"
    prod  = "Enabled"
  }
  # A dev bucket may be destroyed with its contents; stage and prod may not.
  archive_force_destroy = {
    dev   = true
    stage = false
    prod  = false
  }
}

resource "aws_s3_bucket" "archive" {
  bucket        = local.archive_bucket
  force_destroy = local.archive_force_destroy[var.stage]
}

resource "aws_s3_bucket_public_access_block" "archive" {
  bucket = aws_s3_bucket.archive.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "archive" {
  bucket = aws_s3_bucket.archive.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

# SSE-S3 (AES256): no key policy to maintain, no per-request KMS charge, and
# Athena, Glue and the archiver need no kms:* permissions. Use SSE-KMS with
# a customer managed key if audit of every key use is required.
resource "aws_s3_bucket_server_side_encryption_configuration" "archive" {
  bucket = aws_s3_bucket.archive.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_versioning" "archive" {
  bucket = aws_s3_bucket.archive.id

  versioning_configuration {
    status = local.archive_versioning[var.stage]
  }
}

# Only requests over TLS.
data "aws_iam_policy_document" "archive_bucket" {
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.archive.arn, "${aws_s3_bucket.archive.arn}/*"]

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

resource "aws_s3_bucket_policy" "archive" {
  bucket = aws_s3_bucket.archive.id
  policy = data.aws_iam_policy_document.archive_bucket.json

  depends_on = [aws_s3_bucket_public_access_block.archive]
}

resource "aws_s3_bucket_lifecycle_configuration" "archive" {
  bucket = aws_s3_bucket.archive.id

  # Parquet data moves to Glacier after a year (seed 004), per table
  # directory so that the small symlink manifests (which Athena must read)
  # and the poison records stay in S3 Standard.
  dynamic "rule" {
    for_each = local.glue.tables
    content {
      id     = "${rule.key}-to-${lower(var.archive_storage_class)}"
      status = "Enabled"

      filter {
        prefix = "${var.archive_prefix}/${local.glue.storage.data_dir}${rule.key}/"
      }

      transition {
        days          = var.archive_transition_days
        storage_class = var.archive_storage_class
      }
    }
  }

  rule {
    id     = "athena-results-expire"
    status = "Enabled"

    filter {
      prefix = "athena-results/"
    }

    expiration {
      days = var.athena_results_days
    }
  }

  rule {
    id     = "noncurrent-versions-expire"
    status = "Enabled"

    filter {}

    noncurrent_version_expiration {
      noncurrent_days = var.archive_noncurrent_version_days
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }

  depends_on = [aws_s3_bucket_versioning.archive]
}

# --- Glue and Athena ---------------------------------------------------------

resource "aws_glue_catalog_database" "archive" {
  # Athena identifiers: lowercase letters, digits and '_'.
  name        = replace("${local.name}_archive", "-", "_")
  description = "streamfold ${var.stage} event archive (Parquet in s3://${local.archive_bucket}/${var.archive_prefix}/)."
}

# One Glue table per archive table, its columns straight from the generated
# JSON (terraform/glue_test.go checks that this stays so and that every
# type is one Athena reads from Parquet). Partitions are not registered:
# partition projection computes them from event_date.
resource "aws_glue_catalog_table" "archive" {
  for_each = local.glue.tables

  name          = each.key
  database_name = aws_glue_catalog_database.archive.name
  description   = each.value.doc
  table_type    = "EXTERNAL_TABLE"

  parameters = {
    EXTERNAL                              = "TRUE"
    "projection.enabled"                  = "true"
    "projection.event_date.type"          = "date"
    "projection.event_date.format"        = local.glue.storage.date_format
    "projection.event_date.range"         = "${var.archive_first_date},NOW+1YEARS"
    "projection.event_date.interval"      = "1"
    "projection.event_date.interval.unit" = "DAYS"
    "storage.location.template"           = "${local.glue_location_root}${each.key}/event_date=$${event_date}/"
  }

  dynamic "partition_keys" {
    for_each = local.glue.partition_keys
    content {
      name    = partition_keys.value.name
      type    = partition_keys.value.type
      comment = partition_keys.value.comment
    }
  }

  storage_descriptor {
    # SymlinkTextInputFormat over Parquet with ParquetHiveSerDe (checked
    # by terraform/glue_test.go).
    location      = "${local.glue_location_root}${each.key}/"
    input_format  = local.glue.storage.input_format
    output_format = local.glue.storage.output_format

    ser_de_info {
      serialization_library = local.glue.storage.serialization_library
    }

    dynamic "columns" {
      for_each = each.value.columns
      content {
        name    = columns.value.name
        type    = columns.value.type
        comment = columns.value.comment
      }
    }
  }
}

resource "aws_athena_workgroup" "archive" {
  name          = local.name
  description   = "Queries over the streamfold ${var.stage} archive; results in s3://${local.archive_bucket}/athena-results/."
  force_destroy = true

  configuration {
    enforce_workgroup_configuration    = true
    publish_cloudwatch_metrics_enabled = true
    bytes_scanned_cutoff_per_query     = var.athena_bytes_scanned_cutoff

    result_configuration {
      output_location = "s3://${aws_s3_bucket.archive.bucket}/athena-results/"

      encryption_configuration {
        encryption_option = "SSE_S3"
      }
    }
  }
}

# The archiver's saved queries (archiver/queries/*.sql). They use unqualified
# table names and run in the archive's Glue database.
resource "aws_athena_named_query" "archive" {
  for_each = fileset("${path.module}/../archiver/queries", "*.sql")

  name        = trimsuffix(each.value, ".sql")
  description = "archiver/queries/${each.value}"
  workgroup   = aws_athena_workgroup.archive.id
  database    = aws_glue_catalog_database.archive.name
  query       = file("${path.module}/../archiver/queries/${each.value}")
}

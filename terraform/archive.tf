# The archive (cmd/archiver): Apache Iceberg tables (format version 2,
# partitioned by day(event_time)) in the AWS Glue Data Catalog, which Athena
# reads natively (docs/archiver.md, docs/deployment.md).
#
# Layout, under s3://<bucket>/<archive_prefix>/:
#   <table>/metadata/   Iceberg table metadata, manifest lists and manifests
#   <table>/data/       Parquet data files
#   errors/             poison records
#
# Terraform creates the bucket and the Glue database; the tables are created
# and evolved by the archiver itself, through the catalog (at its first batch
# per container: created if missing, missing optional columns added). Neither
# aws_glue_catalog_table (open_table_format_input) nor aws_s3tables_table can
# declare the partition spec day(event_time): they take a schema and no
# partition spec. Terraform knows the tables from
# generated/iceberg_tables.json (written from the archiver's table
# definitions by `go test ./archiver -run TestTablesJSON -update`) for what
# names them: the archiver's Glue permissions (iam.tf), the lifecycle rules
# below and the archive_tables output.

locals {
  archive_bucket = var.archive_bucket_name != "" ? var.archive_bucket_name : "${local.name}-archive"
  archive_root   = "s3://${aws_s3_bucket.archive.bucket}/${var.archive_prefix}"

  # The archive's Iceberg tables (names, locations under the prefix,
  # columns), generated from the archiver's table definitions.
  iceberg = jsondecode(file("${path.module}/generated/iceberg_tables.json"))

  # The Glue Data Catalog of this account and region, where the archiver
  # keeps the tables (ARCHIVE_CATALOG = "glue").
  glue_arn_prefix  = "arn:${data.aws_partition.current.partition}:glue:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}"
  glue_catalog_arn = "${local.glue_arn_prefix}:catalog"
  # One ARN per archive table (the archiver creates them; iam.tf).
  glue_table_arns = [for name in sort(keys(local.iceberg.tables)) : "${local.glue_arn_prefix}:table/${aws_glue_catalog_database.archive.name}/${name}"]

  # Versioning by stage. Stage and prod: on, so that an object overwritten
  # or deleted by mistake (a compaction bug, a bad rebuild) stays
  # recoverable for archive_noncurrent_version_days (snapshot expiry and
  # orphan-file deletion delete objects daily); Iceberg commits (the Glue
  # table's optimistic version check) work either way. Dev: off
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

  # Parquet data files move to Glacier after a year (seed 004), per table
  # data directory, so that the tables' metadata and manifests (read by
  # every query plan and every commit) and the poison records stay in S3
  # Standard.
  dynamic "rule" {
    for_each = local.iceberg.tables
    content {
      id     = "${rule.key}-to-${lower(var.archive_storage_class)}"
      status = "Enabled"

      filter {
        prefix = "${var.archive_prefix}/${rule.value.location}data/"
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

# The Glue database holds the archive's Iceberg tables (ARCHIVE_NAMESPACE).
# The tables are not declared here: the archiver creates and evolves them
# (see the top of this file), and Terraform neither owns nor deletes them.
# The database must use IAM access control only (the default for a database
# Terraform creates): with Lake Formation permissions on it, the archiver
# and Athena would also need Lake Formation grants. Losing it, or one of its tables, loses no history (the metadata is
# in S3: the archiver re-registers a missing table at its next batch, and
# `streamfold archive register` does it by hand), but until then Athena sees
# nothing. So Terraform never destroys it: prevent_destroy makes a plan that
# would (`deploy destroy`, a renamed prefix or stage) fail instead. Its
# tables are not Terraform resources; the archiver's role may not delete
# them or the database (iam.tf grants no glue:Delete*). To really remove a
# stage, drop the guard first: `terraform state rm
# aws_glue_catalog_database.archive` (docs/deployment.md, "Destroying").
resource "aws_glue_catalog_database" "archive" {
  # Athena identifiers: lowercase letters, digits and '_'.
  name        = replace("${local.name}_archive", "-", "_")
  description = "streamfold ${var.stage} event archive: Iceberg tables in s3://${local.archive_bucket}/${var.archive_prefix}/, created by the archiver. Deleting it or a table loses no data (the metadata is in S3): run streamfold archive register."

  lifecycle {
    prevent_destroy = true
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

    # Engine version 3 reads Iceberg tables of the Glue Data Catalog.
    engine_version {
      selected_engine_version = "Athena engine version 3"
    }

    result_configuration {
      output_location = "s3://${aws_s3_bucket.archive.bucket}/athena-results/"

      encryption_configuration {
        encryption_option = "SSE_S3"
      }
    }
  }
}

# The archiver's saved queries (archiver/queries/*.sql, written for the
# Iceberg tables: they filter on event_time, the partition source). They use
# unqualified table names and run in the archive's Glue database.
resource "aws_athena_named_query" "archive" {
  for_each = fileset("${path.module}/../archiver/queries", "*.sql")

  name        = trimsuffix(each.value, ".sql")
  description = "archiver/queries/${each.value}"
  workgroup   = aws_athena_workgroup.archive.id
  database    = aws_glue_catalog_database.archive.name
  query       = file("${path.module}/../archiver/queries/${each.value}")
}

# The five Lambda functions, one per cmd/<name> main package, built by
# `make package` (.ci/package.sh) into <package_dir>/<name>.zip: Go for
# linux/arm64 with CGO_ENABLED=0, runtime provided.al2023, handler
# "bootstrap". Each function has its own log group, role and inline policy
# (iam.tf); terraform/lambda_test.go and terraform/iam_test.go check them.

locals {
  package_dir = var.package_dir != "" ? var.package_dir : "${path.module}/../dist"

  # The projector writes gsiShard and the api reads the shards only when
  # gsi_shards turns sharding on (main.tf); off, neither is told.
  gsi_shards_env = { for k, v in { STREAMFOLD_GSI_SHARDS = tostring(var.gsi_shards) } : k => v if local.gsi_sharded }

  functions = {
    projector = {
      description = "streamfold projector: folds the event table's stream into the projection tables (cmd/projector)"
      environment = merge({
        STREAMFOLD_PREFIX = var.prefix
        STREAMFOLD_STAGE  = var.stage
      }, local.gsi_shards_env)
    }
    archiver = {
      description = "streamfold archiver: writes every event to the archive's Iceberg tables (Glue Data Catalog, S3) for Athena (cmd/archiver)"
      # ARCHIVE_CATALOG/NAMESPACE: the Iceberg catalog, the Glue Data
      # Catalog of this account and region, and the database holding the
      # tables (archive.tf). STREAMFOLD_PREFIX/STAGE: the tables the
      # scheduled verify reads and the maintenance metrics' Deployment
      # dimension (maintenance.tf).
      environment = {
        ARCHIVE_BUCKET       = aws_s3_bucket.archive.bucket
        ARCHIVE_PREFIX       = var.archive_prefix
        ARCHIVE_BUCKET_OWNER = data.aws_caller_identity.current.account_id
        ARCHIVE_CATALOG      = "glue"
        ARCHIVE_NAMESPACE    = aws_glue_catalog_database.archive.name
        STREAMFOLD_PREFIX    = var.prefix
        STREAMFOLD_STAGE     = var.stage
      }
    }
    ingest = {
      description = "streamfold ingest: GitHub webhooks and CloudEvents (function URL) and Step Functions status changes (EventBridge) appended to the event table (cmd/ingest)"
      environment = {
        STREAMFOLD_PREFIX                  = var.prefix
        STREAMFOLD_STAGE                   = var.stage
        GITHUB_WEBHOOK_SECRET_ARN          = aws_secretsmanager_secret.github_webhook.arn
        STREAMFOLD_INGEST_TOKEN_SECRET_ARN = aws_secretsmanager_secret.ingest_token.arn
        STREAMFOLD_SFN_PAYLOADS            = var.sfn_payloads
      }
    }
    api = {
      description = "streamfold api: read API and dashboard over the projections (cmd/api)"
      environment = merge({
        STREAMFOLD_PREFIX                = var.prefix
        STREAMFOLD_STAGE                 = var.stage
        STREAMFOLD_API_TOKEN_SECRET_ARN  = aws_secretsmanager_secret.api_token.arn
        STREAMFOLD_CURSOR_KEY_SECRET_ARN = aws_secretsmanager_secret.cursor_key.arn
      }, local.gsi_shards_env)
    }
    reconcile = {
      description = "streamfold reconcile: checks that every event of the event table was projected and archived, on a schedule (reconcile.tf), and heals when allowed (cmd/reconcile)"
      # The tables and the archive, as the projector and the archiver see
      # them; RECONCILE_WINDOW/HEAL: the defaults of an on-demand
      # invocation, and RECONCILE_HEAL also whether it may heal at all
      # (its role has the consumers' writes only then: reconcile.tf).
      # STREAMFOLD_GSI_SHARDS when sharding is on: healing writes items.
      environment = merge({
        STREAMFOLD_PREFIX    = var.prefix
        STREAMFOLD_STAGE     = var.stage
        ARCHIVE_BUCKET       = aws_s3_bucket.archive.bucket
        ARCHIVE_PREFIX       = var.archive_prefix
        ARCHIVE_BUCKET_OWNER = data.aws_caller_identity.current.account_id
        ARCHIVE_CATALOG      = "glue"
        ARCHIVE_NAMESPACE    = aws_glue_catalog_database.archive.name
        RECONCILE_WINDOW     = var.reconcile_window
        RECONCILE_HEAL       = var.reconcile_heal ? "true" : "false"
      }, local.gsi_shards_env)
    }
  }

  # Each function's inline policy (iam.tf), by function name.
  function_policies = {
    projector = data.aws_iam_policy_document.projector.json
    archiver  = data.aws_iam_policy_document.archiver.json
    ingest    = data.aws_iam_policy_document.ingest.json
    api       = data.aws_iam_policy_document.api.json
    reconcile = data.aws_iam_policy_document.reconcile.json # reconcile.tf
  }
}

# Created before the function so that Lambda never creates it itself (with
# no retention) and so that each role can be limited to its own group.
resource "aws_cloudwatch_log_group" "function" {
  for_each = local.functions

  name              = "/aws/lambda/${local.name}-${each.key}"
  retention_in_days = var.log_retention_days
}

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    sid     = "LambdaAssumesTheRole"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

# One role per function: a function can never use another's permissions.
resource "aws_iam_role" "function" {
  for_each = local.functions

  name               = "${local.name}-${each.key}"
  description        = "Execution role of ${local.name}-${each.key}: only what cmd/${each.key} uses."
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json
}

resource "aws_iam_role_policy" "function" {
  for_each = local.functions

  name   = "${local.name}-${each.key}"
  role   = aws_iam_role.function[each.key].id
  policy = local.function_policies[each.key]
}

resource "aws_lambda_function" "function" {
  for_each = local.functions

  function_name    = "${local.name}-${each.key}"
  description      = each.value.description
  role             = aws_iam_role.function[each.key].arn
  runtime          = "provided.al2023"
  architectures    = ["arm64"]
  handler          = "bootstrap"
  filename         = "${local.package_dir}/${each.key}.zip"
  source_code_hash = filebase64sha256("${local.package_dir}/${each.key}.zip")
  memory_size      = var.lambda_memory_mb[each.key]
  timeout          = var.lambda_timeout_seconds[each.key]

  # Reserved per function (concurrency.tf): the public function URLs (api,
  # ingest) cannot use up the account's concurrency and throttle the stream
  # consumers, whose records expire after 24 h; -1 leaves one unreserved.
  reserved_concurrent_executions = var.lambda_reserved_concurrency[each.key]

  environment {
    variables = each.value.environment
  }

  logging_config {
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.function[each.key].name
  }

  # The policy must be in place before the first invocation (and before the
  # event source mappings validate the role's stream permissions).
  depends_on = [aws_iam_role_policy.function]
}

provider "aws" {
  # The region comes from the environment (AWS_REGION or the profile).
  default_tags {
    tags = merge({ Application = "streamfold", Stage = var.stage }, var.tags)
  }
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  name = "${var.prefix}-${var.stage}"

  # Write-sharded GSI keys (docs/decisions.md; schema.TablesFor): with
  # gsi_shards > 1 the sharded indexes are replaced by variants whose hash
  # key ends with the Number attribute gsiShard. Off: the seeds' indexes.
  gsi_sharded    = var.gsi_shards > 1
  gsi_shard_hash = local.gsi_sharded ? ["gsiShard"] : []

  # Point-in-time recovery by stage (seed 004): off in dev to save cost, on
  # in stage and prod. Only the tables whose spec says PITR use it.
  pitr_by_stage = {
    dev   = false
    stage = true
    prod  = true
  }
  pitr_enabled = local.pitr_by_stage[var.stage]
  # Outside dev, no table can be deleted (a destroy, a prefix typo or a
  # change that replaces a table fails instead): the event log and the
  # dead letters have no other copy than the archive and PITR.
  deletion_protection = var.stage != "dev"

  # The tables the projector writes and the API reads (everything but the
  # event log, the dead letters, the projector's own state and the local
  # runner's checkpoints). terraform/iam_test.go checks this set against
  # schema.Tables().
  projection_tables = {
    executions    = aws_dynamodb_table.executions
    workflows     = aws_dynamodb_table.workflows
    workflow-jobs = aws_dynamodb_table.workflow_jobs
    workflow-runs = aws_dynamodb_table.workflow_runs
    deployments   = aws_dynamodb_table.deployments
    messages      = aws_dynamodb_table.messages
    metrics       = aws_dynamodb_table.metrics
  }
  projection_table_arns = [for t in values(local.projection_tables) : t.arn]
  projection_index_arns = flatten([
    for t in values(local.projection_tables) : [for ix in t.global_secondary_index : "${t.arn}/index/${ix.name}"]
  ])
}

# One table per schema.Tables() entry (schema/tables.go is the source of truth;
# terraform/drift_test.go checks this file against it). TTL and PITR follow
# docs/decisions.md; PITR is always off in dev.
#
# Encryption at rest: server_side_encryption { enabled = true } without a
# kms_key_arn uses the AWS managed KMS key aws/dynamodb (seed 004: no extra
# cost, automatic rotation, KMS usage visible in CloudTrail). Its key policy
# lets any principal of the account that may use the table use the key
# through DynamoDB, so no function needs kms:* permissions. A customer
# managed key would add a key policy to maintain and per-request KMS charges.

# The append-only event log keyed by subject and id; 14-day TTL; streams
# (NEW_IMAGE: the consumers need the inserted item only) feed the projector
# and archiver; PITR in stage and prod.
resource "aws_dynamodb_table" "events" {
  name                        = "${local.name}-events"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "subject"
  range_key                   = "id"

  attribute {
    name = "id"
    type = "S"
  }

  attribute {
    name = "subject"
    type = "S"
  }

  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  stream_enabled   = true
  stream_view_type = "NEW_IMAGE"

  point_in_time_recovery {
    enabled = local.pitr_enabled
  }

  server_side_encryption {
    enabled = true
  }
}

# Agent Step Functions executions (seeds 000/002).
resource "aws_dynamodb_table" "executions" {
  name                        = "${local.name}-executions"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "executionArn"

  attribute {
    name = "agentName"
    type = "S"
  }

  attribute {
    name = "executionArn"
    type = "S"
  }

  attribute {
    name = "startDate"
    type = "S"
  }

  attribute {
    name = "status"
    type = "S"
  }

  dynamic "attribute" {
    for_each = local.gsi_shard_hash
    content {
      name = attribute.value
      type = "N"
    }
  }

  global_secondary_index {
    name            = local.gsi_sharded ? "AgentShardDateIndex" : "AgentDateIndex"
    projection_type = "ALL"

    key_schema {
      attribute_name = "agentName"
      key_type       = "HASH"
    }

    # Write-sharded (var.gsi_shards > 1): gsiShard ends the hash key.
    dynamic "key_schema" {
      for_each = local.gsi_shard_hash
      content {
        attribute_name = key_schema.value
        key_type       = "HASH"
      }
    }

    key_schema {
      attribute_name = "startDate"
      key_type       = "RANGE"
    }
  }

  global_secondary_index {
    name            = local.gsi_sharded ? "StatusShardDateIndex" : "StatusDateIndex"
    projection_type = "ALL"

    key_schema {
      attribute_name = "status"
      key_type       = "HASH"
    }

    # Write-sharded (var.gsi_shards > 1): gsiShard ends the hash key.
    dynamic "key_schema" {
      for_each = local.gsi_shard_hash
      content {
        attribute_name = key_schema.value
        key_type       = "HASH"
      }
    }

    key_schema {
      attribute_name = "startDate"
      key_type       = "RANGE"
    }
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Seed 001 single table: executions, albums, validation tasks, daily metrics rows.
resource "aws_dynamodb_table" "workflows" {
  name                        = "${local.name}-workflows"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "pk"
  range_key                   = "sk"

  attribute {
    name = "createdAt"
    type = "S"
  }

  attribute {
    name = "entityType"
    type = "S"
  }

  attribute {
    name = "executionId"
    type = "S"
  }

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "sk"
    type = "S"
  }

  attribute {
    name = "sortValue"
    type = "N"
  }

  attribute {
    name = "status"
    type = "S"
  }

  attribute {
    name = "workflowType"
    type = "S"
  }

  dynamic "attribute" {
    for_each = local.gsi_shard_hash
    content {
      name = attribute.value
      type = "N"
    }
  }

  global_secondary_index {
    name            = local.gsi_sharded ? "GSI1Shard" : "GSI1"
    projection_type = "ALL"

    key_schema {
      attribute_name = "workflowType"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "entityType"
      key_type       = "HASH"
    }

    # Write-sharded (var.gsi_shards > 1): gsiShard ends the hash key.
    dynamic "key_schema" {
      for_each = local.gsi_shard_hash
      content {
        attribute_name = key_schema.value
        key_type       = "HASH"
      }
    }

    key_schema {
      attribute_name = "status"
      key_type       = "RANGE"
    }

    key_schema {
      attribute_name = "createdAt"
      key_type       = "RANGE"
    }
  }

  global_secondary_index {
    name            = "GSI2"
    projection_type = "ALL"

    key_schema {
      attribute_name = "workflowType"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "executionId"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "entityType"
      key_type       = "RANGE"
    }

    key_schema {
      attribute_name = "sortValue"
      key_type       = "RANGE"
    }
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Seed 003 workflow_jobs; 90-day TTL.
resource "aws_dynamodb_table" "workflow_jobs" {
  name                        = "${local.name}-workflow-jobs"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "pk"
  range_key                   = "sk"

  attribute {
    name = "created_at"
    type = "S"
  }

  attribute {
    name = "installation_id"
    type = "N"
  }

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "repo_full_name"
    type = "S"
  }

  attribute {
    name = "run_attempt"
    type = "N"
  }

  attribute {
    name = "run_id"
    type = "N"
  }

  attribute {
    name = "sk"
    type = "S"
  }

  attribute {
    name = "status"
    type = "S"
  }

  global_secondary_index {
    name            = "GSI1"
    projection_type = "ALL"

    key_schema {
      attribute_name = "installation_id"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "status"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "created_at"
      key_type       = "RANGE"
    }
  }

  global_secondary_index {
    name            = "GSI2"
    projection_type = "ALL"

    key_schema {
      attribute_name = "installation_id"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "repo_full_name"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "created_at"
      key_type       = "RANGE"
    }
  }

  global_secondary_index {
    name            = "GSI3"
    projection_type = "ALL"

    key_schema {
      attribute_name = "installation_id"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "run_id"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "run_attempt"
      key_type       = "HASH"
    }

    key_schema {
      attribute_name = "created_at"
      key_type       = "RANGE"
    }
  }

  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Seed 003 workflow_runs; 90-day TTL.
resource "aws_dynamodb_table" "workflow_runs" {
  name                        = "${local.name}-workflow-runs"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "pk"
  range_key                   = "sk"

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "sk"
    type = "S"
  }

  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Seed 003 deployments; 90-day TTL.
resource "aws_dynamodb_table" "deployments" {
  name                        = "${local.name}-deployments"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "pk"
  range_key                   = "sk"

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "sk"
    type = "S"
  }

  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Seed 004 messages; 90-day TTL; PITR in stage/prod.
resource "aws_dynamodb_table" "messages" {
  name                        = "${local.name}-messages"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "message_id"

  attribute {
    name = "created_date"
    type = "S"
  }

  attribute {
    name = "message_id"
    type = "S"
  }

  attribute {
    name = "message_type"
    type = "S"
  }

  attribute {
    name = "stage"
    type = "S"
  }

  attribute {
    name = "status"
    type = "S"
  }

  dynamic "attribute" {
    for_each = local.gsi_shard_hash
    content {
      name = attribute.value
      type = "N"
    }
  }

  global_secondary_index {
    name            = local.gsi_sharded ? "stage-shard-created_date-index" : "stage-created_date-index"
    projection_type = "ALL"

    key_schema {
      attribute_name = "stage"
      key_type       = "HASH"
    }

    # Write-sharded (var.gsi_shards > 1): gsiShard ends the hash key.
    dynamic "key_schema" {
      for_each = local.gsi_shard_hash
      content {
        attribute_name = key_schema.value
        key_type       = "HASH"
      }
    }

    key_schema {
      attribute_name = "created_date"
      key_type       = "RANGE"
    }
  }

  global_secondary_index {
    name            = local.gsi_sharded ? "status-shard-created_date-index" : "status-created_date-index"
    projection_type = "ALL"

    key_schema {
      attribute_name = "status"
      key_type       = "HASH"
    }

    # Write-sharded (var.gsi_shards > 1): gsiShard ends the hash key.
    dynamic "key_schema" {
      for_each = local.gsi_shard_hash
      content {
        attribute_name = key_schema.value
        key_type       = "HASH"
      }
    }

    key_schema {
      attribute_name = "created_date"
      key_type       = "RANGE"
    }
  }

  global_secondary_index {
    name            = local.gsi_sharded ? "message_type-shard-created_date-index" : "message_type-created_date-index"
    projection_type = "ALL"

    key_schema {
      attribute_name = "message_type"
      key_type       = "HASH"
    }

    # Write-sharded (var.gsi_shards > 1): gsiShard ends the hash key.
    dynamic "key_schema" {
      for_each = local.gsi_shard_hash
      content {
        attribute_name = key_schema.value
        key_type       = "HASH"
      }
    }

    key_schema {
      attribute_name = "created_date"
      key_type       = "RANGE"
    }
  }

  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = local.pitr_enabled
  }

  server_side_encryption {
    enabled = true
  }
}

# Daily counter rows keyed by scope and date.
resource "aws_dynamodb_table" "metrics" {
  name                        = "${local.name}-metrics"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "scope"
  range_key                   = "date"

  attribute {
    name = "date"
    type = "S"
  }

  attribute {
    name = "scope"
    type = "S"
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Records a consumer could not process; PITR in stage/prod so a person can replay them.
resource "aws_dynamodb_table" "dead_letters" {
  name                        = "${local.name}-dead-letters"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "consumer"
  range_key                   = "position"

  attribute {
    name = "consumer"
    type = "S"
  }

  attribute {
    name = "position"
    type = "S"
  }

  # 90 days after quarantine (schema.DeadLetterRetentionDays); every dead
  # letter also pages (deadletters.tf).
  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = local.pitr_enabled
  }

  server_side_encryption {
    enabled = true
  }
}

# The projector's folded state per subject; rebuildable from the archive.
resource "aws_dynamodb_table" "aggregates" {
  name                        = "${local.name}-aggregates"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "subject"

  attribute {
    name = "subject"
    type = "S"
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

# Per-shard stream checkpoints of the local stream runner.
resource "aws_dynamodb_table" "checkpoints" {
  name                        = "${local.name}-checkpoints"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = "consumer"
  range_key                   = "shard_id"

  attribute {
    name = "consumer"
    type = "S"
  }

  attribute {
    name = "shard_id"
    type = "S"
  }

  point_in_time_recovery {
    enabled = false
  }

  server_side_encryption {
    enabled = true
  }
}

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
  gsi_sharded = var.gsi_shards > 1

  # The DynamoDB tables, generated from the schema's table specs
  # (schema.TablesFor) by `go test ./schema -run TestTerraformTablesJSON
  # -update`: by logical name, with keys and their types, the GSIs'
  # multi-attribute keys and projections, TTL, streams and whether PITR
  # applies. gsi_shards_on holds the write-sharded index variants.
  dynamodb        = jsondecode(file("${path.module}/generated/dynamodb_tables.json"))
  dynamodb_tables = local.dynamodb[local.gsi_sharded ? "gsi_shards_on" : "gsi_shards_off"]

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

  # The tables the projector writes and the API reads (the generated file's
  # projection flag: schema.ProjectionTables(), everything but the event
  # log, the dead letters, the projector's own state and the local runner's
  # checkpoints). terraform/iam_test.go checks this set.
  projection_tables = {
    for k, t in aws_dynamodb_table.table : k => t if local.dynamodb_tables[k].projection
  }
  projection_table_arns = [for t in values(local.projection_tables) : t.arn]
  projection_index_arns = flatten([
    for t in values(local.projection_tables) : [for ix in t.global_secondary_index : "${t.arn}/index/${ix.name}"]
  ])
}

# One table per schema.TablesFor(var.gsi_shards) entry, from
# generated/dynamodb_tables.json (schema/tables.go is the source of truth:
# edit the spec and regenerate, never this resource's keys).
# terraform/drift_test.go checks the file is current and that this resource
# reads it; the plan tier compares every planned table and GSI with the
# specs. Every table is on-demand; TTL and PITR follow docs/decisions.md
# (PITR only where the spec says, and never in dev); streams where the spec
# says (the event log: NEW_IMAGE, the consumers need the inserted item only).
#
# Encryption at rest: server_side_encryption { enabled = true } without a
# kms_key_arn uses the AWS managed KMS key aws/dynamodb (seed 004: no extra
# cost, automatic rotation, KMS usage visible in CloudTrail). Its key policy
# lets any principal of the account that may use the table use the key
# through DynamoDB, so no function needs kms:* permissions. A customer
# managed key would add a key policy to maintain and per-request KMS charges.
resource "aws_dynamodb_table" "table" {
  for_each = local.dynamodb_tables

  name                        = "${local.name}-${each.key}"
  billing_mode                = "PAY_PER_REQUEST"
  deletion_protection_enabled = local.deletion_protection
  hash_key                    = each.value.hash_key
  range_key                   = each.value.range_key

  dynamic "attribute" {
    for_each = each.value.attributes
    content {
      name = attribute.value.name
      type = attribute.value.type
    }
  }

  # Multi-attribute keys: the HASH attributes, then the RANGE ones, in order.
  dynamic "global_secondary_index" {
    for_each = each.value.global_secondary_indexes
    content {
      name            = global_secondary_index.value.name
      projection_type = global_secondary_index.value.projection_type

      dynamic "key_schema" {
        for_each = global_secondary_index.value.key_schema
        content {
          attribute_name = key_schema.value.attribute_name
          key_type       = key_schema.value.key_type
        }
      }
    }
  }

  dynamic "ttl" {
    for_each = each.value.ttl_attribute[*]
    content {
      attribute_name = ttl.value
      enabled        = true
    }
  }

  stream_enabled   = each.value.stream_view_type != null
  stream_view_type = each.value.stream_view_type

  point_in_time_recovery {
    enabled = each.value.point_in_time_recovery && local.pitr_enabled
  }

  server_side_encryption {
    enabled = true
  }
}

# The tables were one hand-written resource each until they were generated
# from the schema; these blocks move an existing deployment's state to the
# new addresses instead of destroying and re-creating the tables.
moved {
  from = aws_dynamodb_table.events
  to   = aws_dynamodb_table.table["events"]
}

moved {
  from = aws_dynamodb_table.executions
  to   = aws_dynamodb_table.table["executions"]
}

moved {
  from = aws_dynamodb_table.workflows
  to   = aws_dynamodb_table.table["workflows"]
}

moved {
  from = aws_dynamodb_table.workflow_jobs
  to   = aws_dynamodb_table.table["workflow-jobs"]
}

moved {
  from = aws_dynamodb_table.workflow_runs
  to   = aws_dynamodb_table.table["workflow-runs"]
}

moved {
  from = aws_dynamodb_table.deployments
  to   = aws_dynamodb_table.table["deployments"]
}

moved {
  from = aws_dynamodb_table.messages
  to   = aws_dynamodb_table.table["messages"]
}

moved {
  from = aws_dynamodb_table.metrics
  to   = aws_dynamodb_table.table["metrics"]
}

moved {
  from = aws_dynamodb_table.dead_letters
  to   = aws_dynamodb_table.table["dead-letters"]
}

moved {
  from = aws_dynamodb_table.aggregates
  to   = aws_dynamodb_table.table["aggregates"]
}

moved {
  from = aws_dynamodb_table.checkpoints
  to   = aws_dynamodb_table.table["checkpoints"]
}

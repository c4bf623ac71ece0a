terraform {
  required_version = "= 1.5.7"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Multi-attribute GSI keys need repeated `key_schema` blocks inside
      # global_secondary_index (added by provider PR #45357 in the 6.2x line;
      # hash_key/range_key on a GSI take one attribute only). Removing an
      # index declared through key_schema dropped every index before 6.36.0
      # (issue #46602), so the pin stays well above that. The table's own
      # keys keep hash_key/range_key: base-table keys are single-attribute.
      # aws_lambda_permission.invoked_via_function_url (function URLs created
      # since October 2025 need lambda:InvokeFunction too) is in 6.x as well.
      version = "= 6.58.0"
    }
  }

  # Partial configuration: `streamfold deploy` passes bucket, key
  # (streamfold/<stage>.tfstate), region and dynamodb_table with
  # -backend-config. Without --backend-bucket it writes backend_override.tf
  # (git-ignored), which swaps this for a local backend with one state file
  # per stage (terraform/<stage>.tfstate); see docs/deployment.md.
  backend "s3" {}
}

terraform {
  # A range, not a pin: any Terraform 1.x from 1.5.7 on. 1.5.7 is what the
  # project's machines build (`make tools TOOLS=terraform`); users run newer
  # 1.x releases. streamfold deploy checks the same range before it runs
  # anything (terraform/deploy.TerraformConstraint; a test keeps the two equal).
  required_version = ">= 1.5.7, < 2.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Multi-attribute GSI keys need repeated `key_schema` blocks inside
      # global_secondary_index (provider PR #45357, released in 6.29.0;
      # hash_key/range_key on a GSI take one attribute only), and
      # aws_lambda_permission.invoked_via_function_url (function URLs created
      # since October 2025 need lambda:InvokeFunction too) is also 6.29.0.
      # Removing an index declared through key_schema dropped and recreated
      # every index until PR #46602 (in 6.36.0), so the range starts there.
      # Sources and what was checked: docs/deployment.md, "Terraform and
      # provider versions".
      # "~> 6.36" is >= 6.36.0, < 7.0.0. The table's own keys keep
      # hash_key/range_key: base-table keys are single-attribute.
      version = "~> 6.36"
    }
  }

  # Partial configuration: `streamfold deploy` passes bucket, key
  # (streamfold/<stage>.tfstate), region and dynamodb_table with
  # -backend-config. Without --backend-bucket it writes backend_override.tf
  # (git-ignored), which swaps this for a local backend with one state file
  # per stage (terraform/<stage>.tfstate); see docs/deployment.md.
  backend "s3" {}
}

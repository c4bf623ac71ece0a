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
      version = "= 6.58.0"
    }
  }
}

data "aws_caller_identity" "current" {}

resource "aws_dynamodb_table" "t" {
  name = "t"
}

resource "random_id" "not_aws" {}

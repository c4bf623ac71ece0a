module github.com/hashicorp/terraform-provider-aws

go 1.22

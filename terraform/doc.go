// Package terraform holds no code that runs in production: it only holds the
// configuration checks for the Terraform in this directory (drift against
// schema.Tables(), parsed with HCL, and `terraform fmt -check`).
package terraform

// Package terraform holds no code that runs in production: it holds the
// checks of the Terraform configuration in this directory, which `go test
// ./terraform/...` runs with every other test.
//
// The AWS provider cannot be installed on the project's machines, so most
// checks parse the configuration with hcl/v2 and evaluate it with a small
// evaluator (config_test.go: variables at their defaults, locals and
// resource arguments in dependency order, for_each and dynamic blocks
// expanded, provider-computed attributes as "arn:fake:<address>"
// placeholders):
//
//   - drift_test.go: every DynamoDB table equals its schema.Tables() spec
//     (names, keys, multi-attribute GSIs, TTL, streams, PITR), naming both
//     sides on a difference; `terraform fmt -check` with the real binary;
//   - esm_test.go: both stream event source mappings carry the failure
//     settings (partial batch responses, bisection, bounded retries and
//     age, the on-failure S3 bucket, metrics_config EventCount, INSERT-only
//     filter, parallelization 1);
//   - onfailure_test.go: the failures bucket (private, SSE-S3, TLS only,
//     expiring) the mappings write failed batches to;
//   - maintenance_test.go: the daily EventBridge Scheduler schedules of the
//     archiver's maintenance tasks, their targets and input, the
//     scheduler's role (assumable by Scheduler of the account only, may
//     invoke only the archiver) and the maintenance alarms;
//   - iam_test.go: one role per function, no wildcard action, no wildcard
//     resource outside an allow-list with reasons, and each policy grants
//     exactly what its command's code calls;
//   - glue_test.go: the Glue tables come from generated/glue_tables.json
//     column for column, read symlink manifests over Parquet with partition
//     projection, and use only types Athena reads;
//   - lambda_test.go: one arm64 provided.al2023 function per Lambda
//     command, its environment equal to what the command reads; stage
//     policies, the archive bucket, alarms, producers; descriptions;
//   - versions_test.go: versions.tf's constraints are ranges (Terraform
//     ">= 1.5.7, < 2.0", equal to deploy.TerraformConstraint; AWS provider
//     "~>" from the release with multi-attribute GSI keys on), admitting
//     1.5.7 and 1.6-1.14;
//   - validate_test.go: `terraform validate` with the real binary, run only
//     where an AWS provider within versions.tf's range is available
//     locally, else skipped saying what to install.
package terraform

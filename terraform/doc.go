// Package terraform holds no code that runs in production: it holds the
// checks of the Terraform configuration in this directory, which `go test
// ./terraform/...` runs with every other test.
//
// Two tiers. The plan tier (plan_test.go, plan_checks_test.go) runs the real
// Terraform with the real hashicorp/aws provider, built from source by
// .ci/tools.sh (aws-provider), offline: init from the local mirror,
// validate -json with no diagnostics, plan -refresh=false for dev and prod
// with every AWS endpoint a deploy.LocalAWS on 127.0.0.1, and the plan read
// as JSON: every known value equals the evaluator's (below), tables and GSIs
// against schema.Tables() (and drift mutations planned: drift_test.go), the
// mappings' settings, each function's environment against its main, policy
// actions per role, alarms and schedules.
//
// The evaluator tier parses the configuration with hcl/v2 and evaluates it
// with a small evaluator (config_test.go: variables at their defaults, locals and
// resource arguments in dependency order, for_each and dynamic blocks
// expanded, provider-computed attributes as "arn:fake:<address>"
// placeholders):
//
//   - drift_test.go: generated/dynamodb_tables.json (written from
//     schema.TablesFor by `go test ./schema -run TestTerraformTablesJSON
//     -update`) is current and main.tf declares the tables from it (one
//     aws_dynamodb_table.table, for_each, moved blocks from the old
//     addresses); compare(), every DynamoDB table of the plan against its
//     schema.Tables() spec (names, keys, multi-attribute GSIs, TTL, streams,
//     PITR), naming both sides on a difference, with mutations of the
//     generated file and of main.tf planned by the provider; `terraform fmt
//     -check` with the real binary;
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
//   - iceberg_test.go: generated/iceberg_tables.json (the archive's Iceberg
//     tables, written by the archiver's generator) is well formed; no
//     Terraform resource declares an archive table (the archiver creates
//     and evolves them in the Glue Data Catalog), and every table of the
//     JSON is named where tables are named (the archiver's Glue ARNs, the
//     lifecycle rules, the archive_tables output); Athena engine 3; one
//     named query per archiver/queries/*.sql;
//   - lambda_test.go: one arm64 provided.al2023 function per Lambda
//     command, its environment equal to what the command reads; stage
//     policies, the archive bucket, alarms, producers; descriptions;
//   - versions_test.go: versions.tf's constraints are ranges (Terraform
//     ">= 1.5.7, < 2.0", equal to deploy.TerraformConstraint; AWS provider
//     "~>" from the release with multi-attribute GSI keys on), admitting
//     1.5.7 and 1.6-1.14;
//   - validate_test.go: the provider release .ci/tools.sh builds is inside
//     versions.tf's range.
package terraform

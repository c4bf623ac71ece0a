// Package lambdatier is the Lambda test tier (tests only): it builds the
// five function zips with the script `make package` runs (.ci/package.sh,
// the same flags, with PACKAGE_GOARCH set to the host's architecture so the
// binaries can run here, and PACKAGE_SQLCATALOG=1: -tags lambda.norpc
// instead of lambda.norpc,nosqlcatalog, so that the archiver keeps its
// SQLite Iceberg catalog), checks each zip's layout,
// unzips it and runs its `bootstrap` as a subprocess against a local Lambda
// Runtime API (package internal/laptop/runtimeapi), with the environment Terraform
// sets for that function (read from terraform/lambda.tf and the variables'
// defaults) pointed at fresh DynamoDB Local tables and a MinIO bucket.
//
// The contract the tier enforces, and fails on:
//
//   - every zip holds exactly one file, "bootstrap", at the root, mode
//     0755, a static ELF for the zip's architecture (the arm64 zips that
//     are deployed are built and checked too, but cannot run here);
//   - each function starts with exactly the variables lambda.tf gives it
//     (plus what Lambda itself sets and the tests' endpoint overrides), and
//     a variable renamed in either place is caught: the function fails its
//     init, or the invocation does not have the effect it should;
//   - the handler is the one the event source sends: DynamoDB stream batches
//     to projector and archiver (partial batch responses), function URL
//     requests (payload format 2.0) to api and ingest, EventBridge Step
//     Functions events to ingest, the scheduler's payload to reconcile; a handler given the wrong event is
//     reported as such;
//   - handler errors and timeouts reach the Runtime API's /error (or the
//     deadline) as Lambda would see them.
//
// There is no Glue here: the archiver's ARCHIVE_CATALOG (Terraform's
// "glue") is replaced by an SQLite catalog in a temporary directory, and the
// tests read the archive through that catalog, in the namespace Terraform
// gives it (ARCHIVE_NAMESPACE, the Glue database's name). The deployed arm64
// zips are checked to hold no SQLite catalog, the tier's archiver to hold
// one.
//
// TestColdStart (run only with STREAMFOLD_COLDSTART_DIR) measures built
// bootstraps' init side by side: process start to the first /next.
//
// Secrets Manager (api, ingest) and Step Functions' ListTagsForResource
// (ingest) are served by a small fake in the test, reached through the
// SDK's standard service endpoint variables AWS_ENDPOINT_URL_SECRETS_MANAGER
// and AWS_ENDPOINT_URL_SFN: the functions need no code for it.
//
// The tier needs DynamoDB Local and MinIO (STREAMFOLD_DYNAMODB_ENDPOINT,
// STREAMFOLD_S3_ENDPOINT); without them it skips, unless
// STREAMFOLD_REQUIRE_SERVICES=1 (`make test`), when it fails.
package lambdatier

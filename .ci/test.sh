#!/usr/bin/env bash
# The full test run: the README's test command (`make test`) runs this, and so does CI (.ci/run).
#
#   1. installs the tools (reused when present),
#   2. checks formatting and go vet,
#   3. starts a private DynamoDB Local + MinIO on test ports (not the dev stack's),
#   4. runs every Go test with the services required (a missing service fails, never skips),
#   5. stops the services it started, whatever happened.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
start=$(date +%s)

bash .ci/tools.sh

echo "== gofmt / go vet"
unformatted=$(find . -name '*.go' -not -path './.tools/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

echo "== build"
mkdir -p bin
CGO_ENABLED=0 go build -o bin/streamfold ./cmd/streamfold

echo "== services"
DDB_PORT="${STREAMFOLD_TEST_DYNAMODB_PORT:-28766}"
S3_PORT="${STREAMFOLD_TEST_S3_PORT:-29766}"
STATE_DIR="$TOOLS_DIR/test-run"
rm -rf "$STATE_DIR/minio-data"
dev() { bin/streamfold dev "$@" --tools-dir "$TOOLS_DIR" --state-dir "$STATE_DIR" --dynamodb-port "$DDB_PORT" --s3-port "$S3_PORT" --prefix sftest; }
trap 'echo "== stopping services"; dev down || true' EXIT
dev up

export STREAMFOLD_DYNAMODB_ENDPOINT="http://127.0.0.1:$DDB_PORT"
export STREAMFOLD_S3_ENDPOINT="http://127.0.0.1:$S3_PORT"
export STREAMFOLD_REQUIRE_SERVICES=1
export STREAMFOLD_BIN="$ROOT/bin/streamfold"

echo "== go test"
go test -count=1 -timeout 20m ${GOTESTFLAGS:-} ./...

echo "== done in $(( $(date +%s) - start ))s"

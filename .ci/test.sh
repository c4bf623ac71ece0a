#!/usr/bin/env bash
# The full test run: the README's test command (`make test`) runs this, and so does CI (.ci/run).
#
#   1. installs the tools (reused when present),
#   2. checks formatting and go vet,
#   3. starts two private DynamoDB Local + MinIO stacks on test ports (not the dev stack's),
#   4. runs every Go test with the services required (a missing service fails, never skips):
#      ./projector/... on the first stack, every other package on the second, side by side,
#      both through .ci/testprogress (go test -json): package results as they finish, a line
#      per finished projector test, failing tests' full output, and a line saying what is
#      still running whenever 25 s pass without output,
#   5. stops the services it started, whatever happened.
#
# Every step that can take more than ~20 s prints a progress line every 20 s (.ci/progress.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=progress.sh
source .ci/progress.sh
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
start=$(date +%s)
step_log="$(mktemp)"
trap 'rm -f "$step_log"' EXIT

bash .ci/tools.sh

echo "== gofmt / go vet"
unformatted=$(find . -name '*.go' -not -path './.tools/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
progress "go vet ./..." "~3 min with an empty Go build cache, seconds after" -- progress_to "$step_log" go vet ./... \
  || { cat "$step_log"; exit 1; }

echo "== build"
mkdir -p bin
cli_detail() { progress_go_log "$step_log"; }
progress "building bin/streamfold" "~4 min on a clean 2-core machine, seconds once Go's build cache has it" cli_detail -- \
  progress_to "$step_log" env CGO_ENABLED=0 go build -v -o bin/streamfold ./cmd/streamfold \
  || { cat "$step_log"; exit 1; }

echo "== services"
# Two private stacks (DynamoDB Local + MinIO), not the dev stack's ports: the projector's
# full-size fault-injection suite gets a fresh DynamoDB Local of its own, because DynamoDB
# Local slows down badly as other suites' tables and streams accumulate in it; every other
# package shares the second stack. The two go test runs go side by side.
DDB_PORT="${STREAMFOLD_TEST_DYNAMODB_PORT:-28766}"
S3_PORT="${STREAMFOLD_TEST_S3_PORT:-29766}"
DDB_PORT2=$((DDB_PORT + 100))
S3_PORT2=$((S3_PORT + 100))
STATE_DIR="$TOOLS_DIR/test-run"
rm -rf "$STATE_DIR/minio-data" "$STATE_DIR-2/minio-data"
dev1() { bin/streamfold dev "$@" --archive minio --tools-dir "$TOOLS_DIR" --state-dir "$STATE_DIR" --dynamodb-port "$DDB_PORT" --s3-port "$S3_PORT" --prefix sftest; }
dev2() { bin/streamfold dev "$@" --archive minio --tools-dir "$TOOLS_DIR" --state-dir "$STATE_DIR-2" --dynamodb-port "$DDB_PORT2" --s3-port "$S3_PORT2" --prefix sftest; }
trap 'echo "== stopping services"; dev1 down || true; dev2 down || true; rm -f "$step_log"' EXIT
dev1 up
dev2 up

export STREAMFOLD_REQUIRE_SERVICES=1
export STREAMFOLD_BIN="$ROOT/bin/streamfold"
on() { # on PORT S3PORT CMD...: run CMD against one stack
  local d="$1" s="$2"
  shift 2
  STREAMFOLD_DYNAMODB_ENDPOINT="http://127.0.0.1:$d" STREAMFOLD_S3_ENDPOINT="http://127.0.0.1:$s" "$@"
}

# failures FILE...: one line per failing test, "package TestName" (subtests too), from go
# test's output; a package that failed without naming a test (build failure, panic, time-out)
# is named on its own.
failures() {
  awk '
    /^ *--- FAIL: / { t = $0; sub(/^ *--- FAIL: /, "", t); sub(/ \(.*$/, "", t); failed[++n] = t; next }
    /^FAIL\t/ || /^FAIL [^ ]+ \[/ {
      pkg = $2
      if (n == 0) printf "  %s (no test named: build failure, panic or time-out; see its output above)\n", pkg
      for (i = 1; i <= n; i++) printf "  %s %s\n", pkg, failed[i]
      n = 0; next
    }
    /^ok\t/ { n = 0 }
  ' "$@"
}

echo "== go test"
# Compile every test binary once, before the two runs compete for the CPU.
progress "compiling every package's tests" "a few minutes with an empty Go build cache, seconds after" -- \
  progress_to "$step_log" go test -count=1 -run '^$' ./... \
  || { cat "$step_log"; exit 1; }
# go test holds a package's output until the package ends; -json streams it, and
# testprogress prints it as go test would, as it comes (see its doc comment).
testprogress="$(mktemp -d)/testprogress"
go build -o "$testprogress" .ci/testprogress/main.go
proj_log="$(mktemp)"
rest_log="$(mktemp)"
{
  on "$DDB_PORT" "$S3_PORT" go test -json -count=1 -timeout 40m ${GOTESTFLAGS:-} ./projector/... 2>&1 \
    | "$testprogress" -tests projector | tee "$proj_log"
} &
proj_pid=$!
rest_rc=0
# shellcheck disable=SC2046
on "$DDB_PORT2" "$S3_PORT2" go test -json -count=1 -timeout 40m ${GOTESTFLAGS:-} $(go list ./... | grep -Ev '/streamfold/projector(/|$)') 2>&1 \
  | "$testprogress" | tee "$rest_log" || rest_rc=$?
proj_rc=0
wait "$proj_pid" || proj_rc=$?
rm -rf "$(dirname "$testprogress")"

echo "== done in $(( $(date +%s) - start ))s"
if [ "$rest_rc" -ne 0 ] || [ "$proj_rc" -ne 0 ]; then
  echo "FAILED: go test exit codes: projector $proj_rc, other packages $rest_rc; failing tests:"
  failures "$proj_log" "$rest_log"
fi
rm -f "$proj_log" "$rest_log"
if [ "$rest_rc" -ne 0 ] || [ "$proj_rc" -ne 0 ]; then exit 1; fi

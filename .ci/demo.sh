#!/usr/bin/env bash
# The main job, end to end on this machine (`make demo`): tools installed, services up,
# a realistic workload simulated and appended to the event table, the stream consumed
# and projected, and a summary of what was written and projected. The stack stays up afterwards; `make down` stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
EVENTS="${EVENTS:-20000}"
DAYS="${DAYS:-3}"
SEED="${SEED:-7}"

STREAMFOLD_SKIP_CHROMIUM=1 bash .ci/tools.sh   # the demo needs no browser
mkdir -p bin
CGO_ENABLED=0 go build -o bin/streamfold ./cmd/streamfold

echo "== services"
bin/streamfold dev up --tools-dir "$TOOLS_DIR"
export STREAMFOLD_DYNAMODB_ENDPOINT="http://127.0.0.1:${STREAMFOLD_DYNAMODB_PORT:-8766}"
export STREAMFOLD_S3_ENDPOINT="http://127.0.0.1:${STREAMFOLD_S3_PORT:-9766}"

echo "== simulate: $EVENTS events over $DAYS days (seed $SEED), appended to the event table"
bin/streamfold simulate --seed "$SEED" --events "$EVENTS" --days "$DAYS"

echo "== the same workload again: every event is a duplicate, nothing is written twice"
bin/streamfold simulate --seed "$SEED" --events "$EVENTS" --days "$DAYS" --quiet | sed -n '/"appended"/,/}/p'

echo "== what the event table holds"
bin/streamfold events summary

echo "== project: consume the stream until caught up (Lambda's event source mapping semantics)"
bin/streamfold run --until-caught-up --batch-size 1000

echo "== what was projected"
bin/streamfold summary

echo
echo "The stack is still running. Try:"
echo "  export STREAMFOLD_DYNAMODB_ENDPOINT=$STREAMFOLD_DYNAMODB_ENDPOINT STREAMFOLD_S3_ENDPOINT=$STREAMFOLD_S3_ENDPOINT"
echo "  bin/streamfold events list github/12345/job/<id>"
echo "Stop it with: make down"

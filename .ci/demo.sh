#!/usr/bin/env bash
# The main job, end to end on this machine (`make demo`): DynamoDB Local and MinIO installed
# (or reused from $TOOLS_DIR; Terraform is not built), services up,
# a realistic workload simulated and appended to the event table, the stream consumed,
# projected and archived as Apache Iceberg tables on S3 (MinIO, SQLite catalog), the archive compacted and verified
# against the projections, and a summary of what was written, projected and archived.
# The stack stays up afterwards; `make down` stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
EVENTS="${EVENTS:-20000}"
DAYS="${DAYS:-3}"
SEED="${SEED:-7}"

demo_start=$SECONDS
# Only what the demo runs: DynamoDB Local and MinIO. No Terraform (deploy and the terraform
# tests need it) and no browser. tools.sh says first what a first run will build, and how long.
bash .ci/tools.sh dynamodb minio
mkdir -p bin
CGO_ENABLED=0 go build -o bin/streamfold ./cmd/streamfold

echo "== services"
bin/streamfold dev up --tools-dir "$TOOLS_DIR"
export STREAMFOLD_DYNAMODB_ENDPOINT="http://127.0.0.1:${STREAMFOLD_DYNAMODB_PORT:-8766}"
export STREAMFOLD_S3_ENDPOINT="http://127.0.0.1:${STREAMFOLD_S3_PORT:-9766}"
# The archive's Iceberg catalog: an SQLite file beside MinIO's data (what dev up prints).
export STREAMFOLD_CATALOG="sqlite:$TOOLS_DIR/run/catalog.db"

echo "== simulate: $EVENTS events over $DAYS days (seed $SEED), appended to the event table"
bin/streamfold simulate --seed "$SEED" --events "$EVENTS" --days "$DAYS"

echo "== the same workload again: every event is a duplicate, nothing is written twice"
bin/streamfold simulate --seed "$SEED" --events "$EVENTS" --days "$DAYS" --quiet | sed -n '/"appended"/,/}/p'

echo "== what the event table holds"
bin/streamfold events summary

echo "== project and archive: consume the stream until caught up (Lambda's event source mapping semantics)"
bin/streamfold run --until-caught-up --batch-size 1000 --archive-batch-size 5000

echo "== what was projected"
bin/streamfold summary

echo "== what was archived (Iceberg data files per table and day, from each table's current snapshot)"
bin/streamfold archive ls

echo "== compact every archived day (files older than --min-age only; 0s: all, the archiver is caught up): one snapshot per table and day"
for d in $(bin/streamfold archive ls --json | sed -n 's/.*"date": "\([0-9-]*\)".*/\1/p' | sort -u); do
  bin/streamfold archive compact --date "$d" --min-age 0s --json >/dev/null
done
bin/streamfold archive ls

echo "== Iceberg maintenance: snapshot expiry (older than 7 days) and orphan files (older than 3 days); a fresh archive has none"
bin/streamfold archive maintain

echo "== verify: recompute metrics rows and run summaries from the archive, compare with the projections"
bin/streamfold verify --quiet

echo "== the named Athena queries (archiver/queries), and a dashboard read through the query API"
bin/streamfold archive queries
bin/streamfold query compare --date "$(date -u -d yesterday +%F)"

echo
echo "demo: done in $((SECONDS - demo_start))s. The stack is still running. Try:"
echo "  export STREAMFOLD_DYNAMODB_ENDPOINT=$STREAMFOLD_DYNAMODB_ENDPOINT STREAMFOLD_S3_ENDPOINT=$STREAMFOLD_S3_ENDPOINT STREAMFOLD_CATALOG=$STREAMFOLD_CATALOG"
echo "  bin/streamfold query messages --stage dev --limit 5"
echo "  bin/streamfold serve            # the HTTP API and the dashboard (prints the URL with its token)"
echo "Stop it with: make down"

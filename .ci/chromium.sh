#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the dashboard's end-to-end
# test (dashboard/e2e_test.go), when it is not there yet.
#
#   /usr/bin/chromium  <- apt-get install -y --no-install-recommends chromium
#
# Idempotent: with /usr/bin/chromium present it installs nothing and only
# prints the version. Runs apt-get as root, or through sudo otherwise;
# `apt-get update` runs only if the install fails without it (a fresh
# machine's package lists may be empty or stale). The test uses
# $STREAMFOLD_CHROMIUM instead when that is set.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

log() { printf 'chromium: %s\n' "$*"; }
die() { printf 'chromium: ERROR: %s\n' "$*" >&2; exit 1; }

if [ ! -x "$CHROMIUM" ]; then
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "$CHROMIUM is missing, this is not root and sudo is not available; install it with: apt-get install -y --no-install-recommends chromium"
    SUDO=(sudo -n)
  fi
  command -v apt-get >/dev/null 2>&1 || die "$CHROMIUM is missing and apt-get is not available (Debian's package 'chromium' is expected)"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { "${SUDO[@]}" apt-get install -y -q --no-install-recommends chromium; }
  log "installing Debian package chromium..."
  start=$SECONDS
  if ! apt_install; then
    log "install failed; running apt-get update and trying again"
    "${SUDO[@]}" apt-get update -q || die "apt-get update failed"
    apt_install || die "apt-get install chromium failed"
  fi
  [ -x "$CHROMIUM" ] || die "package chromium was installed but $CHROMIUM is missing"
  log "installed in $((SECONDS - start))s"
fi

version="$("$CHROMIUM" --version 2>/dev/null || true)"
[ -n "$version" ] || die "$CHROMIUM --version printed nothing (a broken install?)"
log "$version ($CHROMIUM)"

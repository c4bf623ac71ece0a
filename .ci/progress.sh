# shellcheck shell=bash
# Progress for long steps, sourced by the other .ci scripts. A step that can
# take more than ~20 s says what it is and how long it usually takes before
# it starts, then prints a line every $PROGRESS_EVERY seconds (default 20)
# while it runs, with the time elapsed, the estimate and, optionally, a
# detail (e.g. packages compiled so far). The lines go to standard output
# whether or not it is a terminal: a CI log shows them too.
#
#   progress LABEL ESTIMATE [DETAIL_FN] -- CMD [ARG...]
#
# runs CMD in the foreground (Ctrl-C reaches it) with a ticker beside it,
# and returns CMD's exit status:
#
#   building MinIO from source (~7 min on 2 cores)...
#   building MinIO from source: 20s elapsed (~7 min on 2 cores); 41 packages compiled
#   building MinIO from source: done in 6m42s
#
# DETAIL_FN, if given, is a shell function whose output ends each ticker line.

PROGRESS_EVERY="${PROGRESS_EVERY:-20}"

# progress_dur SECONDS -> "45s", "2m05s"
progress_dur() {
  local s=$1
  if [ "$s" -lt 60 ]; then printf '%ds' "$s"; else printf '%dm%02ds' $((s / 60)) $((s % 60)); fi
}

progress() {
  local label="$1" estimate="$2" detail=""
  shift 2
  if [ "${1:-}" != "--" ]; then detail="$1"; shift; fi
  [ "${1:-}" = "--" ] && shift
  local start=$SECONDS rc=0 main=$$
  echo "$label ($estimate)..."
  (
    # The ticker: stops when told, or when the script that started it is gone.
    trap 'exit 0' TERM
    last=$SECONDS
    while kill -0 "$main" 2>/dev/null; do
      sleep 1
      if [ $((SECONDS - last)) -ge "$PROGRESS_EVERY" ]; then
        last=$SECONDS
        line="$label: $(progress_dur $((SECONDS - start))) elapsed ($estimate)"
        if [ -n "$detail" ]; then line="$line; $("$detail" 2>/dev/null || true)"; fi
        echo "$line"
      fi
    done
  ) &
  local ticker=$!
  "$@" || rc=$?
  local took=$((SECONDS - start))
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ "$rc" -eq 0 ]; then
    echo "$label: done in $(progress_dur "$took")"
  else
    echo "$label: FAILED (exit $rc) after $(progress_dur "$took")"
  fi
  return "$rc"
}

# progress_to LOG CMD [ARG...]: CMD with its output in LOG (for progress's CMD, so that
# the progress lines themselves still reach the terminal).
progress_to() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1
}

# progress_go_log FILE -> "N packages compiled" from a `go build -v` / `go install -v` log
# (the lines that name a package; "go: downloading" lines count as modules).
progress_go_log() {
  local f="$1" pk mod
  pk=$(grep -vc '^go: downloading' "$f" 2>/dev/null || true)
  mod=$(grep -c '^go: downloading' "$f" 2>/dev/null || true)
  printf '%s packages compiled' "${pk:-0}"
  if [ "${mod:-0}" -gt 0 ]; then printf ', %s modules downloaded' "$mod"; fi
}

#!/usr/bin/env bash
# Usage: bounded.sh SECONDS MEBIBYTES COMMAND [ARGS...]
# Runs COMMAND with its address space capped at MEBIBYTES (ulimit -v) and
# kills it after SECONDS (timeout). Regression tests for inputs that used to
# exhaust memory or hang run their tool through it (lit: %bounded), so that a
# regression fails the test instead of the machine.
#
# Sanitized builds (DIST_SANITIZE_BUILD=1, set by the lit configuration):
# ASan reserves terabytes of shadow address space, so no ulimit -v fits it;
# ASan's own hard_rss_limit_mb (ASAN_OPTIONS from utils/check.sh --sanitize)
# bounds memory there, and the timeout is doubled for the slower build.
set -u
seconds=$1 mebibytes=$2
shift 2
if [ "${DIST_SANITIZE_BUILD:-0}" = 1 ]; then
  seconds=$((seconds * 2))
else
  ulimit -v $((mebibytes * 1024)) || exit 125
fi
exec timeout --kill-after=5 "$seconds" "$@"

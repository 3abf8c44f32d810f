#!/usr/bin/env bash
# Sets up (if needed), builds, and runs every test: lit (FileCheck tests,
# GoogleTest unit tests, end-to-end runs), then prints one summary line
# `lit: N passed, M failed`. Exits non-zero on any failure.
#
# --sanitize: the same in an ASan+UBSan build of everything (clang-22, its own
# folder, build-sanitize/ unless DIST_BUILD_DIR says otherwise); the
# sanitizers' options come from test/sanitize.py. Prints how long it took.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${1-}" = "--sanitize" ]; then
  export DIST_SANITIZE=1
  export DIST_BUILD_DIR=${DIST_BUILD_DIR:-$root/build-sanitize}
  shift
elif [ $# -gt 0 ]; then
  echo "usage: utils/check.sh [--sanitize]" >&2
  exit 2
fi
build=${DIST_BUILD_DIR:-$root/build}
started=$SECONDS

"$root/utils/build.sh" || { echo "lit: 0 passed, 1 failed"; exit 1; }

# The front doors' tests need torch, torch-mlir and transformers: their
# virtual environment (utils/setup-frontends.sh; not for the sanitized run).
# Without it (no package index) those tests are unsupported, and this says so.
if [ "${DIST_SANITIZE:-0}" != 1 ] && [ "${DIST_SKIP_FRONTENDS:-0}" != 1 ]; then
  if frontends=$("$root/utils/setup-frontends.sh" 2>"$build.frontends.log"); then
    export DIST_FRONTENDS_PYTHON=$frontends
  else
    echo "check.sh: the front-door tests will be unsupported: utils/setup-frontends.sh" \
      "failed ($(tail -n 1 "$build.frontends.log"))"
  fi
fi

log=$(mktemp)
/usr/lib/llvm-22/bin/lit -sv "$build/test" "$build/test/Unit" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# lit's summary lines look like "  Passed     : 242 (97.58%)".
count() {
  sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | head -n 1
}
passed=$(( $(count Passed) + 0 ))
failed=0
for kind in Failed Unresolved "Timed Out" "Unexpectedly Passed"; do
  n=$(count "$kind")
  failed=$(( failed + ${n:-0} ))
done
skipped=$(( $(count Unsupported) + 0 ))
rm -f "$log"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
if [ "${DIST_SANITIZE:-0}" = 1 ]; then
  echo "sanitize: build and tests took $((SECONDS - started)) s"
fi
echo "lit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

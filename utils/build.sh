#!/usr/bin/env bash
# Configures (once) and builds dist into $DIST_BUILD_DIR (default: build/).
# Used by demo.sh and check.sh; safe to run by hand. DIST_SANITIZE=1
# configures an ASan+UBSan build with clang-22 (use its own build folder).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
jobs=${DIST_JOBS:-$(nproc)}

"$root/utils/setup.sh"

# DIST_SANITIZE=1 (utils/check.sh --sanitize): clang-22 with ASan+UBSan.
config=()
if [ "${DIST_SANITIZE:-0}" = 1 ]; then
  config=(-DDIST_SANITIZE=ON -DCMAKE_C_COMPILER=clang-22
          -DCMAKE_CXX_COMPILER=clang++-22)
fi
if [ -f "$build/CMakeCache.txt" ]; then
  have=$(sed -n 's/^DIST_SANITIZE:BOOL=//p' "$build/CMakeCache.txt")
  want=OFF
  [ "${DIST_SANITIZE:-0}" = 1 ] && want=ON
  if [ "${have:-OFF}" != "$want" ]; then
    echo "build.sh: $build was configured with DIST_SANITIZE=${have:-OFF}," \
      "not $want; use another DIST_BUILD_DIR" >&2
    exit 1
  fi
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "${config[@]}" >"$build.configure.log" 2>&1 || {
    echo "build.sh: cmake configure failed; see $build.configure.log" >&2
    tail -n 30 "$build.configure.log" >&2
    exit 1
  }
  grep -E '^-- dist' "$build.configure.log" || true
fi
log="$build.ninja.log"
if ! ninja -C "$build" -j "$jobs" >"$log" 2>&1; then
  echo "build.sh: build failed (full log: $log):" >&2
  grep -E 'error|FAILED' "$log" | head -n 40 >&2
  exit 1
fi
grep -E 'warning:' "$log" | head -n 20 || true

#!/usr/bin/env bash
# Builds the libFuzzer harnesses of test/fuzz (clang-22, ASan+UBSan, in
# build-fuzz/ unless DIST_FUZZ_BUILD_DIR says otherwise) and runs each one
# on its seed corpus (test/fuzz/corpus/<harness>/) for a number of
# executions, then writes the results to docs/fuzzing.md.
#
#   utils/fuzz.sh                     # every harness, 1,000,000 executions each
#   utils/fuzz.sh --runs 20000 planner topology
#
# A harness fails by crashing, by a sanitizer report, by exceeding 30 s on
# one input or 4 GiB of memory, or by an invariant it checks; the input is
# saved under build-fuzz/artifacts/<harness>/ and the script exits 1.
# New inputs the fuzzer finds go to build-fuzz/corpus/<harness>/ (kept
# between runs; the seeds in the repository are read only).
#
#   utils/fuzz.sh programs [--count 1000] [--seed 1] [--features default]
#                          [--max-ops 6] [--minimize]
#
# runs the program fuzzer instead (utils/fuzz/program_fuzzer.py: random
# global-view programs through dist-run, compared with NumPy) on the normal
# build (utils/build.sh, $DIST_BUILD_DIR or build/), saves failures under
# build/program-fuzzer/ and writes the counts by outcome to the program
# fuzzer's table in docs/fuzzing.md (one row per --features value).
#
#   utils/fuzz.sh contractions [--count 1000] [--seed 1] ...
#
# is the contraction fuzzer: the same with --features contractions and every
# program run under each lowering of its products (--lowerings
# default,loops: the runtime's GEMM and loops), each compared with NumPy.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=()
if [ "${1-}" = contractions ]; then
  shift
  preset=(--features contractions --lowerings default,loops)
  set -- programs "${preset[@]}" "$@"
fi
if [ "${1-}" = programs ]; then
  shift
  "$root/utils/build.sh" || exit 1
  python=""
  for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c "import numpy" >/dev/null 2>&1; then
      python=$candidate
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "fuzz.sh: the program fuzzer needs a Python with numpy (Debian: python3-numpy)" >&2
    exit 1
  fi
  exec "$python" "$root/utils/fuzz/program_fuzzer.py" run \
    --bin "${DIST_BUILD_DIR:-$root/build}/bin" --record "$root/docs/fuzzing.md" \
    --count 1000 "$@"
fi
build=${DIST_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${DIST_JOBS:-$(nproc)}
runs=1000000
all=(attributes planner topology cache-entry capi)
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")

"$root/utils/setup.sh" || exit 1
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DDIST_FUZZ=ON -DDIST_ENABLE_PYTHON=OFF -DDIST_ENABLE_BENCHMARKS=OFF \
    -DDIST_ENABLE_NCCL=OFF -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    >"$build.configure.log" 2>&1 || {
    echo "fuzz.sh: cmake configure failed; see $build.configure.log" >&2
    tail -n 30 "$build.configure.log" >&2
    exit 1
  }
fi
# Only the harnesses asked for (the attribute one builds all of MLIR's users).
targets=()
for h in "${harnesses[@]}"; do targets+=("dist-fuzz-$h"); done
if ! ninja -C "$build" -j "$jobs" "${targets[@]}" >"$build.ninja.log" 2>&1; then
  echo "fuzz.sh: build failed (full log: $build.ninja.log):" >&2
  grep -E 'error|FAILED' "$build.ninja.log" | head -n 40 >&2
  exit 1
fi

# allow_user_poisoning=0: see test/sanitize.py (LLVM's allocator, poisoned by
# instrumented code and used by uninstrumented libMLIR.so).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allow_user_poisoning=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=0
rows=()
for h in "${harnesses[@]}"; do
  bin="$build/fuzz/dist-fuzz-$h"
  seeds="$root/test/fuzz/corpus/$h"
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz.sh: unknown harness '$h' (have: ${all[*]})" >&2
    exit 2
  fi
  corpus="$build/corpus/$h" artifacts="$build/artifacts/$h/"
  mkdir -p "$corpus" "$artifacts"
  log="$build/fuzz-$h.log"
  echo "fuzz: $h ($runs executions)"
  start=$(date +%s%N)
  "$bin" -runs="$runs" -timeout=30 -rss_limit_mb=4096 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" "$seeds" \
    >"$log" 2>&1
  rc=$?
  seconds=$(( ($(date +%s%N) - start + 500000000) / 1000000000 ))
  executed=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -n1)
  crashes=$(find "$artifacts" -type f | wc -l)
  if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    echo "fuzz: $h FAILED (exit $rc; see $log and $artifacts)" >&2
    grep -E 'ERROR|invariant|SUMMARY|Test unit written' "$log" | head -n 8 >&2
  fi
  case "$h" in
    attributes) what="\`#dist.sharding\` attributes, sharded tensor types, whole modules (parse, verify, print, parse again)" ;;
    planner) what="dist-plan requests: mesh, shape, layouts, strategy, move set, peak limit, target mesh (plan, replay, JSON round trip, cost >= bound)" ;;
    topology) what="topology JSON and --alpha/--beta lists, then a cost model" ;;
    cache-entry) what="plan-cache entry files, and plan JSON behind a valid checksum (parse, replay, never cheaper than the optimum)" ;;
    capi) what="C API requests (dist-c/Planner.h): any bytes; every answer is JSON, an error object or a plan costing at least its bound" ;;
  esac
  rows+=("| \`$h\` | $what | ${executed:-0} | $seconds | $crashes | $(date -u +%Y-%m-%d) |")
done

# Harnesses not run this time keep their rows from the last table.
if [ -f "$root/docs/fuzzing.md" ]; then
  for h in "${all[@]}"; do
    case " ${harnesses[*]} " in *" $h "*) continue ;; esac
    old=$(grep -E "^\| \`$h\` \|" "$root/docs/fuzzing.md" || true)
    [ -n "$old" ] && rows+=("$old")
  done
fi

# The table goes to docs/fuzzing.md (numbers never typed in: rerun this).
# The program fuzzer's section (from its heading on) is kept as it is.
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n1)
programs=""
if [ -f "$root/docs/fuzzing.md" ]; then
  programs=$(sed -n '/^## The program fuzzer/,$p' "$root/docs/fuzzing.md")
fi
{
  cat <<MD
# Fuzzing

Generated by \`utils/fuzz.sh\` on this machine: $cpu, $(nproc) cores. Every harness in \`test/fuzz/\` is built with clang-22,
libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer (the project's
libraries included, Debian's libMLIR.so uninstrumented) and run from its seed
corpus in \`test/fuzz/corpus/<harness>/\`:

    utils/fuzz.sh --runs EXECUTIONS HARNESS

(\`utils/fuzz.sh\` alone runs every harness 1,000,000 times.) Each row is the
harness's latest run:

| harness | what it reads | executions | seconds | crashes | run on |
|---|---|---:|---:|---:|---|
MD
  printf '%s\n' "${rows[@]}"
  cat <<MD

A crash is any sanitizer report, an abort from an invariant a harness checks
(a wrong answer is as loud as a crash), more than 30 s on one input or more
than 4 GiB of memory. See [benchmarks.md](benchmarks.md#reliability) for the
sanitized test run.
MD
  if [ -n "$programs" ]; then
    printf '\n%s\n' "$programs"
  fi
} > "$root/docs/fuzzing.md"
printf '%s\n' "${rows[@]}" | cut -d'|' -f2,4-
echo "fuzz: wrote docs/fuzzing.md"
exit $failed

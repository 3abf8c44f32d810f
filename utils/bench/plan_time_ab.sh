#!/usr/bin/env bash
# Plan time before and after a change, measured in the same run (issue 26's
# rule for planner speed): builds dist-plan-bench (the planner alone, no MLIR)
# at BASE and from the working tree, then runs `dist-plan-bench --summary`
# for each in turn, RUNS times (A B A B ...), so that both see the same phases
# of a noisy machine. Prints per mesh rank the median over runs of the
# optimal median and worst plan times, and their ratio.
#
#   utils/bench/plan_time_ab.sh [BASE (default HEAD)] [RUNS (default 5)]
#
# Environment: CASES (default 200), MAX_RANK (default 6), WORK (build
# directories, kept between calls; default /tmp/dist-plan-time-ab).
# Needs git, cmake, ninja and python3 (any interpreter; no packages).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
base=${1:-HEAD}
runs=${2:-5}
cases=${CASES:-200}
max_rank=${MAX_RANK:-6}
work=${WORK:-/tmp/dist-plan-time-ab}
mkdir -p "$work"

rev=$(git -C "$root" rev-parse --verify "$base^{commit}")
# The base's files (no worktree registered in the repository); the build
# directory is kept, so an unchanged base rebuilds nothing.
if [ "$(cat "$work/base-rev" 2>/dev/null)" != "$rev" ]; then
  rm -rf "$work/base-src"
  mkdir -p "$work/base-src"
  git -C "$root" archive "$rev" | tar -x -C "$work/base-src"
  echo "$rev" >"$work/base-rev"
fi

build() { # SOURCE BUILD_DIR
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDIST_ENABLE_MLIR=OFF -DDIST_ENABLE_PYTHON=OFF -DDIST_ENABLE_NCCL=OFF \
    -DDIST_BUILD_TESTS=OFF -DDIST_ENABLE_BENCHMARKS=ON >"$2.log" 2>&1 ||
    { cat "$2.log" >&2; exit 1; }
  ninja -C "$2" dist-plan-bench >>"$2.log" 2>&1 || { cat "$2.log" >&2; exit 1; }
}
echo "plan_time_ab: building $base ($rev) and the working tree" >&2
build "$work/base-src" "$work/build-base"
build "$root" "$work/build-new"

out="$work/runs.txt"
: >"$out"
for i in $(seq "$runs"); do
  for v in base new; do
    echo "plan_time_ab: run $i/$runs, $v" >&2
    "$work/build-$v/bin/dist-plan-bench" --summary --cases="$cases" \
      --max-rank="$max_rank" |
      awk -F'|' -v v="$v" 'NR > 2 { gsub(/ /, "", $2); gsub(/ /, "", $5);
                                   gsub(/ /, "", $7); print v, $2, $5, $7 }' \
        >>"$out"
  done
done

python3 - "$out" "$base" "$runs" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, rank, median, worst = line.split()
    runs[(int(rank), v)].append((float(median), float(worst)))
print(f"| mesh rank | median, {sys.argv[2]} (us) | median, now (us) | now / before "
      f"| worst, {sys.argv[2]} (us) | worst, now (us) | now / before |")
print("|---|---|---|---|---|---|---|")
for rank in sorted({r for r, _ in runs}):
    b, n = runs[(rank, "base")], runs[(rank, "new")]
    bm, nm = (statistics.median(x[0] for x in s) for s in (b, n))
    bw, nw = (statistics.median(x[1] for x in s) for s in (b, n))
    print(f"| {rank} | {bm:.1f} | {nm:.1f} | {nm / bm:.2f} "
          f"| {bw:.1f} | {nw:.1f} | {nw / bw:.2f} |")
print(f"\n(medians over {sys.argv[3]} interleaved runs of "
      "`dist-plan-bench --summary`)")
PY

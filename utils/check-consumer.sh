#!/usr/bin/env bash
# Installs a dist build and uses it from outside, as an embedding compiler
# would (semantics §7; run by test/consumer/consumer.test, hence by CI):
#
#   utils/check-consumer.sh BUILD_DIR WORK_DIR
#
#  1. cmake --install BUILD_DIR into WORK_DIR/staging, then moves the tree
#     to WORK_DIR/prefix: nothing may depend on where it was installed, no
#     file may name the build folder, and the runtime's only header is its
#     C ABI;
#  2. builds test/consumer against the moved tree with find_package(Dist)
#     and runs its C++ pass driver, its C API program and its runtime user;
#  3. runs upstream's mlir-opt with the installed DistPlugin.so, the
#     installed dist-plan, and the installed Python package;
#  4. configures dist as a subproject (test/consumer/subproject).
# Prints one "consumer: ..." line per step; stops at the first failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
consumer=$root/test/consumer
llvm_bin=/usr/lib/llvm-22/bin

step() { echo "consumer: $*"; }
run_logged() { # LOG CMD...: the command's output goes to LOG, shown on failure
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "consumer: FAILED: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

run_logged "$work/install.log" cmake --install "$build" --prefix "$work/staging"
mv "$work/staging" "$work/prefix"
prefix=$work/prefix
for f in lib/cmake/Dist/DistConfig.cmake lib/DistPlugin.so include/dist-c/Planner.h \
         include/dist/InitAllDist.h bin/dist-opt bin/dist-plan; do
  [ -e "$prefix/$f" ] || { echo "consumer: FAILED: $f not installed" >&2; exit 1; }
done
if grep -rla --fixed-strings "$build" "$prefix" >"$work/build-paths.txt"; then
  echo "consumer: FAILED: installed files name the build folder $build:" >&2
  cat "$work/build-paths.txt" >&2
  exit 1
fi
step "installed and moved; no file names the build folder"
# The runtime's public header is its C ABI alone: its C++ internals (the
# backend interface, which includes <mpi.h>) stay in lib/Runtime, so no
# installed header needs MPI, CUDA or NCCL to compile.
runtime_headers=$(cd "$prefix/include/dist/Runtime" && ls)
if [ "$runtime_headers" != DistRuntime.h ]; then
  echo "consumer: FAILED: include/dist/Runtime holds more than DistRuntime.h:" $runtime_headers >&2
  exit 1
fi
if grep -rlE '^#[[:space:]]*include[[:space:]]*<(mpi|nccl|cuda_runtime)\.h>' "$prefix/include" >"$work/private-headers.txt"; then
  echo "consumer: FAILED: installed headers include MPI, NCCL or CUDA:" >&2
  cat "$work/private-headers.txt" >&2
  exit 1
fi
step "runtime headers: only the C ABI, dist/Runtime/DistRuntime.h"

run_logged "$work/configure.log" cmake -G Ninja -S "$consumer" -B "$work/consumer-build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
run_logged "$work/build.log" cmake --build "$work/consumer-build"
step "built test/consumer with find_package(Dist)"

"$work/consumer-build/consumer-opt" "$consumer/shard-program.mlir"
"$work/consumer-build/consumer-plan"
"$work/consumer-build/consumer-runtime"

"$llvm_bin/mlir-opt" --load-dialect-plugin="$prefix/lib/DistPlugin.so" \
  --load-pass-plugin="$prefix/lib/DistPlugin.so" "$consumer/shard-program.mlir" \
  --pass-pipeline='builtin.module(dist-import-shard, dist-reshard-pipeline)'
"$prefix/bin/dist-plan" --mesh '<["x"=2]>' --shape 8xf32 --from '[{"x"}]' --to '[{}]'

python_package=$(find "$prefix/lib" -maxdepth 3 -type d -name site-packages | head -n 1)
if [ -n "$python_package" ]; then
  # From another folder, without the build's DIST_TOOLS_DIR: the package
  # must find the tools of the prefix it was installed into.
  (cd "$work" && env -u DIST_TOOLS_DIR PREFIX="$prefix" PYTHONPATH="$python_package" \
    /usr/bin/python3 -c 'import os; from dist_mlir._tools import find_tool
print("consumer: python finds", os.path.relpath(find_tool("dist-plan"), os.environ["PREFIX"]))')
else
  step "python package not installed"
fi

run_logged "$work/subproject.log" cmake -S "$consumer/subproject" -B "$work/subproject-build" \
  -DDIST_SOURCE_DIR="$root" -DCMAKE_BUILD_TYPE=Debug
grep '^-- dist subproject:' "$work/subproject.log" | sed 's/^-- /consumer: /'

#!/usr/bin/env bash
# The runtime's GPU checks in one command, for a machine with NVIDIA GPUs,
# CUDA, NCCL, MPI and CMake (no LLVM/MLIR needed):
#
#   test/Runtime/gpu-run.sh [BUILD_DIR] [OUT_DIR]
#
# Builds lib/Runtime/standalone, then runs
#   1. dist-rt-gpu-check: every copy kernel against CPU reference loops;
#   2. dist-rt-collectives-check --backend nccl on 1 rank, and on 2/4/8 ranks
#      when that many GPUs are visible (one rank per GPU); and the mpi
#      backend on device memory (DIST_RT_MPI_MEMORY=device: transfers staged
#      through the host) on 4 ranks sharing the GPUs;
#   3. dist-runtime-gpu-bench: kernel bandwidth vs a D2D cudaMemcpy;
#   4. with DIST_GPU_JOBS (a folder of `utils/e2e/gpu_jobs.py compile`, made
#      on a machine with MLIR) and DIST_WORKER_BIN (the folder of that
#      machine's dist-run-worker), every e2e program compiled for
#      target=gpu, run and checked against NumPy (python3 with numpy);
# and writes the outputs (gpu-bench.md, gpu-bench.json, ...) to OUT_DIR.
# Exits non-zero on the first failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-/tmp/dist-runtime-gpu}
out=${2:-$build/results}
mkdir -p "$out"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake "${generator[@]}" -S "$root/lib/Runtime/standalone" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release | tee "$out/configure.txt"
if ! grep -q '^DIST_HAVE_NCCL:INTERNAL=ON' "$build/CMakeCache.txt"; then
  echo "gpu-run: the NCCL backend was not built (see 'dist runtime:' above)" >&2
  exit 1
fi
cmake --build "$build" -j "$(nproc)"

nvidia-smi -L | tee "$out/gpus.txt"
ngpu=$(grep -c '^GPU ' "$out/gpus.txt" || true)
bin=$build/test/Runtime/bin

echo "== copy kernels vs CPU reference"
"$bin/dist-rt-gpu-check" | tee "$out/gpu-check.txt"

for np in 1 2 4 8; do
  [ "$np" -le "$ngpu" ] || break
  echo "== NCCL collectives on $np rank(s)"
  "$build/bin/dist-mpirun" --timeout 600 -np "$np" \
    "$bin/dist-rt-collectives-check" --backend nccl | tee "$out/nccl-np$np.txt"
done

echo "== mpi backend on device memory, 4 ranks sharing the GPUs"
DIST_RT_MPI_MEMORY=device "$build/bin/dist-mpirun" --timeout 600 -np 4 \
  "$bin/dist-rt-collectives-check" --backend mpi | tee "$out/mpi-device-np4.txt"

echo "== copy kernel bandwidth"
"$build/bin/dist-runtime-gpu-bench" | tee "$out/gpu-bench.md"
"$build/bin/dist-runtime-gpu-bench" --json > "$out/gpu-bench.json"
if [ -n "${DIST_GPU_JOBS:-}" ]; then
  echo "== e2e programs compiled for target=gpu ($DIST_GPU_JOBS)"
  worker_bin=$(mktemp -d)
  cp "${DIST_WORKER_BIN:?DIST_WORKER_BIN names the folder of dist-run-worker}/dist-run-worker" \
    "$build/bin/dist-mpirun" "$worker_bin/"
  LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}" python3 "$root/utils/e2e/gpu_jobs.py" \
    run "$DIST_GPU_JOBS" --bin "$worker_bin" | tee "$out/e2e-gpu.txt"
fi
echo "gpu-run: all GPU checks passed; results in $out"

#!/usr/bin/env bash
# Runs every benchmark on this machine and regenerates docs/benchmarks.md and
# the charts in docs/img/. Numbers are never typed in: rerun this script.
#
#   utils/bench.sh                 # full run, with the sanitized test suite
#                                  # (utils/check.sh --sanitize: most of the time)
#   utils/bench.sh --no-sanitize   # everything else (a few minutes on 2 cores)
#   utils/bench.sh --quick         # fewer cases and sizes, no sanitized run
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DIST_BUILD_DIR:-$root/build}
quick=0 sanitize=1
[ "${1:-}" = "--quick" ] && quick=1 && sanitize=0
[ "${1:-}" = "--no-sanitize" ] && sanitize=0

"$root/utils/build.sh"
bin="$build/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$root/docs/img"

if [ $quick = 1 ]; then
  plan_cases=30; sizes="1MiB,4MiB"; reps=3; compile_repeat=3
  gain_cases=20; dims="1024"; exchange_reps=3
else
  plan_cases=200; sizes="1MiB,4MiB,16MiB,64MiB"; reps=5; compile_repeat=7
  gain_cases=100; dims="1024,4096"; exchange_reps=9
fi

echo "bench: planner speed and plan quality (random cases, mesh rank 1-6)"
"$bin/dist-plan-bench" --summary --summary-json="$work/planner.json" \
  --cases=$plan_cases > "$work/planner.md"
echo "bench: optimal vs greedy vs lower bound on realistic reshards"
python3 "$root/utils/bench/plan_quality.py" "$build" --data "$work/quality.dat" \
  > "$work/quality.md"
echo "bench: plans with vs without point-to-point redistribute"
python3 "$root/utils/bench/redistribute_gain.py" "$build" --cases $gain_cases \
  > "$work/redistribute.md"
echo "bench: dist-partition vs the per-op and keep-larger baselines"
python3 "$root/utils/bench/partition_quality.py" "$build" \
  --data "$work/partition.dat" > "$work/partition.md"
echo "bench: partition + plan time of a 48-layer transformer"
python3 "$root/utils/bench/partition_time.py" "$build" --repeat $compile_repeat \
  > "$work/partition-time.md"
echo "bench: vocabulary-parallel embedding lookups, 4 ranks"
"${DIST_NUMPY_PYTHON:-/usr/bin/python3}" "$root/utils/bench/embedding.py" "$build" \
  > "$work/embedding.md"
echo "bench: exact layout choice and auto-sharding"
python3 "$root/utils/bench/layout_choice.py" "$build" --repeat $compile_repeat \
  > "$work/layout-choice.md"
echo "bench: local compute (matmul vs BLAS) and compile once"
# NumPy (for the BLAS baseline): Debian's interpreter has it.
"${DIST_NUMPY_PYTHON:-/usr/bin/python3}" "$root/utils/bench/local_compute.py" "$build" \
  > "$work/local-compute.md"
echo "bench: local compute per op class (products vs BLAS, fused ops vs memcpy)"
# torch and jax, pinned, in a virtual environment of their own.
peers=$("$root/utils/bench/peers/setup.sh")
"${DIST_NUMPY_PYTHON:-/usr/bin/python3}" "$root/utils/bench/op_classes.py" "$build" --peers "$peers" \
  > "$work/op-classes.md"
echo "bench: where the masked softmax's time goes (from cache, two ablations)"
"${DIST_NUMPY_PYTHON:-/usr/bin/python3}" "$root/utils/bench/softmax_breakdown.py" "$build" \
  > "$work/softmax-breakdown.md"
echo "bench: reshard plans beside JAX/XLA's and DTensor's, priced in dist's model"
"$peers" "$root/utils/bench/peers/plan_peers.py" "$build" > "$work/plan-peers.md" 2>/dev/null
echo "bench: pipeline stages with microbatches"
python3 "$root/utils/bench/pipeline_microbatches.py" "$build" > "$work/pipeline2.md"
python3 "$root/utils/bench/pipeline_microbatches.py" "$build" --stages 4 --batch 256 \
  --microbatches 1,4 --reps 5 > "$work/pipeline4.md"
echo "bench: a Llama layer against torch eager and jax.jit (the peers' venv)"
"${DIST_NUMPY_PYTHON:-/usr/bin/python3}" "$root/utils/bench/llama_layer.py" "$build" \
  --peers "$peers" > "$work/llama-layer.md"
echo "bench: exported models through the front doors against torch eager and jax.jit"
PYTHONPATH="$build/python_packages" DIST_TOOLS_DIR="$bin" "$peers" \
  "$root/utils/bench/frontends.py" > "$work/frontends.md"
echo "bench: compile time of dist-lower-reshard"
python3 "$root/utils/bench/compile_time.py" "$build" --repeat $compile_repeat \
  > "$work/compile.md"
echo "bench: compiled reshards vs raw MPI collectives, 8 ranks"
"$bin/dist-mpirun" --timeout 900 -np 8 "$bin/dist-reshard-bench" --sizes "$sizes" \
  --reps $reps > "$work/reshard.md"
"$bin/dist-mpirun" --timeout 900 -np 8 "$bin/dist-reshard-bench" --sizes "$sizes" \
  --reps $reps --json > "$work/reshard.json"
echo "bench: point-to-point exchange vs hand-written MPI, 8 ranks"
"$bin/dist-mpirun" --timeout 900 -np 8 "$bin/dist-runtime-bench" \
  --ops transpose,handoff --dims "$dims" --reps $exchange_reps > "$work/exchange.md"

# The sanitized suite takes long and is reported, not gated on, here (see
# the Reliability section); its own build folder keeps the numbers above
# from sharing a machine with its build.
sanitize_log=- sanitize_seconds=0
if [ $sanitize = 1 ]; then
  echo "bench: the whole test suite under ASan+UBSan (utils/check.sh --sanitize)"
  sanitize_log="$work/sanitize.log"
  start=$SECONDS
  DIST_BUILD_DIR="$root/build-sanitize" "$root/utils/check.sh" --sanitize \
    >"$sanitize_log" 2>&1 || true
  sanitize_seconds=$((SECONDS - start))
fi
"$root/utils/bench/reliability.sh" "$sanitize_log" "$sanitize_seconds" \
  > "$work/reliability.md"

# Chart data.
python3 - "$work" <<'PY'
import json, sys, os
work = sys.argv[1]
planner = json.load(open(os.path.join(work, "planner.json")))
with open(os.path.join(work, "plantime.dat"), "w") as f:
    for r in planner["ranks"]:
        f.write(f'{r["mesh_rank"]} {r["optimal_median_us"]} {r["optimal_worst_us"]} {r["greedy_median_us"]}\n')
reshard = json.load(open(os.path.join(work, "reshard.json")))
ops = {}
for r in reshard["results"]:
    ops.setdefault(r["op"], []).append((r["bytes"] / 2**20, r["ratio"]))
with open(os.path.join(work, "ratio.dat"), "w") as f:
    for op, points in ops.items():
        f.write(f'# {op}\n')
        for mib, ratio in points:
            f.write(f"{mib} {ratio}\n")
        f.write("\n\n")
with open(os.path.join(work, "ratio.ops"), "w") as f:
    f.write(" ".join(ops))
PY

gnuplot <<GP
set terminal svg size 900,480 dynamic font "sans,11"
set output "$root/docs/img/plan-cost.svg"
set title "Plan cost on realistic reshards (lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "modelled cost (µs, log scale)"
set xtics rotate by -35 left font ",8"
set key top left
set bmargin 9
set rmargin 16
plot "$work/quality.dat" using 3:xtic(2) title "optimal", \
     "" using 4 title "greedy", "" using 5 title "lower bound"

set output "$root/docs/img/partition-cost.svg"
set title "Modelled communication of the chosen layouts (lower is better)"
set ylabel "modelled cost (µs, log scale)"
plot "$work/partition.dat" using (\$3+0.01):xtic(2) title "joint (dist-partition)", \
     "" using (\$4+0.01) title "per-op (DTensor-style)", \
     "" using (\$5+0.01) title "keep-larger (Shardy-style)"

set output "$root/docs/img/plan-time.svg"
set title "Planning time per reshard by mesh rank (3-D tensors)"
set style data linespoints
unset xtics
set xtics 1
set xlabel "mesh rank (axes)"
set ylabel "µs (log scale)"
set bmargin 4
plot "$work/plantime.dat" using 1:2 title "optimal median" lw 2, \
     "" using 1:3 title "optimal worst" lw 2, \
     "" using 1:4 title "greedy median" lw 2

set output "$root/docs/img/runtime-ratio.svg"
set title "Compiled reshard vs raw MPI collective, 8 ranks (higher is better)"
unset logscale y
set logscale x 2
set xlabel "message size (MiB)"
set ylabel "throughput ratio (MPI time / compiled time)"
set yrange [0:*]
set key bottom right
ops = system("cat $work/ratio.ops")
plot for [i=1:words(ops)] "$work/ratio.dat" index (i-1) using 1:2 \
       title word(ops, i) with linespoints lw 2, 0.9 title "target 0.9" dt 2 lc "gray"
GP

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n1)
cat > "$root/docs/benchmarks.md" <<MD
# Benchmarks

Generated by \`utils/bench.sh\` on $(date -u +%Y-%m-%d) on this machine: ${cpu:-unknown CPU},
$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB ($(uname -sr)). Rerun it to refresh every
number and chart on this page; nothing here is typed in by hand. With 8 MPI ranks on
$(nproc) cores the runtime numbers are oversubscribed and noisy (expect ±20% between runs):
they measure overhead relative to MPI on the same machine, not absolute bandwidth.

## Plan quality: optimal vs greedy vs lower bound

\`python3 utils/bench/plan_quality.py build\` — each case planned with
\`dist-plan --format json\`, default costs unless a topology is named
(\`examples/cluster.json\`: 4 nodes x 8 GPUs, the node axis at 25 GB/s).

![plan cost](img/plan-cost.svg)

$(cat "$work/quality.md")

## Point-to-point redistribute and cross-mesh hand-offs

\`python3 utils/bench/redistribute_gain.py build --cases $gain_cases\` — every case planned
twice with \`dist-plan\`: with every move (the default) and with \`--moves collective\`
(docs/point-to-point.md). *Wire bytes* sums each step's \`recv_bytes\` (the most one device
receives in it). The planner-speed table below is measured with redistribute on. The
interleaved-layout table compares each segmented reshard's plan with per-segment
collectives alone (\`--moves collective\`) and with the detour through a full replica
(the route a system without per-segment layouts takes; docs/segments.md).

$(cat "$work/redistribute.md")

## Partitioning: layouts chosen for the whole program

\`python3 utils/bench/partition_quality.py build\` — realistic global-view programs
partitioned by \`dist-partition\` with each chooser, default cost model. *joint* solves
for the whole program (docs/partitioning.md); *per-op* takes, op by op, the strategy
cheapest for the layouts its operands already have (what DTensor does at dispatch);
*keep-larger* keeps each op's largest operand where it is (Shardy's explicit-reshard
rule). The chart adds 0.01 µs to every bar so that free programs show on the log scale.

![partition cost](img/partition-cost.svg)

$(cat "$work/partition.md")

Partition + plan time (\`python3 utils/bench/partition_time.py build\`, the whole
\`dist-opt\` process):

$(cat "$work/partition-time.md")

## Exact layout choice and auto-sharding

\`python3 utils/bench/layout_choice.py build\` — \`dist-opt --dist-partition\` on realistic
Llama stacks with a device model (docs/partitioning.md, "The exact choice"), cold (empty
\`--cache-dir\`) and warm (the cost table the cold run wrote), the whole process; then
auto-sharding (\`dist.auto\`) of a 2-layer MLP for a sweep of token counts and memory
budgets, against the best of the classic hand layouts that fits; then a small MLP run on 8
MPI ranks under the auto plan and the hand layouts.

$(cat "$work/layout-choice.md")

$(cat "$root/docs/model-fidelity.md")

## Planner speed

\`build/bin/dist-plan-bench --summary --cases=$plan_cases\` — random 3-D tensors and random
layout pairs (partial values included) on meshes of rank 1 to 6, each plan timed
uncached (median of 5 runs). Targets: median ≤ 50 µs on 4-D meshes, worst ≤ 20 ms on 6-D.
The last columns compare the optimal plans' modelled cost with greedy's on the same cases.
Absolute times move with the machine's load; to compare a change with its base, run
\`utils/bench/plan_time_ab.sh BASE\`: both builds, interleaved runs, one table of ratios.

![plan time](img/plan-time.svg)

$(cat "$work/planner.md")

## Compile time

\`python3 utils/bench/compile_time.py build\` — \`dist-opt --dist-lower-reshard\` on a
generated module of 1000 reshards (TP/SP transitions, FSDP gathers, gradient
reduce-scatters, permutes; \`utils/bench/gen_reshard_module.py\`).

$(cat "$work/compile.md")

## Local compute: matrix products, fused code and compiling once

\`python3 utils/bench/local_compute.py build\` — the local matmul of a compiled program
through the runtime's GEMM and as loops against the BLAS itself, and dist-run's
whole-process time on a 16-layer model, compiled once and loaded by every rank
(docs/compiler.md, "Contractions"; docs/dist-run.md). Then each op class of a
Llama layer against the machine's limit, and the layer against the frameworks
users would run instead (docs/compiler.md, "Local compute").

$(cat "$work/local-compute.md")

$(cat "$work/op-classes.md")

$(cat "$work/softmax-breakdown.md")

$(cat "$work/llama-layer.md")

### Exported models: PyTorch and JAX programs through the front doors

\`PYTHONPATH=build/python_packages build/frontends-venv/bin/python utils/bench/frontends.py\`
— transformers models and a JAX language model with random weights, exported
by \`dist_mlir.frontends\` (docs/frontends.md), checked against the framework,
then timed beside it.

$(cat "$work/frontends.md")

$(cat "$root/docs/gpu-runs.md")

## Runtime: compiled reshards vs raw MPI

\`build/bin/dist-mpirun -np 8 build/bin/dist-reshard-bench --sizes $sizes --reps $reps\` —
each single-collective reshard compiled by \`dist-to-llvm\` and JIT-run, against the raw
MPI collective on the same buffers in the same run. Target: ratio ≥ 0.9.

![runtime ratio](img/runtime-ratio.svg)

$(cat "$work/reshard.md")

Reading the all-to-all rows: S(0)→S(1) must also transpose blocks — the
columns each destination needs are strided in the source rows — while the raw
\`MPI_Alltoall\` on the same buffers moves contiguous chunks and does not produce
the target layout (with \`dist-mpirun\`'s options Open MPI copies them through
its shared-memory fragments). The "MPI reshard" column is MPI producing the
*same* layout with a strided send datatype: the hand-written MPI program. The
compiled code calls \`distRtAllToAllStrided\` on its input and output buffers
directly. Both are runtime memory, which the MPI backend keeps in a heap the
other ranks of the node have mapped (docs/runtime.md), so each rank copies its
column blocks straight into the peers' outputs: one copy per element, with no
MPI transport in between. That is why it beats the hand-written strided MPI
program and keeps up with the raw collective, which does not transpose.
The all_gather_cols rows (a gather of column blocks, \`[{}, {"x"}]\` ->
\`[{}, {}]\`) are the same story for a gather: the raw \`MPI_Allgather\` leaves
the blocks stacked, "MPI reshard" receives them into their columns with a
strided recv type, and the compiled code calls \`distRtAllToAllStrided\` with
a send chunk stride of 0, so each rank writes its block straight into the
peers' outputs, with no stacked temporary to unpack afterwards (what the
compiled gather did before, docs/compiler.md).
The reduce_scatter and all_reduce rows compare with \`MPI_Reduce_scatter_block\`
and \`MPI_Allreduce\`. For a reduce-scatter of 128 KiB or more and an
all-reduce of 8 MiB or more the MPI backend does not call them: Open MPI's
algorithms allocate a temporary as large as the buffer on every call, and
above glibc's mmap threshold each call maps it anew and faults its pages in.
The backend instead sends the blocks in one \`MPI_Alltoall\` into scratch it
keeps, combines them with \`MPI_Reduce_local\`, and for an all-reduce then
all-gathers the reduced blocks (docs/runtime.md): the same bytes on the wire,
no allocation per call. Below 8 MiB, \`MPI_Allreduce\` was as fast (ratios
0.91-1.01 at 0.5-4 MiB), so the backend calls it there.
\`utils/bench/strided_alltoall_variants.cpp\` measures the ways we tried on the
same exchange (explicit pack + raw all-to-all, pipelined pack, MPI datatypes,
\`process_vm_writev\`, direct pulls and pushes through mapped memory).

## Runtime: the point-to-point exchange

\`build/bin/dist-mpirun -np 8 build/bin/dist-runtime-bench --ops transpose,handoff --dims $dims --reps $exchange_reps\` —
*transpose*: an N x N f32 tensor, rows split 8 ways, to columns split 8 ways, done by
\`distRtExchange\` with the planner's table, by a hand-written \`MPI_Alltoallv\` program
producing the same local buffers, and by the strided all-to-all collective. *handoff*:
rows over ranks 0-3 to columns over ranks 4-7 (a pipeline stage's hand-off), by the
exchange vs gather on rank 0, send to rank 4, scatter. Target: the exchange at least
0.9x as fast as the hand-written MPI program.

$(cat "$work/exchange.md")

## Pipeline stages with microbatches

\`python3 utils/bench/pipeline_microbatches.py build\` (2 stages) and \`--stages 4 --batch 256
--microbatches 1,4\` — a chain of stages, one rank each, run by \`dist-run --microbatches M\`
(semantics §3c) against the same program unpipelined (M = 1) and the ideal (S + M - 1) / M
stage times. Target (issue 46): within 20% of the ideal at M = 8.

$(cat "$work/pipeline2.md")

$(cat "$work/pipeline4.md")

Reading it: each rank runs only its own stage, so with as many ranks as
cores stage s computes microbatch m + 1 while stage s + 1 computes m. Each
microbatch's hand-off is a blocking exchange and its products are smaller,
which is what separates the measured time from the ideal as M grows. With
more ranks than cores (4 stages on 2 cores) the ranks that wait for a
hand-off poll for it on the cores the computing stages need, so pipelining
loses there: that row measures the oversubscription, not the schedule.

$(cat "$work/reliability.md")
MD
echo "bench: wrote docs/benchmarks.md and docs/img/*.svg"

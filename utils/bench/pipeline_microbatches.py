#!/usr/bin/env python3
"""Pipeline stages with microbatches against the unpipelined program (issue 46).

    python3 utils/bench/pipeline_microbatches.py BUILD [--stages 2] [--batch 512]
        [--dim 1024] [--reps 10] [--microbatches 1,2,4,8]

A chain of S stages, each on its own rank (a one-device mesh): stage s
computes tanh(h @ w_s) on a [batch, dim] f32 tensor and hands the result to
stage s + 1 (a cross-mesh reshard). dist-run --microbatches M runs it as a
pipeline (semantics §3c); M = 1 is the program as written, where each stage
waits for the whole batch. The ideal step time of M microbatches is
(S + M - 1) / M stage times, a stage time being the unpipelined step's
share of one stage (its time / S). Prints markdown; says how many ranks
share how many cores (ranks that wait poll their messages, so more ranks
than cores measure the oversubscription, not the schedule).
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import dist_run_seconds  # noqa: E402


def program(stages, batch, dim):
    tensor = lambda s: f"tensor<{batch}x{dim}xf32, #dist.sharding<@s{s}, [{{}}, {{}}]>>"
    weight = lambda s: f"tensor<{dim}x{dim}xf32, #dist.sharding<@s{s}, [{{}}, {{}}]>>"
    lines = [f'dist.mesh @s{s} = <["x"=1], devices = [{s}]>' for s in range(stages)]
    args = [f"%x: {tensor(0)} {{dist.batch_dim = 0 : i64}}"]
    args += [f"%w{s}: {weight(s)}" for s in range(stages)]
    lines.append(f"func.func @stages({', '.join(args)}) -> {tensor(stages - 1)} {{")
    lines.append("  %zero = arith.constant 0.0 : f32")
    cur = "%x"
    for s in range(stages):
        if s:
            lines.append(f"  %in{s} = dist.reshard {cur} : {tensor(s - 1)} -> {tensor(s)}")
            cur = f"%in{s}"
        t = tensor(s)
        lines += [f"  %e{s} = tensor.empty() : {t}",
                  f"  %f{s} = linalg.fill ins(%zero : f32) outs(%e{s} : {t}) -> {t}",
                  f"  %m{s} = linalg.matmul ins({cur}, %w{s} : {t}, {weight(s)}) "
                  f"outs(%f{s} : {t}) -> {t}",
                  f"  %h{s} = math.tanh %m{s} : {t}"]
        cur = f"%h{s}"
    lines += [f"  return {cur} : {tensor(stages - 1)}", "}"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--stages", type=int, default=2)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--microbatches", default="1,2,4,8")
    a = ap.parse_args()
    counts = [int(m) for m in a.microbatches.split(",")]
    if counts[0] != 1:
        sys.exit("pipeline_microbatches: the first --microbatches must be 1 (the baseline)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stages.mlir")
        with open(path, "w") as f:
            f.write(program(a.stages, a.batch, a.dim))
        times = {m: dist_run_seconds(a.build, path, a.reps, ranks=a.stages,
                                     flags=["--microbatches", str(m)],
                                     who="pipeline_microbatches")
                 for m in counts}
    base = times[1]
    stage = base / a.stages
    cores = os.cpu_count()
    print(f"{a.stages} stages on {a.stages} ranks ({cores} cores), each tanh(h @ w) on "
          f"[{a.batch}, {a.dim}] f32; median per call of {a.reps} calls.\n")
    print("| microbatches | ms per call | vs unpipelined | ideal (S + M - 1) / M stage times | "
          "measured / ideal |")
    print("|---:|---:|---:|---:|---:|")
    for m in counts:
        ideal = stage * (a.stages + m - 1) / m
        print(f"| {m} | {times[m] * 1e3:.2f} | {base / times[m]:.2f}x | {ideal * 1e3:.2f} | "
              f"{times[m] / ideal:.2f} |")


if __name__ == "__main__":
    main()

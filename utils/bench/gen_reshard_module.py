#!/usr/bin/env python3
"""Generates a module with many dist.reshard ops on a 3-D mesh, for the
compile-time benchmark of dist-lower-reshard.

The mix follows what a transformer stack with data, tensor and sequence
parallelism asks for (dp=2 x pp... here dp x tp x sp-style axes "dp", "tp",
"cp"): tensor/sequence-parallel transitions of activations, FSDP gathers of
weights, reduce-scatters of gradients, and layout permutes. Shapes vary per
layer (several model widths) so that the planner sees many distinct
requests, like a real model with differently sized layers does.

Usage: gen_reshard_module.py [--reshards N] [--seed S] > module.mlir
"""
import argparse
import random

AXES = ("dp", "tp", "cp")


def sharding(dims, partial=None):
    body = ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims)
    text = f"#dist.sharding<@mesh, [{body}]"
    if partial:
        text += ", partial = sum {" + ", ".join(f'"{a}"' for a in partial) + "}"
    return text + ">"


# (source dims, source partial, target dims, target partial) for a 2-D
# [sequence, hidden] activation or a [rows, cols] weight.
TRANSITIONS = [
    # Sequence parallel -> tensor parallel region (all-gather the sequence).
    ([["dp", "tp"], []], None, [["dp"], []], None),
    # Row-parallel output (partial over tp) -> sequence sharded (reduce-scatter).
    ([["dp"], []], ["tp"], [["dp", "tp"], []], None),
    # Row-parallel output -> replicated over tp (all-reduce).
    ([["dp"], []], ["tp"], [["dp"], []], None),
    # Context parallel: sequence over cp -> heads over cp (all-to-all).
    ([["dp", "cp"], ["tp"]], None, [["dp"], ["tp", "cp"]], None),
    ([["dp"], ["tp", "cp"]], None, [["dp", "cp"], ["tp"]], None),
    # FSDP: fully sharded weight -> gathered over dp (keep tp).
    ([["dp", "tp"], []], None, [["tp"], []], None),
    ([[], ["dp", "tp"]], None, [[], ["tp"]], None),
    # Gradient reduce-scatter back to the FSDP layout.
    ([["tp"], []], ["dp"], [["tp", "dp"], []], None),
    # Layout permutes (transposes of the split).
    ([["dp"], ["tp"]], None, [["tp"], ["dp"]], None),
    ([["tp", "cp"], []], None, [["cp", "tp"], []], None),
    # Expert-parallel style: rows over dp*tp -> columns.
    ([["dp", "tp"], []], None, [[], ["dp", "tp"]], None),
    # Fully replicate for a loss computation.
    ([["dp", "cp"], ["tp"]], None, [[], []], None),
]

WIDTHS = [1024, 2048, 4096, 5120, 8192]
SEQS = [2048, 4096, 8192]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reshards", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print('dist.mesh @mesh = <["dp"=4, "tp"=4, "cp"=2]>')
    print()
    per_func = 50
    count = 0
    func = 0
    while count < args.reshards:
        n = min(per_func, args.reshards - count)
        ops = []
        params = []
        for i in range(n):
            src, srcp, dst, dstp = rng.choice(TRANSITIONS)
            rows = rng.choice(SEQS)
            cols = rng.choice(WIDTHS)
            dtype = rng.choice(["bf16", "bf16", "f32"])
            st = f"tensor<{rows}x{cols}x{dtype}, {sharding(src, srcp)}>"
            dt = f"tensor<{rows}x{cols}x{dtype}, {sharding(dst, dstp)}>"
            params.append(f"%a{i}: {st}")
            ops.append(f"  %r{i} = dist.reshard %a{i} : {st} -> {dt}")
        print(f"func.func @layer{func}({', '.join(params)}) {{")
        print("\n".join(ops))
        print("  return")
        print("}")
        count += n
        func += 1


if __name__ == "__main__":
    main()

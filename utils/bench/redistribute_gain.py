#!/usr/bin/env python3
"""What point-to-point redistribute steps buy: plans with every move vs
collectives only (`dist-plan --moves collective`).

Part 1 is the plan-quality suite (utils/bench/plan_quality.py's cases).
Part 2 is random 2-D/3-D tensors and layouts on meshes of rank 1 to 4, with
partial sources one time in six. Part 3 is cross-mesh pipeline hand-offs.
For each case it prints the cost with and without redistribute, the gain,
the wire bytes of the busiest device summed over the steps (recv_bytes), and
the plan's cost over its reported lower bound.

Usage: redistribute_gain.py BUILD_DIR [--cases N] [--seed S]
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from plan_quality import CASES  # noqa: E402

HANDOFFS = [
    ("tp=4 -> dp=2 x tp=2, rows -> columns", '<["tp"=4], devices = [0, 1, 2, 3]>',
     '<["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>', "8192x4096xbf16",
     '[{"tp"}, {}]', '[{}, {"tp"}]', []),
    ("tp=4 -> tp=4 on the next node, same layout", '<["tp"=4], devices = [0, 1, 2, 3]>',
     '<["tp"=4], devices = [4, 5, 6, 7]>', "8192x4096xbf16",
     '[{"tp"}, {}]', '[{"tp"}, {}]', []),
    ("tp=8 partial -> dp=2 x tp=4 (reduce first)", '<["tp"=8]>',
     '<["dp"=2, "tp"=4], devices = [8, 9, 10, 11, 12, 13, 14, 15]>', "8192x8192xbf16",
     '[{}, {}], partial = sum {"tp"}', '[{}, {"tp"}]', []),
    ("tp=2 -> dp=4 replicas, slow transfer", '<["tp"=2]>',
     '<["dp"=4], devices = [2, 3, 4, 5]>', "4096x4096xf32",
     '[{"tp"}, {}]', '[{}, {}]', ["--topology", os.path.join(HERE, "..", "..", "examples",
                                                           "pipeline_topology.json")]),
]


SEGMENTED = [
    ("Llama-70B fused QKV, contiguous -> per segment, tp=8", '<["tp"=8]>',
     "10240x8192xbf16", '[{"tp"}, {}]', '[{"tp"} segments [8192, 1024, 1024], {}]'),
    ("fused QKV saved at tp=8, loaded at tp=4 (factored mesh)", '<["a"=2, "tp"=4]>',
     "10240x8192xbf16", '[{"a", "tp"} segments [8192, 1024, 1024], {}]',
     '[{"tp"} segments [8192, 1024, 1024], {}]'),
    ("SwiGLU gate/up, contiguous -> per segment, tp=8", '<["tp"=8]>',
     "57344x8192xbf16", '[{"tp"}, {}]', '[{"tp"} segments [28672, 28672], {}]'),
    ("GQA [32, 8, 8] heads x 128, per segment -> gathered, tp=4", '<["tp"=4]>',
     "6144x4096xbf16", '[{"tp"} segments [4096, 1024, 1024], {}]', '[{}, {}]'),
    ("row-parallel output (partial) -> fused QKV per segment, tp=8", '<["tp"=8]>',
     "10240x4096xbf16", '[{}, {}], partial = sum {"tp"}',
     '[{"tp"} segments [8192, 1024, 1024], {}]'),
    ("fused QKV at tp=8 -> tp=4, minor axis dropped", '<["tp"=4, "b"=2]>',
     "10240x8192xbf16", '[{"tp", "b"} segments [8192, 1024, 1024], {}]',
     '[{"tp"} segments [8192, 1024, 1024], {}]'),
    ("SwiGLU gate/up per segment -> columns, tp=8", '<["tp"=8]>',
     "57344x8192xbf16", '[{"tp"} segments [28672, 28672], {}]', '[{}, {"tp"}]'),
    ("fused QKV per segment, dp=2 x tp=4 partial over dp (gradients)",
     '<["dp"=2, "tp"=4]>', "10240x8192xbf16",
     '[{"tp"} segments [8192, 1024, 1024], {}], partial = sum {"dp"}',
     '[{"tp"} segments [8192, 1024, 1024], {}]'),
]


def plan(build, mesh, shape, src, dst, moves, extra=()):
    cmd = [os.path.join(build, "bin", "dist-plan"), "--mesh", mesh, "--shape", shape,
           "--from", src, "--to", dst, "--moves", moves, "--format", "json", *extra]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def wire(result):
    return sum(step["recv_bytes"] for step in result["steps"])


def ops(result):
    return " → ".join(s["op"] + ("(" + ",".join(s["axes"]) + ")" if s["axes"] else "")
                      for s in result["steps"])


def random_layout(rng, names, rank, partial_odds):
    dims = [[] for _ in range(rank)]
    partial = []
    for name in names:
        choice = rng.randrange(rank + 2)
        if choice < rank:
            dims[choice].append(name)
        elif choice == rank and rng.randrange(partial_odds) == 0:
            partial.append(name)
    text = "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims) + "]"
    if partial:
        text += ", partial = sum {" + ", ".join(f'"{a}"' for a in partial) + "}"
    return text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()

    print("Realistic reshards (the plan-quality suite):\n")
    print("| case | collectives only (µs) | with redistribute (µs) | gain | wire bytes, collectives / with | cost / lower bound, with | plan with redistribute |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, mesh, shape, src, dst, extra in CASES:
        coll = plan(args.build, mesh, shape, src, dst, "collective", extra)
        full = plan(args.build, mesh, shape, src, dst, "all", extra)
        gain = coll["cost"] / full["cost"] if full["cost"] > 0 else 1.0
        bound = full["cost"] / full["lower_bound"] if full["lower_bound"] > 0 else 1.0
        print(f"| {name} | {coll['cost'] * 1e6:.1f} | {full['cost'] * 1e6:.1f} | {gain:.2f}x | "
              f"{wire(coll)} / {wire(full)} | {bound:.2f} | {ops(full)} |")

    print("\nRandom cases (tensors of rank 2-3 with uneven extents, random layouts, "
          f"{args.cases} per mesh rank, seed {args.seed}):\n")
    print("| mesh | cases | cheaper with redistribute | mean gain on those | best gain | geomean cost / lower bound: collectives, with |")
    print("|---|---:|---:|---:|---:|---:|")
    rng = random.Random(args.seed)
    meshes = ['<["a"=8]>', '<["a"=2, "b"=4]>', '<["a"=2, "b"=2, "c"=4]>',
              '<["a"=2, "b"=2, "c"=2, "d"=2]>']
    for mesh in meshes:
        names = [part.split("=")[0].strip('<["') for part in mesh.strip("<>[]").split(", ")]
        cheaper, gains, best = 0, [], 1.0
        log_coll = log_full = 0.0
        counted = 0
        for _ in range(args.cases):
            rank = rng.choice([2, 3])
            shape = "x".join(str(rng.choice([96, 100, 128, 1000, 1024, 4096]))
                             for _ in range(rank)) + "xf32"
            src = random_layout(rng, names, rank, 6)
            dst = random_layout(rng, names, rank, 12)
            if src == dst:
                continue
            coll = plan(args.build, mesh, shape, src, dst, "collective")
            full = plan(args.build, mesh, shape, src, dst, "all")
            if full["cost"] < coll["cost"] * (1 - 1e-9):
                cheaper += 1
                if full["cost"] > 0:
                    g = coll["cost"] / full["cost"]
                    gains.append(g)
                    best = max(best, g)
            if full["lower_bound"] > 0:
                log_coll += math.log(coll["cost"] / full["lower_bound"])
                log_full += math.log(full["cost"] / full["lower_bound"])
                counted += 1
        mean = sum(gains) / len(gains) if gains else 1.0
        gc = math.exp(log_coll / counted) if counted else 1.0
        gf = math.exp(log_full / counted) if counted else 1.0
        print(f"| `{mesh}` | {args.cases} | {cheaper} | {mean:.2f}x | {best:.2f}x | {gc:.2f}, {gf:.2f} |")

    print("\nInterleaved (segmented) layouts ([semantics §2](semantics.md#2-the-layout) "
          "segments) vs the detour through a "
          "full replica (gather everything, then keep each rank's rows locally):\n")
    print("| reshard | mesh | tensor | plan (µs) | collectives only (µs) | detour (µs) "
          "| detour / plan | plan |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for name, mesh, shape, src, dst in SEGMENTED:
        full = plan(args.build, mesh, shape, src, dst, "all")
        # Per-segment collectives alone (`--moves collective`).
        collective = plan(args.build, mesh, shape, src, dst, "collective")
        # The detour: to the replicated layout (keeping nothing partial),
        # then a local re-split, which costs nothing.
        detour = plan(args.build, mesh, shape, src, "[" + ", ".join(
            "{}" for _ in shape.split("x")[:-1]) + "]", "all")
        ratio = detour["cost"] / full["cost"] if full["cost"] > 0 else 1.0
        print(f"| {name} | `{mesh}` | {shape} | {full['cost'] * 1e6:.1f} | "
              f"{collective['cost'] * 1e6:.1f} | "
              f"{detour['cost'] * 1e6:.1f} | {ratio:.2f}x | {ops(full)} |")

    print("\nPipeline hand-offs (cross-mesh, "
          "[semantics §3a](semantics.md#3a-cross-mesh-reshards-pipeline-stages); "
          "`dist-plan --to-mesh`):\n")
    print("| hand-off | tensor | cost (µs) | lower bound (µs) | plan |")
    print("|---|---|---:|---:|---|")
    for name, src_mesh, dst_mesh, shape, src, dst, extra in HANDOFFS:
        full = plan(args.build, src_mesh, shape, src, dst, "all",
                    ["--to-mesh", dst_mesh, *extra])
        print(f"| {name} | {shape} | {full['cost'] * 1e6:.1f} | {full['lower_bound'] * 1e6:.1f} | "
              f"{ops(full)} |")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Plan quality: optimal vs greedy vs lower bound on realistic reshards.

Runs `dist-plan --format json` for every case with both strategies and prints
a markdown table; --data writes a gnuplot data file for the chart.

Usage: plan_quality.py BUILD_DIR [--data FILE] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "..", "examples", "cluster.json")

# name, mesh, shape, from, to, extra dist-plan arguments
CASES = [
    ("Megatron SP->TP gather", '<["dp"=2, "tp"=4]>', "4096x1024xbf16",
     '[{"dp", "tp"}, {}]', '[{"dp"}, {}]', []),
    ("Megatron TP->SP reduce-scatter", '<["dp"=2, "tp"=4]>', "4096x1024xbf16",
     '[{"dp"}, {}], partial = sum {"tp"}', '[{"dp", "tp"}, {}]', []),
    ("TP all-reduce (no SP)", '<["dp"=2, "tp"=4]>', "4096x1024xbf16",
     '[{"dp"}, {}], partial = sum {"tp"}', '[{"dp"}, {}]', []),
    ("FSDP weight gather, 3-D mesh", '<["dp"=4, "tp"=2, "cp"=2]>', "8192x8192xbf16",
     '[{"dp", "tp"}, {}]', '[{"tp"}, {}]', []),
    ("FSDP gradient reduce-scatter", '<["dp"=4, "tp"=2, "cp"=2]>', "8192x8192xf32",
     '[{"tp"}, {}], partial = sum {"dp", "cp"}', '[{"tp", "dp"}, {}]', []),
    ("context parallel seq->heads", '<["dp"=2, "tp"=2, "cp"=4]>', "8192x4096xbf16",
     '[{"dp", "cp"}, {"tp"}]', '[{"dp"}, {"tp", "cp"}]', []),
    ("2-D layout transpose 2x4", '<["x"=2, "y"=4]>', "1024x1024xf32",
     '[{"x"}, {"y"}]', '[{"y"}, {"x"}]', []),
    ("8x2 column->row shards", '<["x"=8, "y"=2]>', "4096x4096xf32",
     '[{}, {"y"}]', '[{"x", "y"}, {}]', []),
    ("4x2 partial(both)->columns", '<["x"=4, "y"=2]>', "4096x4096xf32",
     '[{}, {}], partial = sum {"x", "y"}', '[{}, {"x"}]', []),
    ("2x2x2 rotate three dims", '<["x"=2, "y"=2, "z"=2]>', "256x256x256xf32",
     '[{"x"}, {"y"}, {"z"}]', '[{"y"}, {"z"}, {"x"}]', []),
    ("4-D mesh swap dim pairs", '<["a"=2, "b"=2, "c"=2, "d"=2]>', "4096x4096xbf16",
     '[{"a", "b"}, {"c", "d"}]', '[{"c", "d"}, {"a", "b"}]', []),
    ("uneven 1000 rows on 4x2", '<["x"=4, "y"=2]>', "1000x1000xf32",
     '[{"x", "y"}, {}]', '[{"y"}, {"x"}]', []),
    ("4 nodes x 8 GPUs: gradient sync", '<["node"=4, "gpu"=8]>', "8192x8192xbf16",
     '[{}, {}], partial = sum {"node", "gpu"}', '[{}, {"node"}]',
     ["--topology", CLUSTER]),
    ("4 nodes x 8 GPUs: expert all-to-all", '<["node"=4, "gpu"=8]>', "16384x4096xbf16",
     '[{"node", "gpu"}, {}]', '[{}, {"node", "gpu"}]', ["--topology", CLUSTER]),
    ("4 nodes x 8 GPUs: TP across nodes->within", '<["node"=4, "gpu"=8]>', "8192x8192xbf16",
     '[{"gpu", "node"}, {}]', '[{"node", "gpu"}, {}]', ["--topology", CLUSTER]),
]


def plan(build, case, strategy):
    name, mesh, shape, src, dst, extra = case
    cmd = [os.path.join(build, "bin", "dist-plan"), "--mesh", mesh, "--shape", shape,
           "--from", src, "--to", dst, "--strategy", strategy, "--format", "json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def steps_text(result):
    return " → ".join(s["op"] + "(" + ",".join(s["axes"]) + ")" for s in result["steps"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--data")
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for case in CASES:
        opt = plan(args.build, case, "optimal")
        greedy = plan(args.build, case, "greedy")
        rows.append((case, opt, greedy))

    print("| case | mesh | optimal (µs) | greedy (µs) | lower bound (µs) | greedy / optimal | optimal plan |")
    print("|---|---|---:|---:|---:|---:|---|")
    for case, opt, greedy in rows:
        ratio = greedy["cost"] / opt["cost"] if opt["cost"] > 0 else 1.0
        print(f"| {case[0]} | `{case[1]}` | {opt['cost'] * 1e6:.1f} | {greedy['cost'] * 1e6:.1f} | "
              f"{opt['lower_bound'] * 1e6:.1f} | {ratio:.2f} | {steps_text(opt)} |")
    worse = sum(1 for _, o, g in rows if g["cost"] > o["cost"] * (1 + 1e-9))
    total_o = sum(o["cost"] for _, o, _ in rows)
    total_g = sum(g["cost"] for _, _, g in rows)
    print(f"\nGreedy is worse on {worse} of {len(rows)} cases; summed over the suite it costs "
          f"{total_g / total_o:.2f}x the optimal plans. Optimal never loses (it is exact).")
    if args.data:
        with open(args.data, "w") as f:
            f.write("# index name optimal_us greedy_us lower_bound_us\n")
            for i, (case, opt, greedy) in enumerate(rows):
                f.write(f'{i} "{case[0]}" {opt["cost"] * 1e6} {greedy["cost"] * 1e6} '
                        f'{opt["lower_bound"] * 1e6}\n')
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"case": c[0], "optimal": o, "greedy": g} for c, o, g in rows], f, indent=1)


if __name__ == "__main__":
    sys.exit(main())

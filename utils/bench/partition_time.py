#!/usr/bin/env python3
"""Partition + plan time of a 48-layer transformer module.

    partition_time.py BUILD [--layers 48] [--repeat 5]

Generates the module with gen_transformer.py (TP+SP on tp=8, seq 2048,
hidden 4096, 32 heads, ffn 16384) and times `dist-opt --dist-partition
--dist-lower-reshard` (the whole process, parsing and printing included):
*cold* with an empty persistent plan cache, *warm* with the cache the cold
run filled (a second compilation of the same model). Prints a Markdown table
with the medians. Targets: cold <= 1 s, warm <= 0.3 s.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_transformer  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    dist_opt = os.path.join(a.build, "bin", "dist-opt")
    text = gen_transformer.generate(argparse.Namespace(
        layers=a.layers, seq=2048, hidden=4096, heads=32, ffn=16384,
        mesh='<["tp"=8]>', axis="tp", expect=False))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.mlir")
        with open(path, "w") as f:
            f.write(text)
        cache = os.path.join(tmp, "cache")

        def compile_once():
            start = time.perf_counter()
            out = subprocess.run(
                [dist_opt, path, f"--dist-partition=cache-dir={cache}",
                 f"--dist-lower-reshard=cache-dir={cache}", "-dist-remarks",
                 "-mlir-print-op-on-diagnostic=false", "-o", os.devnull],
                capture_output=True, text=True, timeout=600)
            elapsed = time.perf_counter() - start
            if out.returncode != 0:
                sys.exit(f"partition_time: dist-opt failed: {out.stderr}")
            return elapsed, out.stderr

        cold, warm = [], []
        summary = ""
        for _ in range(a.repeat):
            shutil.rmtree(cache, ignore_errors=True)
            seconds, _ = compile_once()
            cold.append(seconds)
            seconds, summary = compile_once()
            warm.append(seconds)
    ops = next((l.split("remark: ")[1] for l in summary.splitlines()
                if "dist-partition:" in l and "ops partitioned" in l), "?")
    lowered = next((l.split("remark: ")[1] for l in summary.splitlines()
                    if "dist-lower-reshard:" in l), "?")
    print("| module | cold (median) | warm (median) | target |")
    print("|---|---|---|---|")
    print(f"| {a.layers}-layer transformer, {len(text.splitlines())} lines of IR | "
          f"{statistics.median(cold):.3f} s | {statistics.median(warm):.3f} s | "
          f"cold <= 1 s, warm <= 0.3 s |")
    print()
    print(f"Summary remarks of the warm run: `{ops}`; `{lowered}`.")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Compile-time benchmark of dist-lower-reshard: wall time of `dist-opt
--dist-lower-reshard` on a generated module of N reshards (3-D mesh), with a
cold and with a warm plan-cache directory. Prints a markdown section.

Usage: compile_time.py BUILD_DIR [--reshards 1000] [--repeat 7] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--reshards", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json")
    args = parser.parse_args()
    dist_opt = os.path.join(args.build, "bin", "dist-opt")
    work = tempfile.mkdtemp(prefix="dist-compile-bench-")
    try:
        module = os.path.join(work, "module.mlir")
        with open(module, "w") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "gen_reshard_module.py"),
                            "--reshards", str(args.reshards)], check=True, stdout=f)
        cache = os.path.join(work, "cache")
        base = [dist_opt, module, "-o", os.devnull]
        lower = base + [f"--dist-lower-reshard=cache-dir={cache}"]
        parse_only, cold, warm, memory = [], [], [], []
        for _ in range(args.repeat):
            parse_only.append(timed(base))
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed(lower))
            warm.append(timed(lower))
            memory.append(timed(base + ["--dist-lower-reshard"]))
        entries = len([n for n in os.listdir(cache) if n.endswith(".plan")])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    rows = [
        ("parse + print only (no pass)", parse_only),
        ("cold cache directory", cold),
        ("warm cache directory", warm),
        ("no cache directory (memory only)", memory),
    ]
    print(f"{args.reshards} reshards on a 4x4x2 mesh (`dp`, `tp`, `cp`), "
          f"{entries} distinct plan requests; median and max of {args.repeat} runs.\n")
    print("| dist-opt run | median (s) | max (s) | target |")
    print("|---|---|---|---|")
    targets = {"cold cache directory": "<= 1.0", "warm cache directory": "<= 0.3"}
    for name, values in rows:
        print(f"| {name} | {med(values):.3f} | {max(values):.3f} | {targets.get(name, '')} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({name: {"median_s": med(v), "max_s": max(v)} for name, v in rows}
                      | {"reshards": args.reshards, "distinct_requests": entries}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A Llama decoder layer compiled by dist against torch eager and jax.jit.

    python3 utils/bench/llama_layer.py BUILD [--peers PYTHON] [--reps 7]

The layer of issue 43 (utils/e2e/gen_llama.py --sp --layers 1 --seq 512
--hidden 1024 --heads 16 --kv-heads 4 --head-dim 64 --ffn 2816, f32) run by
dist-run on one rank (a mesh of one device) and on two (tp = 2, Megatron
with sequence parallelism), the median per call of --reps calls on the
slowest rank; and the same layer in torch eager and jax.jit on the same
machine in the same run (utils/bench/peers/llama_layer_peers.py in the
peers' virtual environment: utils/bench/peers/setup.sh creates it, --peers
names its python; without one the peers' rows are left out).

Targets: one rank no slower than torch eager on the same cores; tp = 2 on
two ranks at most 0.6x the one-rank time. dist's results on these shapes
are checked against NumPy by the e2e suite (test/e2e/llama); the peers check
theirs against the same NumPy reference before timing. Prints markdown.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from benchutil import dist_run_seconds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPE = {"seq": 512, "hidden": 1024, "heads": 16, "kv-heads": 4, "head-dim": 64, "ffn": 2816}


def layer_program(path, tp):
    args = [sys.executable, os.path.join(ROOT, "utils/e2e/gen_llama.py"), "--sp",
            "--layers", "1", "--mesh", f'<["tp"={tp}]>', "-o", path]
    for flag, value in SHAPE.items():
        args += [f"--{flag}", str(value)]
    subprocess.run(args, check=True)


def peers(python, reps):
    script = os.path.join(ROOT, "utils/bench/peers/llama_layer_peers.py")
    cmd = [python, script, "--reps", str(reps)]
    for flag, value in SHAPE.items():
        cmd += [f"--{flag}", str(value)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"llama_layer: the peers failed:\n{p.stdout}{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--peers", help="the python of utils/bench/peers/setup.sh")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one, two = os.path.join(tmp, "tp1.mlir"), os.path.join(tmp, "tp2.mlir")
        layer_program(one, 1)
        layer_program(two, 2)
        run = lambda path, ranks, reps, flags=(): dist_run_seconds(
            a.build, path, reps, ranks, flags, who="llama_layer")
        rank1 = run(one, 1, a.reps)
        rank1_loops = run(one, 1, 2, ["--compute", "loops"])
        tp2 = run(two, 2, a.reps)
        # One rank on one core: what each of the two tp ranks has.
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        rank1_core = run(one, 1, a.reps)
        del os.environ["OPENBLAS_NUM_THREADS"]
    peer = peers(a.peers, a.reps) if a.peers else None

    shape = " ".join(f"--{k} {v}" for k, v in SHAPE.items())
    print("### A Llama decoder layer against torch and JAX")
    print()
    print(f"`python3 utils/bench/llama_layer.py build --peers $(utils/bench/peers/setup.sh)` "
          f"— one layer (`utils/e2e/gen_llama.py --sp --layers 1 {shape}`, f32), "
          f"median per call of {a.reps} calls after a warm-up, on this machine "
          f"({os.cpu_count()} cores) in one run. dist-run: the slowest rank; one rank "
          "gets every core for its BLAS, two ranks one each. Targets: one rank no "
          "slower than torch eager on the same cores; tp = 2 at most 0.6x one rank.")
    print()
    print("| run | ms per call | vs dist, 1 rank |")
    print("|---|---:|---:|")
    row = lambda name, s: print(f"| {name} | {s * 1e3:.1f} | {s / rank1:.2f}x |")
    row("dist, 1 rank (GEMM calls, fused vector code)", rank1)
    row("dist, 1 rank, `--compute loops` (GEMM calls, the rest as scalar loops)", rank1_loops)
    row("dist, 1 rank on one core (`OPENBLAS_NUM_THREADS=1`)", rank1_core)
    row("dist, tp = 2 on 2 ranks (a core each)", tp2)
    if peer:
        cores = peer["cores"]
        row(f"torch {peer['torch_version']} eager, {cores} threads", peer[f"torch_eager_{cores}t"])
        row(f"torch eager, 1 thread", peer["torch_eager_1t"])
        row(f"torch eager, `scaled_dot_product_attention`, {cores} threads",
            peer[f"torch_sdpa_{cores}t"])
        row(f"jax {peer['jax_version']} `jax.jit` (XLA CPU)", peer["jax_jit"])
    print()
    if peer:
        eager = peer[f"torch_eager_{peer['cores']}t"]
        print(f"dist on one rank: {eager / rank1:.2f}x torch eager's speed, "
              f"{peer['jax_jit'] / rank1:.2f}x jax.jit's; tp = 2: {tp2 / rank1:.2f}x "
              f"the one-rank time, {tp2 / rank1_core:.2f}x that of one rank on one core.")
        print()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Local compute of compiled programs: matrix products and compile time.

    python3 utils/bench/local_compute.py BUILD [--sizes 256,512,1024,2048]
        [--loops-up-to 1024] [--reps 5]

Table 1, the local matmul: an N x N x N f32 product on one rank
(dist-run --np 1 --reps R, the median per call), compiled with
--contractions runtime (the runtime's GEMM: OpenBLAS's sgemm through
distRtGemm) and --contractions loops (the loops linalg lowers to,
vectorised by LLVM at -O2), against the BLAS's own cblas_sgemm on the same
sizes, called directly (ctypes) from the library the runtime links. Target
(issue 25): the compiled matmul reaches >= 50% of the BLAS's throughput.

Table 2, compile once: a 16-layer toy transformer
(utils/bench/gen_transformer.py --layers 16 --seq 16 --hidden 32 --heads 4
--ffn 64, tp = 4) run on 4 ranks at --opt-level 0, 2 and 3, the whole
dist-run process (median of 3). Target: <= 10 s at the default level.

Needs a Python with NumPy (Debian's /usr/bin/python3). Prints markdown.
"""
import argparse
import ctypes
import ctypes.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchutil import blas_library

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def matmul_program(n):
    t = f'tensor<{n}x{n}xf32, #dist.sharding<@m, [{{}}, {{}}]>>'
    return f'''dist.mesh @m = <["x"=1]>
func.func @mm(%a: {t}, %b: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %c = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %r = linalg.matmul ins(%a, %b : {t}, {t}) outs(%c : {t}) -> {t}
  return %r : {t}
}}
'''


PER_CALL = re.compile(r"per call: median ([0-9.]+) ms, min ([0-9.]+) ms")


def compiled_seconds(build, path, contractions, reps):
    p = subprocess.run([os.path.join(build, "bin", "dist-run"), "--np", "1", path,
                        "--contractions", contractions, "--reps", str(reps),
                        "--input", "random:1"],
                       capture_output=True, text=True, timeout=3600)
    m = PER_CALL.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"local_compute: dist-run failed ({contractions}):\n{p.stdout}{p.stderr}")
    return float(m.group(1)) / 1e3


def blas_seconds(lib, n, reps):
    blas = ctypes.CDLL(lib)
    blas.cblas_sgemm.restype = None
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    ptr = lambda x: x.ctypes.data_as(ctypes.c_void_p)
    args = (101, 111, 111, n, n, n, ctypes.c_float(1.0), ptr(a), n, ptr(b), n,
            ctypes.c_float(1.0), ptr(c), n)  # row-major, no transposes
    blas.cblas_sgemm(*args)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        blas.cblas_sgemm(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def gflops(n, seconds):
    return 2.0 * n ** 3 / seconds / 1e9


def local_matmul(a, tmp):
    lib = blas_library(a.build)
    print("### The local matmul")
    print()
    # The command as a reader types it from the source tree, whatever
    # build folder this run was given.
    print("`python3 utils/bench/local_compute.py build` — an N x N x N f32 matmul on one "
          "rank, compiled by dist-run with `--contractions runtime` (distRtGemm: the "
          "runtime's BLAS) and `--contractions loops` (linalg's loops, -O2), median of "
          f"{a.reps} calls after a warm-up, against `cblas_sgemm` of the same library "
          f"called directly ({os.path.basename(lib) if lib else 'no BLAS linked'}). "
          "Target: >= 50% of the BLAS.")
    print()
    print("| N | BLAS's own sgemm | compiled, runtime GEMM | of BLAS | compiled, loops | of BLAS |")
    print("|---|---|---|---|---|---|")
    worst = None
    for n in a.sizes:
        path = os.path.join(tmp, f"mm{n}.mlir")
        with open(path, "w") as f:
            f.write(matmul_program(n))
        base = blas_seconds(lib, n, a.reps) if lib else None
        runtime = compiled_seconds(a.build, path, "runtime", a.reps)
        loops = compiled_seconds(a.build, path, "loops", a.reps) if n <= a.loops_up_to else None
        cell = lambda s: f"{gflops(n, s):.1f} GFLOP/s ({s * 1e3:.2f} ms)"
        share = lambda s: f"{base / s * 100:.0f}%" if base else ""
        print(f"| {n} | {cell(base) if base else 'n/a'} | {cell(runtime)} | {share(runtime)} "
              f"| {cell(loops) if loops else 'not run'} | {share(loops) if loops else ''} |")
        if base and n >= 512:
            worst = min(worst or 1e9, base / runtime)
    print()
    return worst


def compile_once(a, tmp):
    path = os.path.join(tmp, "t16.mlir")
    subprocess.run([sys.executable, os.path.join(ROOT, "utils/bench/gen_transformer.py"),
                    "--layers", "16", "--seq", "16", "--hidden", "32", "--heads", "4",
                    "--ffn", "64", "-o", path], check=True)
    print("### Compile once")
    print()
    print("`dist-run --np 4` on a 16-layer toy transformer (`utils/bench/gen_transformer.py "
          "--layers 16 --seq 16 --hidden 32 --heads 4 --ffn 64`, tp = 4), the whole process "
          "(compile once in the front, 4 ranks load the shared object), median of 3. "
          "Target: <= 10 s at the default level (2).")
    print()
    print("| --opt-level | wall time | the call on the slowest rank |")
    print("|---|---|---|")
    for level in (0, 2, 3):
        walls, calls = [], []
        for _ in range(3):
            start = time.perf_counter()
            p = subprocess.run([os.path.join(a.build, "bin", "dist-run"), "--np", "4", path,
                                "--opt-level", str(level)], capture_output=True, text=True,
                               timeout=3600)
            walls.append(time.perf_counter() - start)
            if p.returncode != 0:
                sys.exit(f"local_compute: dist-run failed:\n{p.stdout}{p.stderr}")
            calls.append(float(re.search(r"([0-9.]+) ms on the slowest rank", p.stdout).group(1)))
        print(f"| {level} | {statistics.median(walls):.2f} s | {statistics.median(calls):.2f} ms |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--sizes", default="256,512,1024,2048")
    ap.add_argument("--loops-up-to", type=int, default=1024,
                    help="largest N also compiled to loops (they are slow)")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    a.sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        worst = local_matmul(a, tmp)
        compile_once(a, tmp)
    if worst is not None and worst < 0.5:
        sys.exit(f"local_compute: the compiled matmul reached {worst * 100:.0f}% of the BLAS (< 50%)")


if __name__ == "__main__":
    main()

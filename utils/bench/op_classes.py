#!/usr/bin/env python3
"""Local compute per op class: the compiled rate against the machine's limit.

    python3 utils/bench/op_classes.py BUILD [--reps 20] [--peers PYTHON]

Each op of a Llama layer (S = 512, D = 1024, 16 query heads over 4 kv heads
of 64, F = 2816, f32) compiled alone by dist-run on one rank, the median per
call of --reps calls after a warm-up:

- products (GEMM class) in GFLOP/s against the BLAS's own calls doing the
  same products (cblas_sgemm of the library the runtime links, called
  directly, one call per product);
- elementwise ops and reductions in GB/s (the bytes each op must read and
  write once) against a memcpy of the same bytes (NumPy's copyto, one core,
  the same kind of memory traffic), by the default fused vector code and by
  --compute loops (linalg's scalar loops, the code before issue 43).

With --peers (the python of utils/bench/peers/setup.sh), the same ops in
torch eager on the same threads (utils/bench/peers/op_classes_peers.py).

Targets (issue 43): fused elementwise and reduction ops >= 50% of memcpy's
bandwidth. Needs a Python with NumPy (Debian's /usr/bin/python3). Prints
markdown.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from benchutil import blas_library, dist_run_seconds, median_seconds

S, D, H, HK, HD, F = 512, 1024, 16, 4, 64, 2816
G = H // HK


def ty(shape):
    dims = "".join(f"{d}x" for d in shape)
    enc = ", ".join("{}" for _ in shape)
    return f"tensor<{dims}f32, #dist.sharding<@m, [{enc}]>>"


def program(name, args, result, body):
    """A one-device program: `args` [(name, shape)], the result's shape."""
    sig = ", ".join(f"%{n}: {ty(s)}" for n, s in args)
    return (f'dist.mesh @m = <["x"=1]>\n'
            f"func.func @{name}({sig}) -> {ty(result)} {{\n{body}\n"
            f"  return %r : {ty(result)}\n}}\n")


def scores():
    t = ty([H, S, S])
    body = f"""  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %f = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, s, t, d) -> (s, n, d)>,
      affine_map<(n, s, t, d) -> (t, n floordiv {G}, d)>, affine_map<(n, s, t, d) -> (n, s, t)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%q, %k : {ty([S, H, HD])}, {ty([S, HK, HD])}) outs(%f : {t}) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }} -> {t}"""
    return program("scores", [("q", [S, H, HD]), ("k", [S, HK, HD])], [H, S, S], body)


def context():
    t = ty([S, H, HD])
    body = f"""  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %f = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %r = linalg.generic {{indexing_maps = [affine_map<(s, n, d, t) -> (n, s, t)>,
      affine_map<(s, n, d, t) -> (t, n floordiv {G}, d)>, affine_map<(s, n, d, t) -> (s, n, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%p, %v : {ty([H, S, S])}, {ty([S, HK, HD])}) outs(%f : {t}) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }} -> {t}"""
    return program("context", [("p", [H, S, S]), ("v", [S, HK, HD])], [S, H, HD], body)


def masked_softmax():
    t = ty([H, S, S])
    body = f"""  %scale = arith.constant 0.125 : f32
  %masked = arith.constant -1.0e9 : f32
  %e = tensor.empty() : {t}
  %m = linalg.generic {{indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel"]}} ins(%x : {t}) outs(%e : {t}) {{
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %sc = arith.mulf %in, %scale : f32
    %y = arith.select %keep, %sc, %masked : f32
    linalg.yield %y : f32
  }} -> {t}
  %e2 = tensor.empty() : {t}
  %r = linalg.softmax dimension(2) ins(%m : {t}) outs(%e2 : {t}) -> {t}"""
    return program("softmax", [("x", [H, S, S])], [H, S, S], body)


def rms_norm():
    t, r = ty([S, D]), ty([S])
    body = f"""  %zero = arith.constant 0.0 : f32
  %inv = arith.constant {1.0 / D:e} : f32
  %eps = arith.constant 1.0e-5 : f32
  %er = tensor.empty() : {r}
  %z = linalg.fill ins(%zero : f32) outs(%er : {r}) -> {r}
  %ss = linalg.generic {{indexing_maps = [affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> (s)>],
      iterator_types = ["parallel", "reduction"]}} ins(%x : {t}) outs(%z : {r}) {{
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }} -> {r}
  %e = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> (s)>,
      affine_map<(s, d) -> (d)>, affine_map<(s, d) -> (s, d)>], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %ss, %g : {t}, {r}, {ty([D])}) outs(%e : {t}) {{
  ^bb0(%in: f32, %sum: f32, %gain: f32, %out: f32):
    %ms = arith.mulf %sum, %inv : f32
    %v = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %v : f32
    %n = arith.mulf %in, %rs : f32
    %y = arith.mulf %n, %gain : f32
    linalg.yield %y : f32
  }} -> {t}"""
    return program("rms_norm", [("x", [S, D]), ("g", [D])], [S, D], body)


def swiglu():
    t = ty([S, F])
    body = f"""  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [affine_map<(s, f) -> (s, f)>, affine_map<(s, f) -> (s, f)>,
      affine_map<(s, f) -> (s, f)>], iterator_types = ["parallel", "parallel"]}}
      ins(%gate, %up : {t}, {t}) outs(%e : {t}) {{
  ^bb0(%g: f32, %u: f32, %out: f32):
    %ng = arith.negf %g : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %one, %ex : f32
    %sg = arith.divf %g, %den : f32
    %y = arith.mulf %sg, %u : f32
    linalg.yield %y : f32
  }} -> {t}"""
    return program("swiglu", [("gate", [S, F]), ("up", [S, F])], [S, F], body)


def blas_products(lib, count, m, n, k, reps):
    """`count` row-major products C (m x n) += A (m x k) B (k x n), one
    cblas_sgemm call each."""
    blas = ctypes.CDLL(lib)
    blas.cblas_sgemm.restype = None
    rng = np.random.default_rng(1)
    a = rng.random((count, m, k), np.float32)
    b = rng.random((count, k, n), np.float32)
    c = np.zeros((count, m, n), np.float32)
    ptr = lambda x: ctypes.c_void_p(x.ctypes.data)
    calls = [(101, 111, 111, m, n, k, ctypes.c_float(1.0), ptr(a[i]), k, ptr(b[i]), n,
              ctypes.c_float(1.0), ptr(c[i]), n) for i in range(count)]

    def run():
        for args in calls:
            blas.cblas_sgemm(*args)
    return median_seconds(run, reps)


def memcpy_seconds(nbytes, reps):
    """NumPy's copy of nbytes / 2 bytes: nbytes of reads and writes."""
    src = np.ones(nbytes // 8, np.float32)
    dst = np.empty_like(src)
    return median_seconds(lambda: np.copyto(dst, src), reps)


def torch_seconds(python, reps):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers",
                          "op_classes_peers.py")
    p = subprocess.run([python, script, "--reps", str(reps)], capture_output=True, text=True,
                       timeout=3600)
    if p.returncode != 0:
        sys.exit(f"op_classes: the peers failed:\n{p.stdout}{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--peers", help="the python of utils/bench/peers/setup.sh")
    a = ap.parse_args()
    peer = torch_seconds(a.peers, a.reps) if a.peers else {}
    lib = blas_library(a.build)
    f32 = 4
    products = [
        # name, program, flops, BLAS equivalent (count, m, n, k)
        ("GQA scores q k^T (16 heads over 4 kv heads, `n floordiv 4`)", scores(),
         2 * H * S * S * HD, (H, S, S, HD), "scores"),
        ("GQA context p v", context(), 2 * H * S * S * HD, (H, S, HD, S), "context"),
    ]
    streams = [
        # name, program, bytes read and written once
        ("causal mask + softmax [16, 512, 512]", masked_softmax(), 2 * H * S * S * f32,
         "softmax"),
        ("RMSNorm [512, 1024]", rms_norm(), (2 * S * D + D) * f32, "rms_norm"),
        ("SwiGLU [512, 2816]", swiglu(), 3 * S * F * f32, "swiglu"),
    ]
    print("### Per op class")
    print()
    print(f"`python3 utils/bench/op_classes.py build` — each op of the Llama layer below "
          f"compiled alone on one rank (f32), the median of {a.reps} calls after a "
          "warm-up. Products in GFLOP/s against the BLAS's own `cblas_sgemm` doing the "
          f"same products one call each ({os.path.basename(lib) if lib else 'no BLAS'}); "
          "elementwise ops and reductions in GB/s of the bytes they must read and write "
          "once, against NumPy's copy moving the same bytes (one core), with the default "
          "fused vector code and with `--compute loops` (linalg's scalar loops, the "
          "code before); with torch eager on the same threads (the products on every "
          "core, the rest on one, as dist runs them). Target: fused >= 50% of the copy.")
    print()
    torch_head = f" torch {peer['torch_version']} eager |" if peer else ""
    print(f"| op | compiled | the BLAS | of the BLAS |{torch_head}")
    print("|---|---|---|---|" + ("---|" if peer else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, flops, (count, m, n, k), key in products:
            path = os.path.join(tmp, "p.mlir")
            open(path, "w").write(text)
            ours = dist_run_seconds(a.build, path, a.reps, who="op_classes")
            base = blas_products(lib, count, m, n, k, a.reps) if lib else None
            rate = lambda s: f"{flops / s / 1e9:.1f} GFLOP/s ({s * 1e3:.2f} ms)"
            torch = f" {rate(peer[key])} |" if peer else ""
            print(f"| {name} | {rate(ours)} | {rate(base) if base else 'n/a'} | "
                  f"{f'{base / ours * 100:.0f}%' if base else ''} |{torch}")
        print()
        print("| op | fused vector code | scalar loops | memcpy of the same bytes | "
              "fused, of memcpy | fused speed-up |" + (" torch eager, 1 thread |" if peer else ""))
        print("|---|---|---|---|---|---|" + ("---|" if peer else ""))
        worst = None
        for name, text, nbytes, key in streams:
            path = os.path.join(tmp, "s.mlir")
            open(path, "w").write(text)
            fused = dist_run_seconds(a.build, path, a.reps, who="op_classes")
            loops = dist_run_seconds(a.build, path, max(3, a.reps // 4),
                                     flags=["--compute", "loops"], who="op_classes")
            copy = memcpy_seconds(nbytes, a.reps)
            rate = lambda s: f"{nbytes / s / 1e9:.1f} GB/s ({s * 1e3:.2f} ms)"
            share = copy / fused
            worst = share if worst is None else min(worst, share)
            torch = f" {rate(peer[key])} |" if peer else ""
            print(f"| {name} | {rate(fused)} | {rate(loops)} | {rate(copy)} | "
                  f"{share * 100:.0f}% | {loops / fused:.1f}x |{torch}")
        print()
    if worst is not None and worst < 0.5:
        print(f"op_classes: a fused op reached {worst * 100:.0f}% of memcpy (< 50%)",
              file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The ops of utils/bench/op_classes.py in torch eager, timed on this machine.

    PEERS_PYTHON utils/bench/peers/op_classes_peers.py [--reps 20]

The same shapes and math (f32): the grouped-query attention products with
the kv heads repeated per query head (transformers' `repeat_kv`) on every
core, as dist's GEMM calls run; the causal mask + softmax, RMSNorm and
SwiGLU on one thread, as dist's fused code runs on the rank's one thread.
Prints one JSON object of median seconds per call. Runs in the peers'
virtual environment (utils/bench/peers/setup.sh).
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from benchutil import median_seconds  # noqa: E402

S, D, H, HK, HD, F = 512, 1024, 16, 4, 64, 2816


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    q, k = torch.randn(S, H, HD), torch.randn(S, HK, HD)
    p = torch.randn(H, S, S)
    x = torch.randn(H, S, S)
    mask = torch.ones(S, S, dtype=torch.bool).tril()
    masked = torch.tensor(-1.0e9)
    xr, g = torch.randn(S, D), torch.randn(D)
    gate, up = torch.randn(S, F), torch.randn(S, F)

    def repeat(t):
        return t.repeat_interleave(H // HK, dim=1)

    ops = {
        "scores": lambda: torch.einsum("shd,thd->hst", q, repeat(k)),
        "context": lambda: torch.einsum("hst,thd->shd", p, repeat(k)),
        "softmax": lambda: torch.softmax(torch.where(mask, x * 0.125, masked), dim=-1),
        "rms_norm": lambda: xr * torch.rsqrt((xr * xr).mean(-1, keepdim=True) + 1e-5) * g,
        "swiglu": lambda: torch.nn.functional.silu(gate) * up,
    }
    out = {"torch_version": torch.__version__, "cores": os.cpu_count()}
    for name, fn in ops.items():
        torch.set_num_threads(os.cpu_count() if name in ("scores", "context") else 1)
        out[name] = median_seconds(fn, a.reps)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""One Llama decoder layer in torch eager and jax.jit, timed on this machine.

    PEERS_PYTHON utils/bench/peers/llama_layer_peers.py --seq 512 --hidden 1024
        --heads 16 --kv-heads 4 --head-dim 64 --ffn 2816 [--reps 7]

The layer of utils/e2e/reference.py `llama_layer` (pre-norm RMSNorm, fused QKV
projection, causal grouped-query attention with scores scaled by 1/sqrt(hd)
and masked to -1e9, SwiGLU, residuals; f32), written as a user of each
framework writes it:

- torch eager, attention by hand (the kv heads repeated per query head, as
  transformers' `repeat_kv` does), on all cores and on one thread;
- torch eager, attention by `scaled_dot_product_attention` (transformers'
  default attention on CPU);
- jax.jit of the hand-written layer (XLA CPU).

Every variant is checked against the float64 NumPy reference on the same
random inputs before it is timed. Prints one JSON object: median seconds
per call of each variant and the thread counts. Runs in the peers' virtual
environment (utils/bench/peers/setup.sh), never in the build or the suite.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "..", "e2e")]
import reference  # noqa: E402  (the suite's NumPy reference)
from benchutil import median_seconds  # noqa: E402


def inputs(a):
    rng = np.random.default_rng(0)
    c = (a.heads + 2 * a.kv_heads) * a.head_dim

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    x = rng.standard_normal((a.seq, a.hidden)).astype(np.float32)
    g1 = (1 + 0.1 * rng.standard_normal(a.hidden)).astype(np.float32)
    g2 = (1 + 0.1 * rng.standard_normal(a.hidden)).astype(np.float32)
    return [x, g1, w(a.hidden, c), w(a.heads * a.head_dim, a.hidden), g2,
            w(a.hidden, a.ffn), w(a.hidden, a.ffn), w(a.ffn, a.hidden)]


def torch_layer(a, sdpa):
    import torch
    import torch.nn.functional as F
    H, Hk, hd, S = a.heads, a.kv_heads, a.head_dim, a.seq

    def rms(x, g):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + a.eps) * g

    mask = torch.ones(S, S, dtype=torch.bool).tril()
    masked = torch.tensor(-1.0e9)

    def layer(x, g1, wqkv, wo, g2, wg, wu, wd):
        qkv = rms(x, g1) @ wqkv
        q = qkv[:, :H * hd].reshape(S, H, hd).transpose(0, 1)
        k = qkv[:, H * hd:(H + Hk) * hd].reshape(S, Hk, hd).transpose(0, 1)
        v = qkv[:, (H + Hk) * hd:].reshape(S, Hk, hd).transpose(0, 1)
        k = k.repeat_interleave(H // Hk, dim=0)
        v = v.repeat_interleave(H // Hk, dim=0)
        if sdpa:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            s = (q @ k.transpose(1, 2)) * (1.0 / hd ** 0.5)
            o = torch.softmax(torch.where(mask, s, masked), dim=-1) @ v
        x = x + o.transpose(0, 1).reshape(S, H * hd) @ wo
        h = rms(x, g2)
        return x + (F.silu(h @ wg) * (h @ wu)) @ wd
    return layer


def jax_layer(a):
    import jax
    import jax.numpy as jnp
    H, Hk, hd, S = a.heads, a.kv_heads, a.head_dim, a.seq

    def rms(x, g):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + a.eps) * g

    def layer(x, g1, wqkv, wo, g2, wg, wu, wd):
        qkv = rms(x, g1) @ wqkv
        q = qkv[:, :H * hd].reshape(S, H, hd)
        k = jnp.repeat(qkv[:, H * hd:(H + Hk) * hd].reshape(S, Hk, hd), H // Hk, axis=1)
        v = jnp.repeat(qkv[:, (H + Hk) * hd:].reshape(S, Hk, hd), H // Hk, axis=1)
        s = jnp.einsum("shd,thd->hst", q, k) / jnp.sqrt(jnp.float32(hd))
        keep = jnp.arange(S)[None, :] <= jnp.arange(S)[:, None]
        p = jax.nn.softmax(jnp.where(keep[None], s, -1.0e9), axis=-1)
        x = x + jnp.einsum("hst,thd->shd", p, v).reshape(S, H * hd) @ wo
        h = rms(x, g2)
        return x + (jax.nn.silu(h @ wg) * (h @ wu)) @ wd
    return jax.jit(layer)


def check(name, got, want):
    err = np.abs(np.asarray(got, np.float64) - want).max() / max(1.0, np.abs(want).max())
    if not err < 1e-3:
        sys.exit(f"llama_layer_peers: {name} differs from the NumPy reference "
                 f"(max relative error {err:.2e})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default in (("seq", 512), ("hidden", 1024), ("heads", 16), ("kv-heads", 4),
                          ("head-dim", 64), ("ffn", 2816), ("reps", 7)):
        ap.add_argument(f"--{flag}", type=int, default=default)
    ap.add_argument("--eps", type=float, default=1.0e-5)
    a = ap.parse_args()
    args = inputs(a)
    want = reference.llama_layer(*[x.astype(np.float64) for x in args], heads=a.heads,
                                 kv_heads=a.kv_heads, eps=a.eps)
    out = {"cores": os.cpu_count()}

    import torch
    torch.set_grad_enabled(False)
    targs = [torch.from_numpy(x) for x in args]
    for sdpa in (False, True):
        layer = torch_layer(a, sdpa)
        check(f"torch (sdpa={sdpa})", layer(*targs).numpy(), want)
        for threads in ((os.cpu_count(), 1) if not sdpa else (os.cpu_count(),)):
            torch.set_num_threads(threads)
            key = f"torch_{'sdpa' if sdpa else 'eager'}_{threads}t"
            out[key] = median_seconds(lambda: layer(*targs), a.reps, warmups=2)
    torch.set_num_threads(os.cpu_count())
    out["torch_version"] = torch.__version__

    import jax
    jargs = [jax.device_put(x) for x in args]
    layer = jax_layer(a)
    check("jax.jit", np.asarray(layer(*jargs)), want)
    out["jax_jit"] = median_seconds(lambda: layer(*jargs).block_until_ready(), a.reps,
                                    warmups=2)
    out["jax_version"] = jax.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""NumPy references of the model blocks the end-to-end tests compute.

check_shards.py binds this module as `ref` in EXPECT expressions, e.g.

    // EXPECT result0 = ref.llama(arg0, arg1, ..., heads=8, kv_heads=4)

Written from the model's definition, in float64, independently of anything
dist computes.
"""

import numpy as np


def rms_norm(x, gain, eps):
    """x / sqrt(mean(x^2) + eps) * gain, over the last dim."""
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gain


def silu(x):
    """x * sigmoid(x), with sigmoid(x) = (1 + tanh(x / 2)) / 2 (no overflow)."""
    return x * 0.5 * (1.0 + np.tanh(0.5 * x))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def causal_gqa_attention(q, k, v, masked=-1.0e9):
    """q [S, H, hd], k and v [S, Hk, hd]; query head h reads kv head
    h // (H / Hk). Scores are scaled by 1/sqrt(hd); key t > query s is set
    to `masked` before the softmax. Returns [S, H, hd]."""
    heads, kv_heads, hd = q.shape[1], k.shape[1], q.shape[2]
    group = heads // kv_heads
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scores = np.einsum("shd,thd->hst", q, k) / np.sqrt(hd)
    seq = q.shape[0]
    keep = np.arange(seq)[None, :] <= np.arange(seq)[:, None]
    scores = np.where(keep[None], scores, masked)
    return np.einsum("hst,thd->shd", softmax(scores, axis=-1), v)


def llama_layer(x, g1, wqkv, wo, g2, wg, wu, wd, heads, kv_heads, eps):
    """One pre-norm Llama decoder layer on x [S, D] (or [B, S, D]):
    RMSNorm, a fused QKV projection whose columns are [Q | K | V], causal
    grouped-query attention, the output projection and a residual; then
    RMSNorm, SwiGLU and a residual."""
    if x.ndim == 3:
        return np.stack([llama_layer(xb, g1, wqkv, wo, g2, wg, wu, wd, heads,
                                     kv_heads, eps) for xb in x])
    hd = wqkv.shape[1] // (heads + 2 * kv_heads)
    seq = x.shape[0]
    qkv = rms_norm(x, g1, eps) @ wqkv
    q = qkv[:, :heads * hd].reshape(seq, heads, hd)
    k = qkv[:, heads * hd:(heads + kv_heads) * hd].reshape(seq, kv_heads, hd)
    v = qkv[:, (heads + kv_heads) * hd:].reshape(seq, kv_heads, hd)
    x = x + causal_gqa_attention(q, k, v).reshape(seq, heads * hd) @ wo
    h = rms_norm(x, g2, eps)
    return x + (silu(h @ wg) * (h @ wu)) @ wd


def llama(x, g1, wqkv, wo, g2, wg, wu, wd, heads, kv_heads, eps=1.0e-5):
    """Layers of llama_layer over stacked weights (the first dim of every
    weight is the layer)."""
    for layer in range(wqkv.shape[0]):
        x = llama_layer(x, g1[layer], wqkv[layer], wo[layer], g2[layer],
                        wg[layer], wu[layer], wd[layer], heads, kv_heads, eps)
    return x


def mlp_train_step(x, weights, dy, lr, residual=False):
    """One SGD step of N chained FFN blocks y = relu(x @ w1) @ w2 (+ x with
    `residual`), weights = [w1_0, w2_0, ..., w1_N-1, w2_N-1], dy the gradient
    of the last block's output. Backward by hand (relu' is 1 where the
    pre-activation is > 0), then w <- w - lr * dw. Returns [y, w1_0',
    w2_0', ...] (utils/bench/gen_train_step.py's results)."""
    pairs = list(zip(weights[0::2], weights[1::2]))
    saved = []
    for w1, w2 in pairs:
        pre = x @ w1
        h = np.maximum(pre, 0)
        y = h @ w2 + (x if residual else 0)
        saved.append((x, pre, h))
        x = y
    new, g = [None] * len(weights), dy
    for layer in reversed(range(len(pairs))):
        xl, pre, h = saved[layer]
        w1, w2 = pairs[layer]
        dw2 = h.T @ g
        dpre = np.where(pre > 0, g @ w2.T, 0.0)
        dw1 = xl.T @ dpre
        g = dpre @ w1.T + (g if residual else 0)
        new[2 * layer], new[2 * layer + 1] = w1 - lr * dw1, w2 - lr * dw2
    return [x] + new

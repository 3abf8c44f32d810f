#!/usr/bin/env python3
"""Exported models through the front doors, timed beside their framework.

    PYTHONPATH=build/python_packages build/frontends-venv/bin/python \\
        utils/bench/frontends.py [--reps 5] [--quick]

For each model (random weights, f32): the time to export it
(dist_mlir.frontends), to partition it (dist-partition, as Program.layouts
does) and to compile it for the ranks (dist-run with --reps 0), then dist-run's
median time per call on 1 rank (the BLAS on every core) and on 2 ranks (one
core each) beside the framework's own on the same machine: torch eager (all
cores) for the PyTorch models, jax.jit (XLA CPU) for the JAX one. Every
program's result is checked against the framework before it is timed.

Models: transformers' LlamaForCausalLM and GPT2LMHeadModel (auto plan;
Megatron for Llama on 2 ranks), and a JAX language model (embedding,
decoder layers under lax.scan, tied lm_head) with Megatron NamedShardings.
Prints a Markdown table (docs/benchmarks.md, "Exported models"). Runs in
the frameworks' environment (utils/setup-frontends.sh), never in the suite.
"""
import argparse
import contextlib
import io
import os
import re
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import median_seconds  # noqa: E402

PER_CALL = re.compile(r"per call: median ([0-9.]+) ms")


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def dist_seconds(program, ranks, reps):
    """Median seconds per call of program.run on `ranks` ranks (checked
    results come back from the same run)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        results = program.run(np=ranks, reps=reps, timeout=3600)
    m = PER_CALL.search(out.getvalue())
    if not m:
        sys.exit(f"frontends bench: no timing line in {out.getvalue()!r}")
    return results, float(m.group(1)) / 1e3


def close(got, want, what):
    import numpy as np
    want = np.asarray(want)
    err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    if err > 1e-4:
        sys.exit(f"frontends bench: {what}: relative error {err:.2e}")


def torch_models(a):
    import torch
    import transformers
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    torch.manual_seed(0)
    hidden = 256 if a.quick else 512
    llama = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=4096, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
        num_hidden_layers=2 if a.quick else 4, num_attention_heads=8,
        num_key_value_heads=2, attn_implementation="sdpa")).eval()
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=4096, n_positions=256, n_embd=hidden, n_layer=2 if a.quick else 4,
        n_head=8, attn_implementation="sdpa")).eval()
    megatron = {"*.q_proj": ColwiseParallel(), "*.k_proj": ColwiseParallel(),
                "*.v_proj": ColwiseParallel(), "*.o_proj": RowwiseParallel(),
                "*.gate_proj": ColwiseParallel(), "*.up_proj": ColwiseParallel(),
                "*.down_proj": RowwiseParallel()}

    class Logits(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.m = model

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits

    seq = 64 if a.quick else 256
    ids = torch.randint(0, 4096, (1, seq), generator=torch.Generator().manual_seed(1))
    for name, model, plans in (("transformers Llama", llama, {"auto": "auto", "Megatron": megatron}),
                               ("transformers GPT-2", gpt2, {"auto": "auto"})):
        module = Logits(model)
        with torch.no_grad():
            want = module(ids).numpy()
            eager = median_seconds(lambda: module(ids), a.reps)
        yield name, seq, module, (ids,), plans, want, eager, "torch eager"


def torch_rows(a, Mesh):
    from dist_mlir.frontends.torch import export
    for name, seq, module, args, plans, want, eager, peer in torch_models(a):
        for plan_name, plan in plans.items():
            for ranks in (1, 2):
                if ranks == 1 and plan_name != "auto":
                    continue
                program, export_s = timed(lambda: export(
                    module, args, mesh=Mesh({"tp": ranks}), plan=plan))
                _, partition_s = timed(lambda: program.layouts)
                _, compile_s = timed(lambda: program.run(np=ranks, timeout=3600))
                results, per_call = dist_seconds(program, ranks, a.reps)
                close(results[0], want, name)
                yield (name, seq, plan_name, ranks, export_s, partition_s,
                       compile_s, per_call, eager, peer)


def jax_rows(a, Mesh):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    from dist_mlir.frontends.jax import export

    B, S = 1, (64 if a.quick else 256)
    D, H, F, L, V = (256 if a.quick else 512), 8, (704 if a.quick else 1408), (2 if a.quick else 4), 4096

    def layer(x, p):
        def rms(v, w):
            return v * jax.lax.rsqrt(jnp.mean(v * v, -1, keepdims=True) + 1e-6) * w
        h = rms(x, p["n1"])
        q, k, v = ((h @ p[w]).reshape(B, S, H, D // H) for w in ("wq", "wk", "wv"))
        s = jnp.einsum("bshd,bthd->bhst", q, k) / np.sqrt(D // H)
        s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, -1e9)
        o = jnp.einsum("bhst,bthd->bshd", jax.nn.softmax(s, -1), v).reshape(B, S, D)
        x = x + o @ p["wo"]
        h = rms(x, p["n2"])
        return x + (jax.nn.silu(h @ p["wg"]) * (h @ p["wu"])) @ p["wd"]

    def model(ids, emb, params):
        x, _ = jax.lax.scan(lambda c, p: (layer(c, p), None), emb[ids], params)
        return x @ emb.T

    rng = np.random.default_rng(0)
    for ranks in (1, 2):
        mesh = jax.make_mesh((ranks,), ("tp",), devices=jax.devices()[:ranks],
                             axis_types=(jax.sharding.AxisType.Auto,))

        def put(shape, spec):
            return jax.device_put((rng.standard_normal(shape) * 0.05).astype(np.float32),
                                  NamedSharding(mesh, spec))
        col, row = P(None, None, "tp"), P(None, "tp", None)
        params = {"n1": put((L, D), P()), "n2": put((L, D), P()),
                  "wq": put((L, D, D), col), "wk": put((L, D, D), col),
                  "wv": put((L, D, D), col), "wo": put((L, D, D), row),
                  "wg": put((L, D, F), col), "wu": put((L, D, F), col),
                  "wd": put((L, F, D), row)}
        emb = put((V, D), P())
        ids = jax.device_put(rng.integers(0, V, (B, S)).astype(np.int32),
                             NamedSharding(mesh, P()))
        fn = jax.jit(model)
        want = np.asarray(fn(ids, emb, params))
        peer = median_seconds(lambda: fn(ids, emb, params).block_until_ready(), a.reps)
        program, export_s = timed(lambda: export(fn, ids, emb, params))
        _, partition_s = timed(lambda: program.layouts)
        _, compile_s = timed(lambda: program.run(np=ranks, timeout=3600))
        results, per_call = dist_seconds(program, ranks, a.reps)
        close(results[0], want, "JAX LM")
        yield ("JAX LM (lax.scan)", S, "NamedSharding", ranks, export_s,
               partition_s, compile_s, per_call, peer, f"jax.jit ({ranks} dev)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="small models (a smoke run)")
    a = p.parse_args()
    import torch
    from dist_mlir import Mesh

    print(f"Median of {a.reps} calls after a warm-up, on this machine ({os.cpu_count()} "
          f"cores; torch on {torch.get_num_threads()} threads). Export, partition "
          "and compile: seconds, once. Ratio: dist's time over the framework's "
          "(< 1: dist faster).\n")
    print("| model | seq | plan | ranks | export s | partition s | compile+run s "
          "| dist ms/call | framework ms/call | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in list(torch_rows(a, Mesh)) + list(jax_rows(a, Mesh)):
        (name, seq, plan, ranks, ex, pa, co, dist, peer, peer_name) = row
        print(f"| {name} | {seq} | {plan} | {ranks} | {ex:.1f} | {pa:.1f} | {co:.1f} "
              f"| {dist * 1e3:.1f} | {peer * 1e3:.1f} ({peer_name}) | {dist / peer:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Modelled communication of dist-partition's layouts vs two baselines.

    partition_quality.py BUILD [--data FILE] [--keep DIR]

Writes realistic global-view programs (Megatron MLP and attention with
sequence parallelism, FSDP + TP, context parallelism, Ulysses, MoE expert
parallelism, vocabulary-parallel cross entropy, ZeRO gradients, ...), runs
`dist-opt --dist-partition=chooser=C -dist-remarks` for the joint chooser
and the two baselines (per-op: DTensor-style dispatch; keep-larger:
Shardy-style explicit resharding), and prints a Markdown table of the
modelled cost each reaches (default cost model). With --data, also writes
the chart's data.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_transformer  # noqa: E402

CHOOSERS = ["joint", "per-op", "keep-larger"]


class Program:
    """A tiny builder of global-view programs from einsum-like ops."""

    def __init__(self, mesh):
        self.mesh = mesh
        self.args, self.body, self.n = [], [], 0
        self.types = {}

    def arg(self, shape, layout):
        name = f"%a{len(self.args)}"
        t = f"tensor<{'x'.join(map(str, shape))}xf32, #dist.sharding<@m, {layout}>>"
        self.args.append(f"{name}: {t}")
        self.types[name] = (shape, t)
        return name

    def _fresh(self, shape, layout=None, init="0.0"):
        self.n += 1
        enc = f", #dist.sharding<@m, {layout}>" if layout else ""
        t = f"tensor<{'x'.join(map(str, shape))}xf32{enc}>"
        self.body.append(f"  %c{self.n} = arith.constant {init} : f32")
        self.body.append(f"  %e{self.n} = tensor.empty() : {t}")
        self.body.append(f"  %f{self.n} = linalg.fill ins(%c{self.n} : f32) outs(%e{self.n} : {t}) -> {t}")
        return f"%f{self.n}", t

    def _generic(self, spec, ins, layout, init, body):
        """A linalg.generic over `spec` ("ab,bc->ac": loops in order of
        appearance; loops missing from the output reduce). `body(lines,
        args, acc)` appends the payload and returns the yielded value."""
        lhs, out = spec.split("->")
        operands = lhs.split(",")
        letters = []
        for s in operands + [out]:
            for c in s:
                if c not in letters:
                    letters.append(c)
        sizes = {}
        for s, v in zip(operands, ins):
            for c, n in zip(s, self.types[v][0]):
                sizes[c] = n
        shape = [sizes[c] for c in out]
        f, t = self._fresh(shape, layout, init)
        dims = ", ".join(letters)
        maps = ", ".join(f"affine_map<({dims}) -> ({', '.join(s)})>"
                         for s in operands + [out])
        its = ", ".join('"parallel"' if c in out else '"reduction"' for c in letters)
        self.n += 1
        name = f"%v{self.n}"
        args = [f"%i{k}" for k in range(len(ins))]
        acc = "%acc" if len(letters) > len(out) else "%o"
        self.body.append(f"  {name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{its}]}}")
        self.body.append(f"      ins({', '.join(ins)} : {', '.join(self.types[v][1] for v in ins)}) outs({f} : {t}) {{")
        self.body.append(f"    ^bb0({', '.join(a + ': f32' for a in args)}, {acc}: f32):")
        value = body(self.body, args, acc)
        self.body.append(f"      linalg.yield {value} : f32")
        self.body.append(f"  }} -> {t}")
        self.types[name] = (shape, t)
        return name

    def einsum(self, spec, *ins, layout=None, combine="addf", pre=None,
               init=None):
        """out = combine-reduce of prod(ins) (or of pre(ins)) per spec."""
        if init is None:
            init = {"addf": "0.0", "maximumf": "0xFF800000"}[combine]

        def body(lines, args, acc):
            if pre:
                value = pre(lines, args)
            elif len(args) == 2:
                lines.append("      %p = arith.mulf %i0, %i1 : f32")
                value = "%p"
            else:
                value = "%i0"
            lines.append(f"      %r = arith.{combine} {acc}, {value} : f32")
            return "%r"
        return self._generic(spec, ins, layout, init, body)

    def map(self, spec, *ins, fn, layout=None):
        """Elementwise over `spec`'s output, inputs broadcast by their maps."""
        return self._generic(spec, ins, layout, "0.0",
                             lambda lines, args, acc: fn(lines, args))

    def text(self, result):
        t = self.types[result][1]
        return (f"dist.mesh @m = {self.mesh}\n"
                f"func.func @program({', '.join(self.args)}) -> {t} {{\n"
                + "\n".join(self.body) + f"\n  return {result} : {t}\n}}\n")


def op(name):
    def fn(body, xs):
        body.append(f"      %u = {name} {', '.join(xs)} : f32")
        return "%u"
    return fn


def sub_exp(body, xs):
    body.append(f"      %d = arith.subf {xs[0]}, {xs[1]} : f32")
    body.append("      %u = math.exp %d : f32")
    return "%u"


def softmax(p, s, spec_rows):
    """Row softmax of s over its last letter; spec_rows like 'hij->hi'."""
    full, rows = spec_rows.split("->")
    m = p.einsum(f"{full}->{rows}", s, combine="maximumf")
    e = p.map(f"{full},{rows}->{full}", s, m, fn=sub_exp)
    z = p.einsum(f"{full}->{rows}", e)
    return p.map(f"{full},{rows}->{full}", e, z, fn=op("arith.divf"))


def mlp(mesh, x_layout, w1_layout, w2_layout, out_layout, S=4096, H=4096, F=16384):
    p = Program(mesh)
    x = p.arg([S, H], x_layout)
    w1 = p.arg([H, F], w1_layout)
    w2 = p.arg([F, H], w2_layout)
    h = p.einsum("sk,kf->sf", x, w1)
    t = p.map("sf->sf", h, fn=op("math.tanh"))
    return p.text(p.einsum("sf,fh->sh", t, w2, layout=out_layout))


def programs():
    tp8 = '<["tp"=8]>'
    yield ("Megatron MLP, SP in/out (tp=8)",
           mlp(tp8, '[{"tp"}, {}]', '[{}, {"tp"}]', '[{"tp"}, {}]', '[{"tp"}, {}]'))
    yield ("Megatron MLP, replicated in/out (tp=8)",
           mlp(tp8, '[{}, {}]', '[{}, {"tp"}]', '[{"tp"}, {}]', '[{}, {}]'))
    yield ("transformer block, TP+SP (tp=8)",
           gen_transformer.generate(argparse.Namespace(
               layers=1, seq=2048, hidden=4096, heads=32, ffn=16384,
               mesh=tp8, axis="tp", expect=False)))
    yield ("transformer, 4 layers, TP+SP (tp=4)",
           gen_transformer.generate(argparse.Namespace(
               layers=4, seq=1024, hidden=2048, heads=16, ffn=8192,
               mesh='<["tp"=4]>', axis="tp", expect=False)))
    yield ("FSDP + TP MLP (dp=4 x tp=8)",
           mlp('<["dp"=4, "tp"=8]>', '[{"dp"}, {}]', '[{"dp"}, {"tp"}]',
               '[{"tp"}, {"dp"}]', '[{"dp"}, {}]', S=8192))
    # Context parallelism: the sequence is split; scores need every key.
    p = Program('<["cp"=4]>')
    q = p.arg([8192, 128], '[{"cp"}, {}]')
    k = p.arg([8192, 128], '[{"cp"}, {}]')
    v = p.arg([8192, 128], '[{"cp"}, {}]')
    s = p.einsum("id,jd->ij", q, k)
    pr = softmax(p, s, "ij->i")
    yield ("context-parallel attention (cp=4)",
           p.text(p.einsum("ij,jd->id", pr, v, layout='[{"cp"}, {}]')))
    # Ulysses: sequence-split q/k/v, attention per head, sequence-split out.
    p = Program('<["sp"=8]>')
    q = p.arg([16, 4096, 128], '[{}, {"sp"}, {}]')
    k = p.arg([16, 4096, 128], '[{}, {"sp"}, {}]')
    v = p.arg([16, 4096, 128], '[{}, {"sp"}, {}]')
    s = p.einsum("hid,hjd->hij", q, k)
    pr = softmax(p, s, "hij->hi")
    yield ("Ulysses sequence-parallel attention (sp=8)",
           p.text(p.einsum("hij,hjd->hid", pr, v, layout='[{}, {"sp"}, {}]')))
    # MoE: tokens arrive split by capacity slot, experts live on their rank.
    p = Program('<["ep"=8]>')
    x = p.arg([8, 2048, 1024], '[{}, {"ep"}, {}]')
    w = p.arg([8, 1024, 4096], '[{"ep"}, {}, {}]')
    w2 = p.arg([8, 4096, 1024], '[{"ep"}, {}, {}]')
    h = p.einsum("ech,ehf->ecf", x, w)
    g = p.map("ecf->ecf", h, fn=op("math.tanh"))
    yield ("MoE experts, all-to-all dispatch (ep=8)",
           p.text(p.einsum("ecf,efh->ech", g, w2, layout='[{}, {"ep"}, {}]')))
    # Vocabulary-parallel cross entropy: log-sum-exp over a split vocab.
    p = Program(tp8)
    h = p.arg([4096, 4096], '[{"tp"}, {}]')
    wv = p.arg([4096, 65536], '[{}, {"tp"}]')
    logits = p.einsum("sh,hv->sv", h, wv)
    m = p.einsum("sv->s", logits, combine="maximumf")
    e = p.map("sv,s->sv", logits, m, fn=sub_exp)
    yield ("vocab-parallel softmax normaliser (tp=8)",
           p.text(p.einsum("sv->s", e, layout='[{}]')))
    # Data-parallel weight gradient, kept sharded (ZeRO-2).
    p = Program('<["dp"=8]>')
    x = p.arg([16384, 4096], '[{"dp"}, {}]')
    g = p.arg([16384, 4096], '[{"dp"}, {}]')
    yield ("ZeRO weight gradient, reduce-scattered (dp=8)",
           p.text(p.einsum("bi,bo->io", x, g, layout='[{"dp"}, {}]')))
    # Sequence-parallel normalisation: per-token statistics, nothing moves.
    p = Program(tp8)
    x = p.arg([8192, 4096], '[{"tp"}, {}]')
    ssq = p.einsum("sh->s", x, pre=lambda body, xs: (
        body.append(f"      %q = arith.mulf {xs[0]}, {xs[0]} : f32") or "%q"))
    yield ("sequence-parallel RMS statistics then scale (tp=8)",
           p.text(p.map("sh,s->sh", x, ssq, fn=op("arith.mulf"),
                        layout='[{"tp"}, {}]')))


def run(dist_opt, path, chooser):
    out = subprocess.run(
        [dist_opt, path, f"--dist-partition=chooser={chooser}", "-dist-remarks",
         "-mlir-print-op-on-diagnostic=false", "-o", os.devnull],
        capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{path} ({chooser}): {out.stderr.strip()}")
    m = re.search(r"modelled cost ([0-9.e+-]+) s", out.stderr)
    if not m:
        raise RuntimeError(f"{path} ({chooser}): no summary remark")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--data")
    ap.add_argument("--keep", help="also write the programs into DIR")
    a = ap.parse_args()
    dist_opt = os.path.join(a.build, "bin", "dist-opt")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, text) in enumerate(programs()):
            path = os.path.join(a.keep or tmp, f"program{i}.mlir")
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            rows.append((name, [run(dist_opt, path, c) for c in CHOOSERS]))
    print("| program | joint (µs) | per-op (µs) | keep-larger (µs) | joint vs best baseline |")
    print("|---|---|---|---|---|")
    worse = 0
    for name, (joint, per_op, larger) in rows:
        best = min(per_op, larger)
        if joint > best * (1 + 1e-9):
            worse += 1
        gain = "equal" if abs(best - joint) <= 1e-9 * max(best, 1e-30) else (
            f"{best / joint:.2f}x cheaper" if joint > 0 else "free (baseline pays)")
        print(f"| {name} | {joint * 1e6:.1f} | {per_op * 1e6:.1f} | {larger * 1e6:.1f} | {gain} |")
    print()
    print(f"{len(rows)} programs; the joint choice is worse than a baseline on {worse}.")
    # The Megatron MLP with SP on 4 tp ranks: exactly one all-gather and one
    # reduce-scatter (and the free replicate_to_partial of a zero init).
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                           "..", "examples", "megatron_mlp.mlir")
    lowered = subprocess.run([dist_opt, example, "--dist-reshard-pipeline"],
                             capture_output=True, text=True, timeout=600)
    if lowered.returncode != 0:
        raise RuntimeError(lowered.stderr)
    ops = re.findall(r"= dist\.(\w+) ", lowered.stdout)
    counts = ", ".join(f"{ops.count(o)} {o}" for o in sorted(set(ops)))
    print()
    print(f"Megatron MLP with SP on 4 tp ranks (examples/megatron_mlp.mlir, "
          f"`dist-opt --dist-reshard-pipeline`): {counts or 'no collective'}.")
    if ops.count("all_gather") != 1 or ops.count("reduce_scatter") != 1 or \
            set(ops) - {"all_gather", "reduce_scatter", "replicate_to_partial"}:
        worse += 1
    if a.data:
        with open(a.data, "w") as f:
            for i, (name, costs) in enumerate(rows):
                label = name.split(" (")[0].replace(" ", "_")
                f.write(f"{i} {label} " + " ".join(f"{c * 1e6:.3f}" for c in costs) + "\n")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())

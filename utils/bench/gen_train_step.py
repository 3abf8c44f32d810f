#!/usr/bin/env python3
"""Writes one SGD training step of a stack of MLP blocks, with explicit backward ops.

    gen_train_step.py [--tokens T] [--hidden H] [--ffn F] [--element f32|bf16]
                      [--mesh x=4] [--layers N] [--residual] [--lr LR]
                      [--transpose maps|op|generic] [--elementwise arith|generic]
                      [--auto | --hand dp|megatron|fsdp] [--expect] [-o FILE]
                      [--inputs DIR [--seed S]]

The function is what a user writes for a training step in the global view
(every type is the whole tensor; docs/partitioning.md): N GPT/Llama-style FFN
blocks, forward through all of them, then backward in reverse, then the SGD
update. Block l (x_0 = x, the argument):

    pre_l  = x_l @ w1_l                        [T, F]
    h_l    = relu(pre_l)
    x_l+1  = h_l @ w2_l      (+ x_l with --residual)   [T, H]

and, with dy (an argument, the loss gradient of y = x_N) as g_N:

    dw2_l  = h_l^T @ g_l+1
    dh_l   = g_l+1 @ w2_l^T
    dpre_l = dh_l where pre_l > 0, else 0      (relu')
    dw1_l  = x_l^T @ dpre_l
    g_l    = dpre_l @ w1_l^T (+ g_l+1 with --residual)  (not for l = 0)
    w1_l'  = w1_l - LR * dw1_l,  w2_l' = w2_l - LR * dw2_l

Signature: @train_step(x, w1_0, w2_0, ..., w1_N-1, w2_N-1, dy) -> (y, w1_0',
w2_0', ..., w1_N-1', w2_N-1'). The transposed operands are written as
--transpose says: `maps` linalg.matmul with transposed indexing_maps (the
default), `op` a linalg.transpose then a plain linalg.matmul, `generic` a
linalg.generic contraction. relu and relu' are arith ops on tensors
(arith.maximumf; arith.cmpf + arith.select) with --elementwise arith (the
default), one linalg.generic each with `generic`. The residual add and the
SGD update are fused linalg.generic ops (so that a result's layout can sit
on their init).

Layouts, on the 1-D mesh @m of --mesh AXIS=N:
  --auto      none: `attributes {dist.auto = @m}`, dist-partition chooses
              every layout (semantics §6a).
  --hand dp   data parallel: x, dy and y split by tokens (rows), every weight
              and updated weight replicated (the gradients' partial sums are
              then all-reduced).
  --hand megatron
              Megatron-LM's tensor parallelism with sequence parallelism (its
              layout for a training step): w1 split by columns, w2 by rows
              (and their updates likewise, so each device updates its own
              shard); x, dy and y split by tokens, gathered where a block
              needs them whole and reduce-scattered after (the backward of
              an all-gather is a reduce-scatter).
  --hand fsdp FSDP: x, dy and y split by tokens; every weight and updated
              weight stored split by rows (dim 0, FSDP2's Shard(0) of each
              parameter), gathered for use, the gradients reduce-scattered
              into the stored layout.
One of --auto and --hand is required. With --hand only the arguments and results carry layouts; dist-partition
still chooses the intermediates'.

--expect adds `// EXPECT resultK = ...` lines (utils/e2e/check_shards.py)
computing every result with utils/e2e/reference.py `mlp_train_step`.

--inputs DIR writes DIR/arg<k>.npy, global inputs for `dist-run --input
npy:DIR` (and check_shards.py): x and dy uniform in [-1, 1] in steps of
1/16, every weight uniform in [-1, 1] / sqrt(its rows) in steps of 1/256,
each argument drawn separately (Python's random, seeded with --seed). Unlike
`--input random:S`, which gives arguments of one shape the same values (x
and dy, the layers' weights), they all differ, and the step's values stay
O(1), so both terms of w - LR * dw are checked. The values are exact in f32
and bf16, and so are layer 0's pre-activations in f32.
"""

import argparse
import math
import os
import random
import re
import struct
import sys


def enc(mesh_axis, dims):
    """#dist.sharding on @m with `dims` a list of 'axis'/'' per tensor dim."""
    parts = ", ".join('{"%s"}' % mesh_axis if d else "{}" for d in dims)
    return f", #dist.sharding<@m, [{parts}]>"


ROWS, COLS, REP = [1, 0], [0, 1], [0, 0]
HAND = {
    "dp": dict(x=ROWS, dy=ROWS, y=ROWS, w1=REP, w2=REP),
    "megatron": dict(x=ROWS, dy=ROWS, y=ROWS, w1=COLS, w2=ROWS),
    "fsdp": dict(x=ROWS, dy=ROWS, y=ROWS, w1=ROWS, w2=ROWS),
}


class Body:
    """The lines of the function body, and every SSA value's type."""

    def __init__(self, a):
        self.a, self.el, self.lines, self.n = a, a.element, [], 0
        self.types = {}

    def w(self, line):
        self.lines.append("  " + line)

    def fresh(self, base):
        self.n += 1
        return f"%{base}{self.n}"

    def ty(self, shape, e=""):
        return f"tensor<{shape[0]}x{shape[1]}x{self.el}{e}>"

    def zeros(self, shape, e=""):
        """A zero-filled init of `shape` (with encoding `e`)."""
        t = self.ty(shape, e)
        em, f = self.fresh("e"), self.fresh("z")
        self.w(f"{em} = tensor.empty() : {t}")
        self.w(f"{f} = linalg.fill ins(%zero : {self.el}) outs({em} : {t}) -> {t}")
        return f

    def empty(self, shape, e=""):
        t = self.ty(shape, e)
        em = self.fresh("e")
        self.w(f"{em} = tensor.empty() : {t}")
        return em

    def matmul(self, name, a, ta, b, tb, shape):
        """name = op(a) @ op(b), ta/tb: whether the operand is transposed."""
        out = self.zeros(shape)
        tout = self.ty(shape)
        style = self.a.transpose
        if style == "op":
            if ta:
                a = self.transpose(a)
            if tb:
                b = self.transpose(b)
            self.w(f"%{name} = linalg.matmul ins({a}, {b} : {self.types[a]}, "
                   f"{self.types[b]}) outs({out} : {tout}) -> {tout}")
        else:
            ma = "(d2, d0)" if ta else "(d0, d2)"
            mb = "(d1, d2)" if tb else "(d2, d1)"
            maps = (f"[affine_map<(d0, d1, d2) -> {ma}>, affine_map<(d0, d1, d2) -> {mb}>, "
                    f"affine_map<(d0, d1, d2) -> (d0, d1)>]")
            if style == "maps":
                self.w(f"%{name} = linalg.matmul indexing_maps = {maps}")
                self.w(f"    ins({a}, {b} : {self.types[a]}, {self.types[b]}) "
                       f"outs({out} : {tout}) -> {tout}")
            else:
                self.w(f"%{name} = linalg.generic {{indexing_maps = {maps}, iterator_types = "
                       f'["parallel", "parallel", "reduction"]}}')
                self.w(f"    ins({a}, {b} : {self.types[a]}, {self.types[b]}) "
                       f"outs({out} : {tout}) {{")
                self.w(f"  ^bb0(%p: {self.el}, %q: {self.el}, %acc: {self.el}):")
                self.w(f"    %pq = arith.mulf %p, %q : {self.el}")
                self.w(f"    %s = arith.addf %acc, %pq : {self.el}")
                self.w(f"    linalg.yield %s : {self.el}")
                self.w(f"}} -> {tout}")
        self.types[f"%{name}"] = tout
        return f"%{name}"

    def transpose(self, v):
        shape = [int(s) for s in re.match(r"tensor<(\d+)x(\d+)x", self.types[v]).groups()]
        shape = shape[::-1]
        e = self.empty(shape)
        r = self.fresh(v[1:] + "_t")
        t = self.ty(shape)
        self.w(f"{r} = linalg.transpose ins({v} : {self.types[v]}) outs({e} : {t}) "
               f"permutation = [1, 0]")
        self.types[r] = t
        return r

    def elementwise(self, name, ins, shape, body, e=""):
        """name = linalg.generic over a 2-D shape: ins -> one result (encoding e);
        body(args) -> (lines, yielded value)."""
        t = self.ty(shape, e)
        init = self.empty(shape, e)
        ident = "affine_map<(d0, d1) -> (d0, d1)>"
        maps = ", ".join([ident] * (len(ins) + 1))
        self.w(f"%{name} = linalg.generic {{indexing_maps = [{maps}], "
               f'iterator_types = ["parallel", "parallel"]}}')
        self.w(f"    ins({', '.join(ins)} : {', '.join(self.types[v] for v in ins)}) "
               f"outs({init} : {t}) {{")
        args = [f"%a{i}" for i in range(len(ins))]
        self.w(f"  ^bb0({', '.join(f'{x}: {self.el}' for x in args)}, %out: {self.el}):")
        lines, y = body(args)
        for line in lines:
            self.w("    " + line)
        self.w(f"    linalg.yield {y} : {self.el}")
        self.w(f"}} -> {t}")
        self.types[f"%{name}"] = t
        return f"%{name}"

    def relu(self, name, pre, shape):
        el = self.el
        if self.a.elementwise == "arith":
            t = self.ty(shape)
            self.w(f"%{name} = arith.maximumf {pre}, %zeros_{shape[0]}x{shape[1]} : {t}")
            self.types[f"%{name}"] = t
            return f"%{name}"
        return self.elementwise(name, [pre], shape, lambda a: (
            [f"%r = arith.maximumf {a[0]}, %zero : {el}"], "%r"))

    def relu_grad(self, name, pre, dh, shape):
        el = self.el
        if self.a.elementwise == "arith":
            t = self.ty(shape)
            z = f"%zeros_{shape[0]}x{shape[1]}"
            self.w(f"%{name}_mask = arith.cmpf ogt, {pre}, {z} : {t}")
            self.w(f"%{name} = arith.select %{name}_mask, {dh}, {z} : "
                   f"tensor<{shape[0]}x{shape[1]}xi1>, {t}")
            self.types[f"%{name}"] = t
            return f"%{name}"
        return self.elementwise(name, [pre, dh], shape, lambda a: (
            [f"%c = arith.cmpf ogt, {a[0]}, %zero : {el}",
             f"%r = arith.select %c, {a[1]}, %zero : {el}"], "%r"))

    def add(self, name, u, v, shape, e=""):
        el = self.el
        return self.elementwise(name, [u, v], shape, lambda a: (
            [f"%r = arith.addf {a[0]}, {a[1]} : {el}"], "%r"), e)

    def sgd(self, name, w, g, shape, e=""):
        el = self.el
        return self.elementwise(name, [w, g], shape, lambda a: (
            [f"%s = arith.mulf %lr, {a[1]} : {el}",
             f"%r = arith.subf {a[0]}, %s : {el}"], "%r"), e)


def generate(a):
    T, H, F, N, el = a.tokens, a.hidden, a.ffn, a.layers, a.element
    plan = HAND.get(a.hand, {})

    def e(kind):
        return enc(a.axis, plan[kind]) if plan else ""

    b = Body(a)
    args = [("x", [T, H], e("x"))]
    for l in range(N):
        args += [(f"w1_{l}", [H, F], e("w1")), (f"w2_{l}", [F, H], e("w2"))]
    args.append(("dy", [T, H], e("dy")))
    for name, shape, en in args:
        b.types[f"%{name}"] = b.ty(shape, en)
    results = [("y", [T, H], e("y"))]
    for l in range(N):
        results += [(f"w1_{l}_new", [H, F], e("w1")), (f"w2_{l}_new", [F, H], e("w2"))]

    b.w(f"%zero = arith.constant 0.0 : {el}")
    b.w(f"%lr = arith.constant {a.lr!r} : {el}")
    if a.elementwise == "arith":
        b.w(f"%zeros_{T}x{F} = arith.constant dense<0.0> : {b.ty([T, F])}")

    # Forward.
    x, saved = "%x", []
    for l in range(N):
        pre = b.matmul(f"pre{l}", x, False, f"%w1_{l}", False, [T, F])
        h = b.relu(f"h{l}", pre, [T, F])
        last = l == N - 1
        if a.residual:
            m = b.matmul(f"m{l}", h, False, f"%w2_{l}", False, [T, H])
            y = b.add(f"y{l}", m, x, [T, H], e("y") if last else "")
        elif last and plan:
            # The result is bound: the matmul's init carries its layout.
            out = b.zeros([T, H], e("y"))
            t = b.ty([T, H], e("y"))
            b.w(f"%y{l} = linalg.matmul ins({h}, %w2_{l} : {b.types[h]}, "
                f"{b.types['%w2_' + str(l)]}) outs({out} : {t}) -> {t}")
            b.types[f"%y{l}"] = t
            y = f"%y{l}"
        else:
            y = b.matmul(f"y{l}", h, False, f"%w2_{l}", False, [T, H])
        saved.append((x, pre, h))
        x = y

    # Backward, in reverse, and the update.
    g, new = "%dy", {}
    for l in reversed(range(N)):
        xl, pre, h = saved[l]
        dw2 = b.matmul(f"dw2_{l}", h, True, g, False, [F, H])
        dh = b.matmul(f"dh{l}", g, False, f"%w2_{l}", True, [T, F])
        dpre = b.relu_grad(f"dpre{l}", pre, dh, [T, F])
        dw1 = b.matmul(f"dw1_{l}", xl, True, dpre, False, [H, F])
        if l > 0:
            dx = b.matmul(f"dx{l}", dpre, False, f"%w1_{l}", True, [T, H])
            g = b.add(f"g{l}", dx, g, [T, H]) if a.residual else dx
        new[f"w1_{l}_new"] = b.sgd(f"w1_{l}_new", f"%w1_{l}", dw1, [H, F], e("w1"))
        new[f"w2_{l}_new"] = b.sgd(f"w2_{l}_new", f"%w2_{l}", dw2, [F, H], e("w2"))

    values = [x] + [new[name] for name, _, _ in results[1:]]
    rtypes = [b.ty(shape, en) for _, shape, en in results]
    b.w(f"return {', '.join(values)} : {', '.join(rtypes)}")

    head = [f"// Generated by utils/bench/gen_train_step.py {' '.join(a.argv)}"]
    if a.expect:
        nargs = len(args)
        ws = ", ".join(f"arg{i}" for i in range(1, nargs - 1))
        for k in range(len(results)):
            head.append(f"// EXPECT result{k} = ref.mlp_train_step(arg0, [{ws}], "
                        f"arg{nargs - 1}, lr={a.lr!r}, residual={a.residual})[{k}]")
    head.append(f'dist.mesh @m = <["{a.axis}"={a.size}]>')
    sig = ",\n    ".join(f"%{name}: {b.ty(shape, en)}" for name, shape, en in args)
    attrs = " attributes {dist.auto = @m}" if a.auto else ""
    head.append(f"func.func @train_step({sig})")
    head.append(f"    -> ({', '.join(rtypes)}){attrs} {{")
    return "\n".join(head + b.lines + ["}"]) + "\n"


def write_npy(path, shape, values):
    """A float64 .npy file (format 1.0), C order."""
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {tuple(shape)!r}, }}"
    pad = 64 - (10 + len(header) + 1) % 64
    header = (header + " " * pad + "\n").encode("latin1")
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header)
        f.write(struct.pack(f"<{len(values)}d", *values))


def write_inputs(a):
    os.makedirs(a.inputs, exist_ok=True)
    rng = random.Random(a.seed)
    T, H, F = a.tokens, a.hidden, a.ffn
    shapes = [[T, H]] + [[H, F], [F, H]] * a.layers + [[T, H]]
    for k, (rows, cols) in enumerate(shapes):
        if k in (0, len(shapes) - 1):          # x, dy
            values = [rng.randint(-16, 16) / 16 for _ in range(rows * cols)]
        else:                                  # a weight: scaled by its fan-in
            top = max(1, int(256 / math.sqrt(rows)))
            values = [rng.randint(-top, top) / 256 for _ in range(rows * cols)]
        write_npy(os.path.join(a.inputs, f"arg{k}.npy"), [rows, cols], values)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="See the module docstring (head of this file) for the program and the layouts.")
    ap.add_argument("--tokens", type=int, default=16, help="T, the rows of x and dy")
    ap.add_argument("--hidden", type=int, default=24, help="H, the model width")
    ap.add_argument("--ffn", type=int, default=40, help="F, the FFN width")
    ap.add_argument("--element", default="f32", choices=["f32", "bf16"])
    ap.add_argument("--mesh", default="x=4", help="a 1-D mesh, AXIS=SIZE")
    ap.add_argument("--layers", type=int, default=1, help="N blocks, chained")
    ap.add_argument("--residual", action="store_true", help="y = block(x) + x")
    ap.add_argument("--lr", type=float, default=0.125, help="the SGD learning rate")
    ap.add_argument("--transpose", choices=["maps", "op", "generic"], default="maps",
                    help="how the transposed matmul operands are written")
    ap.add_argument("--elementwise", choices=["arith", "generic"], default="arith",
                    help="relu and its derivative as arith ops on tensors, or linalg.generic")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--auto", action="store_true",
                      help="no layouts, dist.auto on the function")
    mode.add_argument("--hand", choices=sorted(HAND),
                      help="a classic hand-written layout on arguments and results")
    ap.add_argument("--expect", action="store_true", help="add // EXPECT lines")
    ap.add_argument("-o", "--output")
    ap.add_argument("--inputs", metavar="DIR",
                    help="also write DIR/arg<k>.npy, inputs for dist-run --input npy:DIR")
    ap.add_argument("--seed", type=int, default=1, help="the seed of --inputs")
    a = ap.parse_args()
    a.argv = sys.argv[1:]
    m = re.fullmatch(r"([A-Za-z_][\w.-]*)=(\d+)", a.mesh)
    if not m or int(m.group(2)) < 1:
        ap.error("--mesh must be AXIS=SIZE, e.g. x=4")
    a.axis, a.size = m.group(1), int(m.group(2))
    if min(a.tokens, a.hidden, a.ffn, a.layers) < 1:
        ap.error("sizes must be >= 1")
    text = generate(a)
    if a.inputs:
        write_inputs(a)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()

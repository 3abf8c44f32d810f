#!/usr/bin/env python3
"""Writes a global-view Llama decoder (pre-norm layers) as dist IR.

    gen_llama.py [--layers L] [--form loop|unrolled] [--batch B] [--seq S]
                 [--hidden D] [--heads H] [--kv-heads Hk] [--head-dim hd]
                 [--ffn F] [--mesh MESH] [--tp AXIS] [--dp AXIS] [--sp]
                 [--cp AXIS] [--element f32|bf16|f64] [--expect] [-o FILE]

Each layer, as a user writes it in the global view (no layout on any
intermediate; dist-partition chooses them):

    h       = RMSNorm(x) * g1                  (linalg.generic, reduction)
    q, k, v = h @ wqkv                         (one fused projection; three
                                                tensor.extract_slice)
    a       = causal GQA attention(q, k, v)    (expand_shape to heads; the
                                                kv head of query head n is
                                                `n floordiv (H / Hk)`; the mask
                                                by linalg.index; linalg.softmax)
    x       = x + a @ wo                       (collapse_shape, residual)
    h       = RMSNorm(x) * g2
    x       = x + (silu(h @ wg) * (h @ wu)) @ wd

The weights are stacked per layer (first dim L) and laid out as Megatron
does: wqkv's columns split over AXIS per segment [H*hd, Hk*hd, Hk*hd] (each
device holds its query heads and its kv heads), wo and wd by rows, wg and wu
by columns; gains replicated. x (and the result) is [S, D], or [B, S, D]
with the batch split over --dp; with --sp it is split by tokens over AXIS
(sequence parallelism), else replicated over it; with --cp its tokens are
split over that axis too (context parallelism: a third mesh axis over which
the weights are replicated; with --sp the tokens go over tp, then cp). --form loop runs the layers
as an scf.for over the stacked weights, --form unrolled writes them out; both
compute the same function (utils/e2e/reference.py `llama`, the EXPECT line of
--expect) and bind every layer's output to x's layout.
"""

import argparse
import math
import re
import sys


class Emitter:
    """Accumulates the lines of one function body."""

    def __init__(self, element):
        self.lines, self.count, self.el = [], 0, element

    def w(self, line, indent=1):
        self.lines.append("  " * indent + line)

    def fresh(self, base):
        self.count += 1
        return f"%{base}_{self.count}"

    def ty(self, shape, enc=""):
        dims = "".join(f"{d}x" for d in shape)
        return f"tensor<{dims}{self.el}{enc}>"

    def init(self, shape, value=None, enc="", indent=1):
        """An empty tensor, filled with `value` (an SSA scalar) if given."""
        t = self.ty(shape, enc)
        e = self.fresh("e")
        self.w(f"{e} = tensor.empty() : {t}", indent)
        if value is None:
            return e, t
        f = self.fresh("f")
        self.w(f"{f} = linalg.fill ins({value} : {self.el}) outs({e} : {t}) -> {t}",
               indent)
        return f, t

    def generic(self, loops, kinds, ins, out, body, indent=1):
        """out = linalg.generic over `loops` (names) of iterator `kinds`
        ('p'/'r'); ins: [(value, type, [index exprs])]; out: (init, type,
        [index exprs]); body(args, acc) -> (lines, yielded)."""
        maps = ", ".join(f"affine_map<({', '.join(loops)}) -> ({', '.join(ix)})>"
                         for _, _, ix in ins + [out])
        iters = ", ".join('"parallel"' if k == "p" else '"reduction"' for k in kinds)
        r = self.fresh("g")
        self.w(f"{r} = linalg.generic {{indexing_maps = [{maps}], "
               f"iterator_types = [{iters}]}}", indent)
        vals = ", ".join(v for v, _, _ in ins)
        tys = ", ".join(t for _, t, _ in ins)
        self.w(f"    ins({vals} : {tys}) outs({out[0]} : {out[1]}) {{", indent)
        args = [f"%a{i}" for i in range(len(ins))]
        sig = ", ".join(f"{a}: {self.el}" for a in args + ["%acc"])
        self.w(f"  ^bb0({sig}):", indent)
        lines, yielded = body(args, "%acc")
        for line in lines:
            self.w("  " + line, indent)
        self.w(f"  linalg.yield {yielded} : {self.el}", indent)
        self.w(f"}} -> {out[1]}", indent)
        return r, out[1]


def generate(a):
    el = a.element
    L, B, S, D = a.layers, a.batch, a.seq, a.hidden
    H, Hk, hd, F = a.heads, a.kv_heads, a.head_dim, a.ffn
    G = H // Hk
    tp = f'"{a.tp}"'
    # The batch prefix of every activation's shape, index list and layout.
    bs = [B] if B else []
    bi = ["b"] if B else []
    bl = [f'{{"{a.dp}"}}' if a.dp else "{}"] if B else []

    def enc(dims):
        return f", #dist.sharding<@mesh, [{', '.join(dims)}]>"

    token_axes = ([tp] if a.sp else []) + ([f'"{a.cp}"'] if a.cp else [])
    x_enc = enc(bl + [f"{{{', '.join(token_axes)}}}", "{}"])
    C = (H + 2 * Hk) * hd
    weights = [
        ("g1", [L, D], enc(["{}", "{}"])),
        ("wqkv", [L, D, C],
         enc(["{}", "{}", f"{{{tp}}} segments [{H * hd}, {Hk * hd}, {Hk * hd}]"])),
        ("wo", [L, H * hd, D], enc(["{}", f"{{{tp}}}", "{}"])),
        ("g2", [L, D], enc(["{}", "{}"])),
        ("wg", [L, D, F], enc(["{}", "{}", f"{{{tp}}}"])),
        ("wu", [L, D, F], enc(["{}", "{}", f"{{{tp}}}"])),
        ("wd", [L, F, D], enc(["{}", f"{{{tp}}}", "{}"])),
    ]
    e = Emitter(el)
    xt = e.ty(bs + [S, D], x_enc)

    def const(name, value):
        e.w(f"%{name} = arith.constant {float(value):e} : {el}")
        return f"%{name}"

    zero = const("zero", 0.0)
    one = const("one", 1.0)
    eps = const("eps", a.eps)
    inv_d = const("inv_d", 1.0 / D)
    scale = const("scale", 1.0 / math.sqrt(hd))
    masked = const("masked", -1.0e9)

    def weight(name, layer, indent):
        """Layer `layer`'s slice of a stacked weight (free type)."""
        shape = dict((n, s) for n, s, _ in weights)[name]
        full = e.ty(shape, dict((n, x) for n, _, x in weights)[name])
        part = e.ty(shape[1:])
        offsets = ", ".join([layer] + ["0"] * (len(shape) - 1))
        sizes = ", ".join(["1"] + [str(d) for d in shape[1:]])
        strides = ", ".join(["1"] * len(shape))
        r = e.fresh(name)
        e.w(f"{r} = tensor.extract_slice %{name}[{offsets}] [{sizes}] [{strides}] "
            f": {full} to {part}", indent)
        return r, part

    def rms_norm(x, xty, gain, gty, indent):
        ss_init = e.init(bs + [S], zero, indent=indent)
        ss, sst = e.generic(
            bi + ["s", "d"], "p" * len(bi) + "pr",
            [(x, xty, bi + ["s", "d"])], (*ss_init, bi + ["s"]),
            lambda args, acc: ([f"%sq = arith.mulf {args[0]}, {args[0]} : {el}",
                                f"%r = arith.addf {acc}, %sq : {el}"], "%r"),
            indent)
        out = e.init(bs + [S, D], indent=indent)
        return e.generic(
            bi + ["s", "d"], "p" * len(bi) + "pp",
            [(x, xty, bi + ["s", "d"]), (ss, sst, bi + ["s"]), (gain, gty, ["d"])],
            (*out, bi + ["s", "d"]),
            lambda args, acc: ([f"%ms = arith.mulf {args[1]}, {inv_d} : {el}",
                                f"%v = arith.addf %ms, {eps} : {el}",
                                f"%rs = math.rsqrt %v : {el}",
                                f"%n = arith.mulf {args[0]}, %rs : {el}",
                                f"%y = arith.mulf %n, {args[2]} : {el}"], "%y"),
            indent)

    def matmul(x, xty, wv, wty, n_out, indent):
        """[B?, S, K] x [K, N] as a generic (batch or not)."""
        init = e.init(bs + [S, n_out], zero, indent=indent)
        return e.generic(
            bi + ["s", "n", "k"], "p" * len(bi) + "ppr",
            [(x, xty, bi + ["s", "k"]), (wv, wty, ["k", "n"])],
            (*init, bi + ["s", "n"]),
            lambda args, acc: ([f"%m = arith.mulf {args[0]}, {args[1]} : {el}",
                                f"%r = arith.addf {acc}, %m : {el}"], "%r"),
            indent)

    def add(u, ut, v, vt, out_enc, indent):
        out = e.init(bs + [S, D], enc=out_enc, indent=indent)
        idx = bi + ["s", "d"]
        return e.generic(idx, "p" * len(idx), [(u, ut, idx), (v, vt, idx)],
                         (*out, idx),
                         lambda args, acc: ([f"%r = arith.addf {args[0]}, {args[1]} : {el}"],
                                            "%r"), indent)

    def layer(x, xty, index, indent):
        g1, g1t = weight("g1", index, indent)
        wqkv, wqkvt = weight("wqkv", index, indent)
        wo, wot = weight("wo", index, indent)
        g2, g2t = weight("g2", index, indent)
        wg, wgt = weight("wg", index, indent)
        wu, wut = weight("wu", index, indent)
        wd, wdt = weight("wd", index, indent)

        h, ht = rms_norm(x, xty, g1, g1t, indent)
        qkv, qkvt = matmul(h, ht, wqkv, wqkvt, C, indent)
        heads = {}
        zeros = ", ".join(["0"] * len(bs))
        for name, start, count in (("q", 0, H), ("k", H * hd, Hk), ("v", (H + Hk) * hd, Hk)):
            part = e.fresh(name)
            pt = e.ty(bs + [S, count * hd])
            offs = ", ".join(filter(None, [zeros, "0", str(start)]))
            sizes = ", ".join([str(d) for d in bs + [S, count * hd]])
            strides = ", ".join(["1"] * (len(bs) + 2))
            e.w(f"{part} = tensor.extract_slice {qkv}[{offs}] [{sizes}] [{strides}] "
                f": {qkvt} to {pt}", indent)
            split = e.fresh(name + "h")
            st = e.ty(bs + [S, count, hd])
            groups = [[i] for i in range(len(bs) + 1)] + [[len(bs) + 1, len(bs) + 2]]
            shape = ", ".join(str(d) for d in bs + [S, count, hd])
            e.w(f"{split} = tensor.expand_shape {part} {groups} output_shape [{shape}] "
                f": {pt} into {st}", indent)
            heads[name] = (split, st)
        (q, qt), (k, kt), (v, vt) = heads["q"], heads["k"], heads["v"]
        # scores[b, n, s, t] = sum_d q[b, s, n, d] k[b, t, n floordiv G, d]
        sc_init = e.init(bs + [H, S, S], zero, indent=indent)
        sc, sct = e.generic(
            bi + ["n", "s", "t", "d"], "p" * len(bi) + "pppr",
            [(q, qt, bi + ["s", "n", "d"]), (k, kt, bi + ["t", f"n floordiv {G}", "d"])],
            (*sc_init, bi + ["n", "s", "t"]),
            lambda args, acc: ([f"%m = arith.mulf {args[0]}, {args[1]} : {el}",
                                f"%r = arith.addf {acc}, %m : {el}"], "%r"), indent)
        # Scaled, and key t > query s masked (positions by linalg.index).
        mk_init = e.init(bs + [H, S, S], indent=indent)
        sdim, tdim = len(bi) + 1, len(bi) + 2
        mk, mkt = e.generic(
            bi + ["n", "s", "t"], "p" * (len(bi) + 3), [(sc, sct, bi + ["n", "s", "t"])],
            (*mk_init, bi + ["n", "s", "t"]),
            lambda args, acc: ([f"%qi = linalg.index {sdim} : index",
                                f"%ki = linalg.index {tdim} : index",
                                "%keep = arith.cmpi ule, %ki, %qi : index",
                                f"%sc = arith.mulf {args[0]}, {scale} : {el}",
                                f"%y = arith.select %keep, %sc, {masked} : {el}"], "%y"),
            indent)
        p_init, pt = e.init(bs + [H, S, S], indent=indent)
        p = e.fresh("p")
        e.w(f"{p} = linalg.softmax dimension({len(bs) + 2}) ins({mk} : {mkt}) "
            f"outs({p_init} : {pt}) -> {pt}", indent)
        # o[b, s, n, d] = sum_t p[b, n, s, t] v[b, t, n floordiv G, d]
        o_init = e.init(bs + [S, H, hd], zero, indent=indent)
        o, ot = e.generic(
            bi + ["s", "n", "d", "t"], "p" * len(bi) + "pppr",
            [(p, pt, bi + ["n", "s", "t"]), (v, vt, bi + ["t", f"n floordiv {G}", "d"])],
            (*o_init, bi + ["s", "n", "d"]),
            lambda args, acc: ([f"%m = arith.mulf {args[0]}, {args[1]} : {el}",
                                f"%r = arith.addf {acc}, %m : {el}"], "%r"), indent)
        o2 = e.fresh("o")
        o2t = e.ty(bs + [S, H * hd])
        groups = [[i] for i in range(len(bs) + 1)] + [[len(bs) + 1, len(bs) + 2]]
        e.w(f"{o2} = tensor.collapse_shape {o} {groups} : {ot} into {o2t}", indent)
        attn, attnt = matmul(o2, o2t, wo, wot, D, indent)
        x1, x1t = add(x, xty, attn, attnt, "", indent)
        h2, h2t = rms_norm(x1, x1t, g2, g2t, indent)
        gate, gatet = matmul(h2, h2t, wg, wgt, F, indent)
        up, upt = matmul(h2, h2t, wu, wut, F, indent)
        act_init = e.init(bs + [S, F], indent=indent)
        idx = bi + ["s", "f"]
        act, actt = e.generic(
            idx, "p" * len(idx), [(gate, gatet, idx), (up, upt, idx)], (*act_init, idx),
            lambda args, acc: ([f"%ng = arith.negf {args[0]} : {el}",
                                f"%ex = math.exp %ng : {el}",
                                f"%den = arith.addf {one}, %ex : {el}",
                                f"%sg = arith.divf {args[0]}, %den : {el}",
                                f"%y = arith.mulf %sg, {args[1]} : {el}"], "%y"), indent)
        down, downt = matmul(act, actt, wd, wdt, D, indent)
        return add(x1, x1t, down, downt, x_enc, indent)

    if a.form == "loop":
        e.w("%c0 = arith.constant 0 : index")
        e.w("%c1 = arith.constant 1 : index")
        e.w(f"%cL = arith.constant {L} : index")
        e.w(f"%out = scf.for %l = %c0 to %cL step %c1 iter_args(%h = %x) -> ({xt}) {{")
        y, _ = layer("%h", xt, "%l", 2)
        e.w(f"scf.yield {y} : {xt}", 2)
        e.w("}")
        result = "%out"
    else:
        x, xty = "%x", xt
        for index in range(L):
            x, xty = layer(x, xty, str(index), 1)
        result = x
    e.w(f"return {result} : {xt}")

    out = [f"// GENERATED by utils/e2e/gen_llama.py {' '.join(a.argv)}"]
    out.append(f"dist.mesh @mesh = {a.mesh}")
    out.append("")
    if a.expect:
        names = ", ".join(f"arg{i}" for i in range(1 + len(weights)))
        out.append(f"// EXPECT result0 = ref.llama({names}, heads={H}, "
                   f"kv_heads={Hk}, eps={a.eps})")
    args = [f"%x: {xt}"] + [f"%{n}: {e.ty(s, x)}" for n, s, x in weights]
    out.append("func.func @llama(" + ",\n    ".join(args) + f")\n    -> {xt} {{")
    out += e.lines
    out.append("}")
    return "\n".join(out) + "\n"


def auto_sharded(text):
    """The same program with every #dist.sharding encoding removed and the
    function marked dist.auto on its mesh: the parallel plan is left to
    dist-partition."""
    out, i, key = [], 0, ", #dist.sharding<"
    while True:
        j = text.find(key, i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        k, depth = j + len(key), 1
        while depth:
            depth += {"<": 1, ">": -1}.get(text[k], 0)
            k += 1
        i = k
    text = "".join(out)
    return re.sub(r"(func\.func @llama\(.*?\)\s*->\s*tensor<[^>]*>)\s*\{",
                  r"\1 attributes {dist.auto = @mesh} {", text, count=1,
                  flags=re.S)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--form", choices=["loop", "unrolled"], default="unrolled")
    ap.add_argument("--batch", type=int, default=0, help="0: no batch dim")
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=64)
    ap.add_argument("--eps", type=float, default=1.0e-5)
    ap.add_argument("--mesh", default='<["tp"=4]>')
    ap.add_argument("--tp", default="tp", help="the tensor-parallel axis")
    ap.add_argument("--dp", default="", help="the batch axis (with --batch)")
    ap.add_argument("--sp", action="store_true",
                    help="x split by tokens over the tp axis")
    ap.add_argument("--cp", default="",
                    help="x split by tokens over this axis too (after tp with --sp)")
    ap.add_argument("--element", default="f32", choices=["f32", "bf16", "f64"])
    ap.add_argument("--expect", action="store_true")
    ap.add_argument("--auto", action="store_true",
                    help="no layout anywhere: dist-partition chooses them all "
                         "(dist.auto, semantics §6a)")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    a.argv = sys.argv[1:]
    if min(a.layers, a.seq, a.hidden, a.heads, a.kv_heads, a.head_dim, a.ffn) < 1:
        ap.error("sizes must be >= 1")
    if a.heads % a.kv_heads:
        ap.error("--heads must be a multiple of --kv-heads")
    if a.batch < 0 or (a.dp and not a.batch):
        ap.error("--dp needs --batch")
    for axis in filter(None, [a.tp, a.dp, a.cp]):
        if not re.match(r'^[A-Za-z_][\w.-]*$', axis):
            ap.error(f"bad axis name {axis!r}")
    text = generate(a)
    if a.auto:
        text = auto_sharded(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()

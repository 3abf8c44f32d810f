"""The op families of semantics §6 as the fuzzer knows them.

Each family is an Op subclass, which renders itself as MLIR (`emit`) and as
NumPy (`ref`) from the same fields, and a generator function `gen_<family>`
that builds one from a Generator (generate.py) or returns None when the
program offers nothing it can use. Adding a family: write both, then list
the generator in FAMILIES (and its feature name in generate.FEATURES).
"""

import math

from .program import Const, Layout, is_float, scalar_literal

# Scalar ops by element kind: name -> MLIR op.
FLOAT_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
                "max": "arith.maximumf", "min": "arith.minimumf", "div": "arith.divf"}
INT_BINARY = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli",
              "max": "arith.maxsi", "min": "arith.minsi", "div": "arith.divsi"}
FLOAT_UNARY = {"neg": "arith.negf", "abs": "math.absf", "tanh": "math.tanh",
               "exp": "math.exp", "sqrt": "math.sqrt", "expm1": "math.expm1",
               "exp2": "math.exp2", "atan": "math.atan", "erf": "math.erf",
               "cbrt": "math.cbrt", "log1p": "math.log1p", "floor": "math.floor",
               "ceil": "math.ceil"}
INT_UNARY = {"abs": "math.absi"}
# The same in NumPy (arguments already in the element's NumPy type). Integer
# division truncates toward zero, as arith.divsi does.
NP_BINARY = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
             "max": "np.maximum({0}, {1})", "min": "np.minimum({0}, {1})",
             "div": "({0} / {1})"}
NP_INT_DIV = "(np.sign({0}) * np.sign({1}) * (np.abs({0}) // np.abs({1})))"
NP_UNARY = {"neg": "(-{0})", "abs": "np.abs({0})", "tanh": "np.tanh({0})",
            "exp": "np.exp({0})", "sqrt": "np.sqrt({0})", "expm1": "np.expm1({0})",
            "exp2": "np.exp2({0})", "atan": "np.arctan({0})", "cbrt": "np.cbrt({0})",
            "log1p": "np.log1p({0})", "floor": "np.floor({0})", "ceil": "np.ceil({0})",
            # no erf in numpy: math.erf element by element, in the input's type
            "erf": "(lambda a: np.vectorize(__import__('math').erf, otypes=[a.dtype])(a))"
                   "(np.asarray({0}))"}
NP_REDUCE = {"add": "np.sum", "mul": "np.prod", "max": "np.max", "min": "np.min"}
PREDICATES = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "eq": "==", "ne": "!="}
FLOAT_PREDICATES = {"olt": "<", "ole": "<=", "ogt": ">", "oge": ">="}


def binary_op(dtype, name):
    return (FLOAT_BINARY if is_float(dtype) else INT_BINARY)[name]


def unary_op(dtype, name):
    return (FLOAT_UNARY if is_float(dtype) else INT_UNARY)[name]


def np_binary(rf, name, a, b):
    if name == "div" and not is_float(rf.dt):
        return rf.wrap(NP_INT_DIV.format(a, b))
    return rf.wrap(NP_BINARY[name].format(a, b))


def np_unary(rf, name, a):
    return rf.wrap(NP_UNARY[name].format(a))


def tuple_text(xs):
    xs = list(xs)
    return "(" + ", ".join(map(str, xs)) + ("," if len(xs) == 1 else "") + ")"


def list_text(xs):
    return "[" + ", ".join(map(str, xs)) + "]"


class Op:
    family = "?"

    def __init__(self, result):
        self.result = result

    def operands(self):
        """The operands (vids and Consts), the init excluded."""
        return []

    def inputs(self):
        vids = [x for x in self.operands() if not isinstance(x, Const)]
        init = getattr(self, "init", None)
        if init and init[0] == "value":
            vids.append(init[1])
        return vids

    def replace(self, old, new):
        for attr in ("a", "b"):
            if getattr(self, attr, None) == old and not isinstance(getattr(self, attr), Const):
                setattr(self, attr, new)
        if hasattr(self, "ins"):
            self.ins = [new if (x == old and not isinstance(x, Const)) else x for x in self.ins]
        init = getattr(self, "init", None)
        if init and init[0] == "value" and init[1] == old:
            self.init = ("value", new)

    def simpler(self, prog):
        """Variants of this op with the same result shape, simpler first
        (for the minimizer). Each is a fresh object."""
        return []

    # init: None (tensor.empty), ("fill", c) or ("value", vid)
    def emit_init(self, em):
        init = getattr(self, "init", None)
        if init is None:
            return em.init(self.result)
        if init[0] == "fill":
            return em.init(self.result, init[1])
        return em.operand(init[1], em.type(self.result))[0]

    def ref_init(self, rf):
        init = self.init
        prog = rf.prog
        if init is None:
            return None
        if init[0] == "fill":
            shape = tuple(prog.sizes(self.result))
            return f"np.full({shape}, {rf.const(init[1])})"
        return rf.ref(init[1])

    def init_variants(self):
        """The init replaced by a fill of 0 (or dropped)."""
        init = getattr(self, "init", None)
        out = []
        if init and init[0] == "value":
            out.append(("fill", 0))
        if init and init[0] == "fill" and init[1] != 0:
            out.append(("fill", 0))
        return out


def _copy(op, **changes):
    import copy as _c
    new = _c.deepcopy(op)
    for k, v in changes.items():
        setattr(new, k, v)
    return new


# --------------------------------------------------------------------------
# Elementwise arith/math on tensors (operands and result of one type)
# --------------------------------------------------------------------------


class UnaryOp(Op):
    """An op of one tensor operand, `a` (most data movement and casts)."""

    def __init__(self, result, a):
        super().__init__(result)
        self.a = a

    def operands(self):
        return [self.a]

class Elementwise(Op):
    family = "eltwise"

    def __init__(self, result, name, ins):
        super().__init__(result)
        self.name, self.ins = name, list(ins)

    def operands(self):
        return self.ins

    def emit(self, em):
        ty = em.type(self.result)
        names = [em.operand(x, ty)[0] for x in self.ins]
        dt = em.dt
        op = binary_op(dt, self.name) if len(names) == 2 else unary_op(dt, self.name)
        em.emit(f"{em.name(self.result)} = {op} {', '.join(names)} : {ty}")

    def ref(self, rf):
        args = [rf.operand(x) for x in self.ins]
        if len(args) == 2:
            return np_binary(rf, self.name, *args)
        return np_unary(rf, self.name, args[0])


def _second_operand(g, a, same_type):
    """A second operand for a binary elementwise op on value a: another
    value of a's shape (of a's type when `same_type`), a new argument, or a
    splat constant."""
    prog, rng = g.prog, g.rng
    v = prog.values[a]
    r = rng.random()
    if r < 0.45:
        other = g.pick(lambda w: w.vid != a and w.shape == v.shape and
                       (not same_type or prog.type(w.vid) == prog.type(a)))
        if other is not None:
            return other
    if r < 0.75 and (not same_type or v.layout is not None):
        return g.arg(v.shape, layout=v.layout if same_type else None)
    return Const(g.constant())


def gen_eltwise(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: True)
    if a is None:
        return None
    v = prog.values[a]
    fl = is_float(prog.dtype)
    if rng.random() < 0.35 and fl:
        name = g.unary_name(v)
        if name is None:
            return None
        ins = [a]
    elif rng.random() < 0.15 and not fl:
        name, ins = "abs", [a]
    elif g.on("div") and rng.random() < 0.12:
        name = "div"
        # never zero; for integers never -1 either (MIN / -1 overflows)
        c = g.constant() if is_float(prog.dtype) else rng.choice([2, 3, 5, 7, -3])
        ins = [a, Const(c if c != 0 else 2.0)]
    else:
        name = rng.choice(["add", "sub", "mul", "max", "min", "add"])
        ins = [a, _second_operand(g, a, same_type=True)]
        if rng.random() < 0.3:
            ins.reverse()
    mag = g.mag_of(name, [g.operand_mag(x) for x in ins])
    if mag is None:
        return None
    res = prog.new_value(v.shape, v.layout)
    prog.values[res].mag = mag
    prog.values[res].nonneg = name in ("abs", "exp", "sqrt")
    return Elementwise(res, name, ins)


# --------------------------------------------------------------------------
# linalg.map
# --------------------------------------------------------------------------

class Map(Op):
    family = "map"

    def __init__(self, result, name, ins):
        super().__init__(result)
        self.name, self.ins = name, list(ins)

    def operands(self):
        return self.ins

    def emit(self, em):
        prog = em.prog
        free = prog.type_of(prog.values[self.result].shape, None, em.dt)
        ops = []
        for x in self.ins:
            ops.append(em.operand(x, free) if isinstance(x, Const) else em.operand(x))
        init = em.init(self.result)
        dt = em.dt
        op = binary_op(dt, self.name) if len(ops) == 2 else unary_op(dt, self.name)
        em.emit(f"{em.name(self.result)} = linalg.map {{ {op} }} "
                f"ins({', '.join(n for n, _ in ops)} : {', '.join(t for _, t in ops)}) "
                f"outs({init} : {em.type(self.result)})")

    def ref(self, rf):
        args = [rf.operand(x) for x in self.ins]
        if len(args) == 2:
            expr = np_binary(rf, self.name, *args)
        else:
            expr = np_unary(rf, self.name, args[0])
        shape = tuple(rf.prog.sizes(self.result))
        return f"np.broadcast_to({expr}, {shape})"


def gen_map(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: True)
    if a is None:
        return None
    v = prog.values[a]
    fl = is_float(prog.dtype)
    if rng.random() < 0.3 and fl:
        name = g.unary_name(v)
        if name is None:
            return None
        ins = [a]
    else:
        name = rng.choice(["add", "sub", "mul", "max", "min"])
        ins = [a, _second_operand(g, a, same_type=False)]
        if rng.random() < 0.3:
            ins.reverse()
    mag = g.mag_of(name, [g.operand_mag(x) for x in ins])
    if mag is None:
        return None
    res = prog.new_value(v.shape, g.binding(v.shape))
    prog.values[res].mag = mag
    return Map(res, name, ins)


# --------------------------------------------------------------------------
# Casts: arith.extf/truncf/fptosi/sitofp/extsi/trunci on tensors
# --------------------------------------------------------------------------

WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


def cast_op(src, dst):
    if is_float(src) and is_float(dst):
        return "arith.extf" if WIDTH[dst] > WIDTH[src] else "arith.truncf"
    if is_float(src):
        return "arith.fptosi"
    if is_float(dst):
        return "arith.sitofp"
    return "arith.extsi" if WIDTH[dst] > WIDTH[src] else "arith.trunci"


def cast_ref(rf, x, src, dst):
    """NumPy for casting x (in src's NumPy form) to dst (rf.dt)."""
    if is_float(src) and not is_float(dst):
        return rf.wrap(f"np.trunc({x}).astype(np.int64)")
    if is_float(dst):
        return rf.wrap(f"np.asarray({x}).astype({rf.np_type()})")
    return rf.wrap(x)


class Cast(UnaryOp):
    """An elementwise cast on tensors: the result keeps the operand's
    layout (arith casts need cast-compatible types)."""
    family = "cast"

    def emit(self, em):
        prog = em.prog
        src = prog.values[self.a].dtype
        r = prog.values[self.result]
        a, ta = em.operand(self.a, prog.type_of(r.shape, r.layout, src))
        em.emit(f"{em.name(self.result)} = {cast_op(src, em.dt)} {a} : {ta} to {em.type(self.result)}")

    def ref(self, rf):
        return cast_ref(rf, rf.ref(self.a), rf.prog.values[self.a].dtype, rf.dt)


def cast_targets(g, v):
    """Element types value v may be cast to (none that could overflow an
    integer: fptosi of an out-of-range value is poison; and no integer for
    a value computed from a softmax, see Value.normalized)."""
    src = v.dtype
    out = []
    for dst in g.dtype_pool():
        if dst == src or (is_float(src) and is_float(dst) and WIDTH[src] == WIDTH[dst]):
            continue
        if is_float(src) and not is_float(dst) and v.normalized:
            continue
        if is_float(src) and not is_float(dst) and v.mag >= 2 ** (WIDTH[dst] - 1) - 1:
            continue
        if not is_float(src) and dst == "bf16" and v.mag >= 2 ** 24:
            continue
        out.append(dst)
    return out


def gen_cast(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: True)
    if a is None:
        return None
    v = prog.values[a]
    targets = cast_targets(g, v)
    if not targets:
        return None
    dst = rng.choice(targets)
    res = prog.new_value(v.shape, v.layout, dtype=dst)
    prog.values[res].mag = v.mag + 1
    prog.dtype = dst
    return Cast(res, a)


# --------------------------------------------------------------------------
# linalg.generic: projected permutations, parallel/reduction loops, a body
# of arith/math ops, linalg.index
# --------------------------------------------------------------------------
#
# Body trees (tuples):
#   value: ("in", k) (k == len(ins): the out argument) | ("const", c)
#          | ("cast", index) | ("un", name, x) | ("bin", name, x, y)
#          | ("sel", cond, x, y)
#   cond:  ("icmp", pred, index, index) | ("vcmp", pred, x, y)
#   index: ("loop", d) | ("iconst", k) | ("iadd", i, j) | ("imul", i, j)

def tree_uses_index(t):
    if not isinstance(t, tuple):
        return False
    if t[0] == "loop":
        return True
    return any(tree_uses_index(x) for x in t[1:])


def tree_inputs(t):
    if not isinstance(t, tuple):
        return set()
    if t[0] == "in":
        return {t[1]}
    out = set()
    for x in t[1:]:
        out |= tree_inputs(x)
    return out


def subtrees(t):
    """Value subtrees of t (for the minimizer), t's children first."""
    out = []
    if t[0] in ("un",):
        out.append(t[2])
    elif t[0] == "bin":
        out += [t[2], t[3]]
    elif t[0] == "sel":
        out += [t[2], t[3]]
    return out


class Generic(Op):
    family = "generic"

    def __init__(self, result, loops, iters, ins, maps, outmap, body,
                 combiner=None, init=None, swap=False):
        super().__init__(result)
        self.loops = list(loops)        # dim id per loop
        self.iters = list(iters)        # "parallel" | "reduction"
        self.ins = list(ins)            # vids
        self.maps = [list(m) for m in maps]   # per input: loop per operand dim
        self.outmap = list(outmap)      # loop per result dim
        self.body = body
        self.combiner = combiner        # for reductions: add, max, min, mul
        self.init = init
        self.swap = swap                # combine(v, acc) instead of (acc, v)

    def operands(self):
        return self.ins

    # -- MLIR --------------------------------------------------------------
    def emit(self, em):
        dt = em.dt
        n = len(self.loops)
        dims = ", ".join(f"d{i}" for i in range(n))

        def amap(m):
            return f"affine_map<({dims}) -> ({', '.join(f'd{i}' for i in m)})>"

        maps = [amap(m) for m in self.maps] + [amap(self.outmap)]
        iters = ", ".join(f'"{it}"' for it in self.iters)
        ops = [em.operand(x) for x in self.ins]
        init = self.emit_init(em)
        rty = em.type(self.result)
        head = (f"{em.name(self.result)} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                f"iterator_types = [{iters}]}}")
        em.emit(head)
        if ops:
            em.emit(f"    ins({', '.join(o for o, _ in ops)} : {', '.join(t for _, t in ops)})")
        em.emit(f"    outs({init} : {rty}) {{")
        args = [f"%in{k}: {dt}" for k in range(len(ops))] + [f"%out: {dt}"]
        em.emit(f"  ^bb0({', '.join(args)}):")
        body = BodyEmitter(em, len(ops))
        y = body.value(self.body)
        if self.combiner:
            op = binary_op(dt, self.combiner)
            lhs, rhs = ("%out", y) if not self.swap else (y, "%out")
            r = body.fresh()
            body.line(f"{r} = {op} {lhs}, {rhs} : {dt}")
            y = r
        body.line(f"linalg.yield {y} : {dt}")
        em.emit(f"  }} -> {rty}")

    # -- NumPy -------------------------------------------------------------
    def loop_shape(self, prog):
        return [prog.size(d) for d in self.loops]

    def broadcast(self, expr, m, shape):
        """Operand `expr` indexed by loops m, laid out over the loop space
        (size 1 on the loops it does not depend on)."""
        order = sorted(range(len(m)), key=lambda i: m[i])
        if order != list(range(len(m))):
            expr = f"np.transpose({expr}, {tuple_text(order)})"
        target = [shape[l] if l in m else 1 for l in range(len(shape))]
        return f"np.reshape({expr}, {tuple_text(target)})"

    def ref(self, rf):
        prog = rf.prog
        shape = self.loop_shape(prog)
        leaves = {}
        for k, x in enumerate(self.ins):
            leaves[k] = rf.temp(self.broadcast(rf.ref(x), self.maps[k], shape))
        if tree_inputs(self.body) & {len(self.ins)}:
            leaves[len(self.ins)] = rf.temp(self.broadcast(self.ref_init(rf), self.outmap, shape))
        body = BodyReference(rf, shape, leaves).value(self.body)
        full = f"np.broadcast_to({body}, {tuple_text(shape)})"
        parallel = [l for l in range(len(shape)) if self.iters[l] == "parallel"]
        red = [l for l in range(len(shape)) if self.iters[l] == "reduction"]
        if red:
            kw = ", dtype=np.int64" if (not is_float(rf.dt) and self.combiner in ("add", "mul")) else ""
            full = rf.wrap(f"{NP_REDUCE[self.combiner]}({full}, axis={tuple_text(red)}{kw})")
        perm = [parallel.index(l) for l in self.outmap]
        expr = f"np.transpose(np.asarray({full}), {tuple_text(perm)})"
        if self.combiner:
            init = self.ref_init(rf)
            a, b = (init, expr) if not self.swap else (expr, init)
            expr = np_binary(rf, self.combiner, a, b)
        return expr

    def simpler(self, prog):
        out = []
        for t in subtrees(self.body):
            if not (tree_inputs(t) & {len(self.ins)}) or self.init is not None:
                out.append(_copy(self, body=t))
        used = tree_inputs(self.body)
        for k in range(len(self.ins)):
            if k in used:
                continue
            covered = {l for j, m in enumerate(self.maps) if j != k for l in m}
            if all(it == "parallel" or l in covered for l, it in enumerate(self.iters)):
                body = renumber_inputs(self.body, k)
                out.append(_copy(self, ins=self.ins[:k] + self.ins[k + 1:],
                                 maps=self.maps[:k] + self.maps[k + 1:], body=body))
        if tree_uses_index(self.body):
            out.append(_copy(self, body=strip_index(self.body)))
        for init in self.init_variants():
            out.append(_copy(self, init=init))
        return out


def renumber_inputs(t, removed):
    """t with input `removed` gone: later inputs (and the out argument)
    move down by one."""
    if not isinstance(t, tuple):
        return t
    if t[0] == "in":
        return ("in", t[1] - 1) if t[1] > removed else t
    return tuple(renumber_inputs(x, removed) if isinstance(x, tuple) else x for x in t)


def strip_index(t):
    """t with every index-dependent leaf or mask replaced by its plain
    branch."""
    if not isinstance(t, tuple):
        return t
    if t[0] == "cast":
        return ("const", 1)
    if t[0] == "sel" and t[1][0] == "icmp":
        return strip_index(t[2])
    return tuple(strip_index(x) if isinstance(x, tuple) else x for x in t)


class BodyEmitter:
    def __init__(self, em, nins):
        self.em, self.nins = em, nins
        self.memo = {}
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"%b{self.count}"

    def line(self, text):
        self.em.emit("    " + text)

    def index(self, t):
        if t in self.memo:
            return self.memo[t]
        r = self.fresh()
        kind = t[0]
        if kind == "loop":
            self.line(f"{r} = linalg.index {t[1]} : index")
        elif kind == "iconst":
            self.line(f"{r} = arith.constant {t[1]} : index")
        else:
            x, y = self.index(t[1]), self.index(t[2])
            op = "arith.addi" if kind == "iadd" else "arith.muli"
            self.line(f"{r} = {op} {x}, {y} : index")
        self.memo[t] = r
        return r

    def value(self, t):
        if t in self.memo:
            return self.memo[t]
        dt = self.em.dt
        kind = t[0]
        if kind == "in":
            return "%out" if t[1] == self.nins else f"%in{t[1]}"
        r = self.fresh()
        if kind == "const":
            self.line(f"{r} = arith.constant {scalar_literal(dt, t[1])} : {dt}")
        elif kind == "cast":
            i = self.index(t[1])
            if is_float(dt):
                w = self.fresh()
                self.line(f"{w} = arith.index_cast {i} : index to i64")
                self.line(f"{r} = arith.sitofp {w} : i64 to {dt}")
            else:
                self.line(f"{r} = arith.index_cast {i} : index to {dt}")
        elif kind == "un":
            x = self.value(t[2])
            self.line(f"{r} = {unary_op(dt, t[1])} {x} : {dt}")
        elif kind == "bin":
            x, y = self.value(t[2]), self.value(t[3])
            self.line(f"{r} = {binary_op(dt, t[1])} {x}, {y} : {dt}")
        elif kind == "sel":
            c = self.cond(t[1])
            x, y = self.value(t[2]), self.value(t[3])
            self.line(f"{r} = arith.select {c}, {x}, {y} : {dt}")
        else:
            raise ValueError(f"bad body node {t}")
        self.memo[t] = r
        return r

    def cond(self, t):
        if t in self.memo:
            return self.memo[t]
        dt = self.em.dt
        r = self.fresh()
        if t[0] == "icmp":
            x, y = self.index(t[2]), self.index(t[3])
            self.line(f"{r} = arith.cmpi {t[1]}, {x}, {y} : index")
        else:
            x, y = self.value(t[2]), self.value(t[3])
            op = "arith.cmpf" if is_float(dt) else "arith.cmpi"
            self.line(f"{r} = {op} {t[1]}, {x}, {y} : {dt}")
        self.memo[t] = r
        return r


class BodyReference:
    def __init__(self, rf, shape, leaves):
        self.rf, self.shape, self.leaves = rf, shape, leaves

    def index(self, t):
        kind = t[0]
        if kind == "loop":
            d = t[1]
            target = [self.shape[d] if l == d else 1 for l in range(len(self.shape))]
            return f"np.arange({self.shape[d]}).reshape({tuple_text(target)})"
        if kind == "iconst":
            return str(t[1])
        x, y = self.index(t[1]), self.index(t[2])
        return f"({x} {'+' if kind == 'iadd' else '*'} {y})"

    def value(self, t):
        rf = self.rf
        dt = rf.dt
        kind = t[0]
        if kind == "in":
            return self.leaves[t[1]]
        if kind == "const":
            return rf.const(t[1])
        if kind == "cast":
            i = self.index(t[1])
            if is_float(dt):
                return rf.wrap(f"np.asarray({i}).astype({rf.np_type()})")
            return rf.wrap(f"np.asarray({i}, np.int64)")
        if kind == "un":
            return np_unary(rf, t[1], self.value(t[2]))
        if kind == "bin":
            return np_binary(rf, t[1], self.value(t[2]), self.value(t[3]))
        if kind == "sel":
            return f"np.where({self.cond(t[1])}, {self.value(t[2])}, {self.value(t[3])})"
        raise ValueError(f"bad body node {t}")

    def cond(self, t):
        if t[0] == "icmp":
            return f"({self.index(t[2])} {PREDICATES[t[1]]} {self.index(t[3])})"
        preds = FLOAT_PREDICATES if is_float(self.rf.dt) else PREDICATES
        return f"({self.value(t[2])} {preds[t[1]]} {self.value(t[3])})"


def _map_into(g, vid, loops, used=None):
    """A projected permutation reading value vid over `loops` (a loop per
    operand dim, distinct, with the operand dim's id), or None."""
    shape = g.prog.values[vid].shape
    order = list(range(len(shape)))
    g.rng.shuffle(order)
    taken = set(used or ())
    m = [None] * len(shape)
    for i in order:
        cands = [l for l, d in enumerate(loops) if d == shape[i] and l not in taken]
        if not cands:
            return None
        m[i] = g.rng.choice(cands)
        taken.add(m[i])
    return m


def gen_generic(g):
    rng, prog = g.rng, g.prog
    primary = g.pick(lambda v: 1 <= len(v.shape) <= 3)
    if primary is None:
        primary = g.arg(g.shape(rng.randint(1, 3)))
    pshape = prog.values[primary].shape
    slots = [("p", i) for i in range(len(pshape))]
    extra = rng.choice([0, 0, 1, 1, 2])
    slots += [("x", g.dim()) for _ in range(min(extra, 4 - len(pshape)))]
    rng.shuffle(slots)
    loops = [pshape[s[1]] if s[0] == "p" else s[1] for s in slots]
    if math.prod(prog.size(d) for d in loops) > g.max_loop_space:
        return None
    pmap = [None] * len(pshape)
    for l, s in enumerate(slots):
        if s[0] == "p":
            pmap[s[1]] = l
    ins, maps = [primary], [pmap]
    # Reduction loops.
    n = len(loops)
    iters = ["parallel"] * n
    if g.on("reduction") and rng.random() < 0.5:
        for l in rng.sample(range(n), rng.choice([1, 1, 2]) if n > 1 else 1):
            iters[l] = "reduction"
        if "parallel" not in iters and not g.on("rank0"):
            iters[rng.randrange(n)] = "parallel"
    # More inputs: values that fit the loops, or new arguments.
    for _ in range(rng.choice([0, 1, 1, 2])):
        # (the same value twice is fine: x[i, j] * x[j, i])
        cand = g.pick(lambda v: 0 < len(v.shape) <= n and _map_into(g, v.vid, loops) is not None)
        if cand is not None and rng.random() < 0.6:
            m = _map_into(g, cand, loops)
            ins.append(cand)
            maps.append(m)
        else:
            k = rng.randint(0, min(3, n))
            m = rng.sample(range(n), k)
            ins.append(g.arg([loops[l] for l in m]))
            maps.append(m)
    covered = {l for m in maps for l in m}
    for l in range(n):
        if l not in covered and iters[l] == "reduction":
            iters[l] = "parallel"
    if "parallel" not in iters and not g.on("rank0"):
        return None
    parallel = [l for l in range(n) if iters[l] == "parallel"]
    outmap = list(parallel)
    if rng.random() < 0.3:
        rng.shuffle(outmap)
    # Body.
    mags = [prog.values[x].mag for x in ins]
    combiner, init, use_out = None, None, False
    if "reduction" in iters:
        combiner = rng.choice(g.combiners())
    elif rng.random() < 0.2:
        use_out = True
    body, bmag = g.body(len(ins), mags, loops, use_out)
    if body is None:
        return None
    out_shape = [loops[l] for l in outmap]
    init_mag = 0.0
    if combiner or use_out:
        init = g.init_spec(out_shape, combiner)
        init_mag = g.init_mag(init)
    if combiner:
        count = math.prod(prog.size(loops[l]) for l in range(n) if iters[l] == "reduction")
        mag = (bmag * count if combiner == "add" else bmag) + init_mag
    else:
        mag = bmag
    if use_out:
        body = ("bin", g.rng.choice(["add", "max", "sub"]), body, ("in", len(ins)))
        mag = bmag + init_mag
    if not g.mag_ok(mag):
        return None
    res = prog.new_value(out_shape, g.binding(out_shape))
    prog.values[res].mag = mag
    return Generic(res, loops, iters, ins, maps, outmap, body, combiner, init,
                   swap=rng.random() < 0.3)


# --------------------------------------------------------------------------
# Contractions
# --------------------------------------------------------------------------

class Matmul(Op):
    family = "matmul"
    op = "linalg.matmul"

    def __init__(self, result, a, b, init):
        super().__init__(result)
        self.a, self.b, self.init = a, b, init

    def operands(self):
        return [self.a, self.b]

    def emit(self, em):
        (a, ta), (b, tb) = em.operand(self.a), em.operand(self.b)
        init = self.emit_init(em)
        rty = em.type(self.result)
        em.emit(f"{em.name(self.result)} = {self.op} ins({a}, {b} : {ta}, {tb}) "
                f"outs({init} : {rty}) -> {rty}")

    def ref(self, rf):
        a, b = rf.ref(self.a), rf.ref(self.b)
        if rf.prog.values[self.a].dtype != rf.dt:      # operands extended first
            a, b = (f"np.asarray({x}).astype({rf.np_type()})" for x in (a, b))
        prod = rf.wrap(f"np.matmul({a}, {b})")
        return rf.wrap(f"{self.ref_init(rf)} + {prod}")

    def simpler(self, prog):
        return [_copy(self, init=i) for i in self.init_variants()]


class BatchMatmul(Matmul):
    family = "batch_matmul"
    op = "linalg.batch_matmul"


def _contraction(g, rank):
    rng, prog = g.rng, g.prog
    src = prog.dtype
    # Mixed precision: bf16/f16 operands accumulating in f32, i8/i16 in i32
    # (the named ops extend their operands to the init's type).
    out_dt = src
    if g.on("cast") and rng.random() < 0.6:
        out_dt = {"bf16": "f32", "f16": "f32", "i8": "i32", "i16": "i32"}.get(src, src)
    if out_dt in ("f16", "bf16"):
        return None      # lowp sums: see Generator.combiners
    a = g.pick(lambda v: len(v.shape) == rank)
    if a is None or rng.random() < 0.25:
        a = g.arg(g.shape(rank))
    ashape = prog.values[a].shape
    k = ashape[-1]
    want = (lambda v: len(v.shape) == rank and v.shape[-2] == k and
            (rank == 2 or v.shape[0] == ashape[0]))
    b = g.pick(want) if rng.random() < 0.6 else None
    if b is None:
        b = g.arg(ashape[:-2] + [k, g.dim()])
    bshape = prog.values[b].shape
    out = ashape[:-1] + [bshape[-1]]
    if g.numel(out) > g.max_numel:
        return None
    made = _product_value(g, out, prog.values[a].mag * prog.values[b].mag * prog.size(k),
                          out_dt)
    return made and (BatchMatmul if rank == 3 else Matmul)(made[0], a, b, made[1])


def _product_value(g, shape, mag, out_dt):
    """The result and init of a product accumulated in `out_dt` whose sum of
    products is at most `mag`; None when the init makes it too large."""
    prog = g.prog
    prog.dtype = out_dt                      # the init and the result
    init = g.init_spec(shape, "add")
    mag += g.init_mag(init)
    if not g.mag_ok(mag):
        return None
    res = prog.new_value(shape, g.binding(shape))
    prog.values[res].mag = mag
    return res, init


def gen_matmul(g):
    return _contraction(g, 2)


def gen_batch_matmul(g):
    return _contraction(g, 3)


# --------------------------------------------------------------------------
# Einsum-shaped contractions (the class of issue 43): out + a * b over any
# loop structure
# --------------------------------------------------------------------------

class Einsum(Op):
    """A linalg.generic whose body is out + a * b (a and b widened to the
    output's type for f16/bf16 inputs), summed over its reduction loops.
    Each operand dim is indexed by a loop, `loop floordiv G` or `loop mod M`
    (amap/bmap: [(loop, kind, k)] with kind "id", "div" or "mod"); the
    output by the parallel loops in any order, some of which no input reads
    (a broadcast). Loops may be batch (both inputs), rows or columns (one
    input), sums over both inputs, over one, or over none."""
    family = "einsum"

    def __init__(self, result, loops, iters, a, b, amap, bmap, outmap, init, swap):
        super().__init__(result)
        self.loops = list(loops)          # dim id per loop
        self.iters = list(iters)          # "parallel" | "reduction"
        self.a, self.b = a, b
        self.amap = [tuple(x) for x in amap]
        self.bmap = [tuple(x) for x in bmap]
        self.outmap = list(outmap)        # loop per result dim
        self.init = init
        self.swap = swap                  # a * b + out instead of out + a * b

    def operands(self):
        return [self.a, self.b]

    @staticmethod
    def expr(term):
        loop, kind, k = term
        return {"id": f"d{loop}", "div": f"d{loop} floordiv {k}",
                "mod": f"d{loop} mod {k}"}[kind]

    def emit(self, em):
        n = len(self.loops)
        dims = ", ".join(f"d{i}" for i in range(n))

        def amap(exprs):
            return f"affine_map<({dims}) -> ({', '.join(exprs)})>"

        maps = [amap([self.expr(t) for t in self.amap]),
                amap([self.expr(t) for t in self.bmap]),
                amap([f"d{l}" for l in self.outmap])]
        (a, ta), (b, tb) = em.operand(self.a), em.operand(self.b)
        init = self.emit_init(em)
        rty = em.type(self.result)
        out_dt = em.dt
        in_dt = em.prog.values[self.a].dtype
        iters = ", ".join(f'"{it}"' for it in self.iters)
        em.emit(f"{em.name(self.result)} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                f"iterator_types = [{iters}]}}")
        em.emit(f"    ins({a}, {b} : {ta}, {tb}) outs({init} : {rty}) {{")
        em.emit(f"  ^bb0(%x: {in_dt}, %y: {in_dt}, %acc: {out_dt}):")
        x, y = "%x", "%y"
        if in_dt != out_dt:
            em.emit(f"    %xw = arith.extf %x : {in_dt} to {out_dt}")
            em.emit(f"    %yw = arith.extf %y : {in_dt} to {out_dt}")
            x, y = "%xw", "%yw"
        em.emit(f"    %p = arith.mulf {x}, {y} : {out_dt}")
        lhs, rhs = ("%p", "%acc") if self.swap else ("%acc", "%p")
        em.emit(f"    %s = arith.addf {lhs}, {rhs} : {out_dt}")
        em.emit(f"    linalg.yield %s : {out_dt}")
        em.emit(f"  }} -> {rty}")

    def gathered(self, rf, vid, terms, shape):
        """Operand vid read at every point of the loop space (size 1 on
        the loops it does not read)."""
        idx = []
        for loop, kind, k in terms:
            target = [shape[l] if l == loop else 1 for l in range(len(shape))]
            ar = f"np.arange({shape[loop]}).reshape({tuple_text(target)})"
            idx.append({"id": ar, "div": f"({ar} // {k})", "mod": f"({ar} % {k})"}[kind])
        src = f"np.asarray({rf.ref(vid)}).astype({rf.np_type()})"
        return rf.temp(f"{src}[{', '.join(idx)}]")

    def ref(self, rf):
        prog = rf.prog
        shape = [prog.size(d) for d in self.loops]
        a = self.gathered(rf, self.a, self.amap, shape)
        b = self.gathered(rf, self.b, self.bmap, shape)
        full = f"np.broadcast_to({a} * {b}, {tuple_text(shape)})"
        parallel = [l for l in range(len(shape)) if self.iters[l] == "parallel"]
        red = [l for l in range(len(shape)) if self.iters[l] == "reduction"]
        if red:
            full = f"np.sum({full}, axis={tuple_text(red)})"
        perm = [parallel.index(l) for l in self.outmap]
        expr = rf.wrap(f"np.transpose(np.asarray({full}), {tuple_text(perm)})")
        return rf.wrap(f"{self.ref_init(rf)} + {expr}")

    def simpler(self, prog):
        out = [_copy(self, init=i) for i in self.init_variants()]
        for side in ("amap", "bmap"):
            terms = getattr(self, side)
            for i, (loop, kind, k) in enumerate(terms):
                if kind != "id" and prog.size(self.loops[loop]) <= self._dim_size(prog, side, i):
                    fixed = list(terms)
                    fixed[i] = (loop, "id", 1)
                    out.append(_copy(self, **{side: fixed}))
        return out

    def _dim_size(self, prog, side, i):
        vid = self.a if side == "amap" else self.b
        return prog.size(prog.values[vid].shape[i])


def _einsum_index(g, loop, extent, role_is_shared):
    """How an operand reads `loop`: itself mostly, else `floordiv G` or
    `mod M` (the operand dim's extent follows), G and M mostly divisors of
    the loop's extent (whole groups, as grouped-query attention has)."""
    rng = g.rng
    r = rng.random()
    divisors = [k for k in range(2, extent + 1) if extent % k == 0]
    if extent >= 2 and r < 0.3:
        k = rng.choice(divisors) if rng.random() < 0.7 else rng.randint(2, extent)
        kind = "div" if r < 0.2 else "mod"
        return (loop, kind, k), (-(-extent // k) if kind == "div" else k)
    return (loop, "id", 1), None


def gen_einsum(g):
    rng, prog = g.rng, g.prog
    src = prog.dtype
    if not is_float(src):
        return None
    out_dt = "f32" if src in ("f16", "bf16") else src
    # An earlier value may be the first input: its dims become its loops.
    a_vid = g.pick(lambda v: 1 <= len(v.shape) <= 3) if rng.random() < 0.4 else None
    if a_vid is not None:
        loops = list(prog.values[a_vid].shape)
        roles = [rng.choice(["batch", "m", "k", "k", "red_a"]) for _ in loops]
        extra = (["n"] * rng.choice([0, 1, 1, 2]) + ["bcast"] * rng.choice([0, 0, 1]) +
                 ["red_b"] * rng.choice([0, 0, 1]))
        if not any(r in ("batch", "k") for r in roles):
            roles[rng.randrange(len(roles))] = "k"
    else:
        loops = []
        roles = []
        extra = (["batch"] * rng.choice([0, 0, 1, 1, 2]) + ["m"] * rng.choice([0, 1, 1, 2]) +
                 ["n"] * rng.choice([0, 1, 1, 2]) + ["k"] * rng.choice([1, 1, 2, 3]) +
                 ["bcast"] * rng.choice([0, 0, 1]) + ["red_a"] * rng.choice([0, 0, 1]) +
                 ["red_b"] * rng.choice([0, 0, 1]))
        rng.shuffle(extra)
        extra = extra[:6]
    roles += extra
    loops += [g.dim(reuse=0.3) for _ in extra]
    n = len(loops)
    if n > 6 or math.prod(prog.size(d) for d in loops) > 2 * g.max_loop_space:
        return None
    if not any(r in ("batch", "m", "n", "bcast") for r in roles) and not g.on("rank0"):
        return None
    iters = ["parallel" if r in ("batch", "m", "n", "bcast") else "reduction" for r in roles]
    in_a = [l for l in range(n) if roles[l] in ("batch", "m", "k", "red_a")]
    in_b = [l for l in range(n) if roles[l] in ("batch", "n", "k", "red_b")]
    if not in_a or not in_b:
        return None

    def operand_map(ls, plain):
        """Index terms and the operand's shape; loops in `plain` are read as
        themselves (a loop must appear plainly somewhere for linalg)."""
        terms, shape = [], []
        for l in ls:
            if l in plain:
                term, size = (l, "id", 1), None
            else:
                term, size = _einsum_index(g, l, prog.size(loops[l]), True)
            terms.append(term)
            shape.append(loops[l] if size is None else prog.new_dim(size))
        return terms, shape

    # Reductions read plainly by A (or, for red_b, by B); parallel loops are
    # the output's.
    if a_vid is not None:
        amap, ashape = [(l, "id", 1) for l in in_a], list(loops[:len(in_a)])
    else:
        in_a = rng.sample(in_a, len(in_a))
        amap, ashape = operand_map(in_a, {l for l in in_a if iters[l] == "reduction"})
    bmap, bshape = operand_map(rng.sample(in_b, len(in_b)),
                               {l for l in in_b if roles[l] == "red_b"})
    if a_vid is None:
        a_vid = g.arg(ashape)
    b_vid = None
    if rng.random() < 0.3:
        b_vid = g.pick(lambda v: v.shape == bshape and v.vid != a_vid)
    if b_vid is None:
        b_vid = g.arg(bshape)
    if max(g.numel(ashape), g.numel(bshape)) > 2 * g.max_numel:
        return None
    parallel = [l for l in range(n) if iters[l] == "parallel"]
    outmap = rng.sample(parallel, len(parallel))
    out_shape = [loops[l] for l in outmap]
    if g.numel(out_shape) > g.max_numel:
        return None
    count = math.prod(prog.size(loops[l]) for l in range(n) if iters[l] == "reduction")
    made = _product_value(g, out_shape, prog.values[a_vid].mag * prog.values[b_vid].mag * count,
                          out_dt)
    return made and Einsum(made[0], loops, iters, a_vid, b_vid, amap, bmap, outmap, made[1],
                           swap=rng.random() < 0.3)


# --------------------------------------------------------------------------
# Data movement: transpose, broadcast, reshapes, copy
# --------------------------------------------------------------------------

class Transpose(UnaryOp):
    family = "transpose"

    def __init__(self, result, a, perm):
        super().__init__(result, a)
        self.perm = list(perm)

    def emit(self, em):
        a, ta = em.operand(self.a)
        init = em.init(self.result)
        rty = em.type(self.result)
        em.emit(f"{em.name(self.result)} = linalg.transpose ins({a} : {ta}) "
                f"outs({init} : {rty}) permutation = {list_text(self.perm)}")

    def ref(self, rf):
        return f"np.transpose({rf.ref(self.a)}, {tuple_text(self.perm)})"


def gen_transpose(g):
    rng, prog = g.rng, g.prog

    def ok(v):
        if len(v.shape) < 2:
            return False
        p = prog.producer(v.vid)
        return g.on("transpose-of-broadcast") or not isinstance(p, Broadcast)

    a = g.pick(ok)
    if a is None:
        return None
    shape = prog.values[a].shape
    perm = list(range(len(shape)))
    while perm == sorted(perm):
        rng.shuffle(perm)
    out = [shape[i] for i in perm]
    res = prog.new_value(out, g.binding(out))
    prog.values[res].mag = prog.values[a].mag
    return Transpose(res, a, perm)


class Broadcast(UnaryOp):
    family = "broadcast"

    def __init__(self, result, a, dims):
        super().__init__(result, a)
        self.dims = list(dims)

    def emit(self, em):
        a, ta = em.operand(self.a)
        init = em.init(self.result)
        rty = em.type(self.result)
        em.emit(f"{em.name(self.result)} = linalg.broadcast ins({a} : {ta}) "
                f"outs({init} : {rty}) dimensions = {list_text(self.dims)}")

    def ref(self, rf):
        shape = tuple(rf.prog.sizes(self.result))
        return (f"np.broadcast_to(np.expand_dims({rf.ref(self.a)}, {tuple_text(self.dims)}), "
                f"{tuple_text(shape)})")


def gen_broadcast(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: len(v.shape) <= 2)
    if a is None:
        return None
    shape = list(prog.values[a].shape)
    k = rng.choice([1, 1, 2]) if len(shape) <= 1 else 1
    out = list(shape)
    for _ in range(k):
        out.insert(rng.randint(0, len(out)), None)
    dims = [i for i, d in enumerate(out) if d is None]
    out = [d if d is not None else g.dim() for d in out]
    if g.numel(out) > g.max_numel:
        return None
    res = prog.new_value(out, g.binding(out))
    prog.values[res].mag = prog.values[a].mag
    return Broadcast(res, a, dims)


class Reduce(UnaryOp):
    family = "reduce"

    def __init__(self, result, a, dims, combiner, init, swap=False):
        super().__init__(result, a)
        self.dims, self.combiner, self.init, self.swap = list(dims), combiner, init, swap

    def emit(self, em):
        dt = em.dt
        a, ta = em.operand(self.a)
        init = self.emit_init(em)
        rty = em.type(self.result)
        op = binary_op(dt, self.combiner)
        lhs, rhs = ("%in", "%acc") if not self.swap else ("%acc", "%in")
        em.emit(f"{em.name(self.result)} = linalg.reduce ins({a} : {ta}) outs({init} : {rty}) "
                f"dimensions = {list_text(self.dims)}")
        em.emit(f"    (%in: {dt}, %acc: {dt}) {{")
        em.emit(f"      %r = {op} {lhs}, {rhs} : {dt}")
        em.emit(f"      linalg.yield %r : {dt}")
        em.emit("    }")

    def ref(self, rf):
        kw = ", dtype=np.int64" if (not is_float(rf.dt) and self.combiner in ("add", "mul")) else ""
        red = rf.wrap(f"{NP_REDUCE[self.combiner]}({rf.ref(self.a)}, axis={tuple_text(self.dims)}{kw})")
        init = self.ref_init(rf)
        a, b = (red, init) if not self.swap else (init, red)
        return np_binary(rf, self.combiner, a, b)

    def simpler(self, prog):
        out = [_copy(self, init=i) for i in self.init_variants()]
        if self.combiner != "add":
            out.append(_copy(self, combiner="add"))
        return out


def gen_reduce(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: len(v.shape) >= (1 if g.on("rank0") else 2))
    if a is None:
        return None
    shape = prog.values[a].shape
    k = rng.randint(1, len(shape))
    if k == len(shape) and not g.on("rank0"):
        k -= 1
    dims = sorted(rng.sample(range(len(shape)), k))
    out = [d for i, d in enumerate(shape) if i not in dims]
    combiner = rng.choice(g.combiners())
    init = g.init_spec(out, combiner)
    count = math.prod(prog.size(shape[i]) for i in dims)
    m = prog.values[a].mag
    mag = (m * count if combiner == "add" else m) + g.init_mag(init)
    if not g.mag_ok(mag):
        return None
    res = prog.new_value(out, g.binding(out))
    prog.values[res].mag = mag
    return Reduce(res, a, dims, combiner, init, swap=rng.random() < 0.3)


class Fill(Op):
    family = "fill"

    def __init__(self, result, value, splat=False):
        super().__init__(result)
        self.value, self.splat = value, splat

    def emit(self, em):
        ty = em.type(self.result)
        dt = em.dt
        if self.splat:
            em.emit(f"{em.name(self.result)} = arith.constant dense<{scalar_literal(dt, self.value)}> : {ty}")
            return
        empty = em.init(self.result)
        c = em.scalar(self.value)
        em.emit(f"{em.name(self.result)} = linalg.fill ins({c} : {dt}) outs({empty} : {ty}) -> {ty}")

    def ref(self, rf):
        shape = tuple(rf.prog.sizes(self.result))
        return f"np.full({tuple_text(shape)}, {rf.const(self.value)})"


def _gen_constant(g, splat):
    prog = g.prog
    base = g.pick(lambda v: True)
    shape = prog.values[base].shape if base is not None and g.rng.random() < 0.7 else g.shape()
    c = g.constant()
    res = prog.new_value(shape, g.binding(shape))
    prog.values[res].mag = abs(c)
    return Fill(res, c, splat)


def gen_fill(g):
    return _gen_constant(g, splat=False)


def gen_splat(g):
    return _gen_constant(g, splat=True)


class Reshape(UnaryOp):
    """tensor.expand_shape (expand=True) or tensor.collapse_shape; `groups`
    lists, per dim of the smaller side, the dims of the larger side."""
    family = "reshape"

    def __init__(self, result, a, groups, expand):
        super().__init__(result, a)
        self.groups, self.expand = [list(x) for x in groups], expand
        self.family = "expand" if expand else "collapse"

    def emit(self, em):
        a, ta = em.operand(self.a)
        rty = em.type(self.result)
        groups = "[" + ", ".join(list_text(x) for x in self.groups) + "]"
        if self.expand:
            out = list_text(em.prog.sizes(self.result))
            em.emit(f"{em.name(self.result)} = tensor.expand_shape {a} {groups} output_shape {out} "
                    f": {ta} into {rty}")
        else:
            em.emit(f"{em.name(self.result)} = tensor.collapse_shape {a} {groups} : {ta} into {rty}")

    def ref(self, rf):
        shape = tuple(rf.prog.sizes(self.result))
        return f"np.reshape({rf.ref(self.a)}, {tuple_text(shape)})"


def _reshape_ok(g):
    return len(g.prog.mesh.axes) < 3 or g.on("reshape-3d")


def gen_expand(g):
    rng, prog = g.rng, g.prog
    if not _reshape_ok(g):
        return None
    a = g.pick(lambda v: 1 <= len(v.shape) <= 3)
    if a is None:
        return None
    shape = prog.values[a].shape
    i = rng.randrange(len(shape))
    parts = g.split_dim(shape[i])
    if parts is None:
        return None
    out = shape[:i] + parts + shape[i + 1:]
    groups, pos = [], 0
    for j in range(len(shape)):
        width = len(parts) if j == i else 1
        groups.append(list(range(pos, pos + width)))
        pos += width
    res = prog.new_value(out, g.binding(out, reshape=a))
    prog.values[res].mag = prog.values[a].mag
    return Reshape(res, a, groups, expand=True)


def gen_collapse(g):
    rng, prog = g.rng, g.prog
    if not _reshape_ok(g):
        return None
    a = g.pick(lambda v: len(v.shape) >= 2)
    if a is None:
        return None
    shape = prog.values[a].shape
    i = rng.randrange(len(shape) - 1)
    j = rng.randint(i + 2, len(shape))
    merged = g.prod_dim(shape[i:j])
    out = shape[:i] + [merged] + shape[j:]
    groups = [[k] for k in range(i)] + [list(range(i, j))] + [[k] for k in range(j, len(shape))]
    res = prog.new_value(out, g.binding(out, reshape=a))
    prog.values[res].mag = prog.values[a].mag
    return Reshape(res, a, groups, expand=False)


class Copy(UnaryOp):
    family = "copy"

    def emit(self, em):
        a, ta = em.operand(self.a)
        init = em.init(self.result)
        rty = em.type(self.result)
        em.emit(f"{em.name(self.result)} = linalg.copy ins({a} : {ta}) outs({init} : {rty}) -> {rty}")

    def ref(self, rf):
        return rf.ref(self.a)


def gen_copy(g):
    prog = g.prog
    a = g.pick(lambda v: True)
    if a is None:
        return None
    shape = prog.values[a].shape
    res = prog.new_value(shape, g.layout(shape, partial=g.on("partial-binding")))
    prog.values[res].mag = prog.values[a].mag
    return Copy(res, a)


class Reshard(UnaryOp):
    """dist.reshard between two encodings (the global value is unchanged)."""
    family = "reshard"

    def emit(self, em):
        prog = em.prog
        v = prog.values[self.a]
        src = v.layout or Layout([[] for _ in v.shape])
        a, ta = em.operand(self.a, prog.type_of(v.shape, src, v.dtype))
        em.emit(f"{em.name(self.result)} = dist.reshard {a} : {ta} -> {em.type(self.result)}")

    def ref(self, rf):
        return rf.ref(self.a)


def gen_reshard(g):
    prog = g.prog
    a = g.pick(lambda v: v.layout is not None and
               (g.on("reshard-of-constant") or not isinstance(prog.producer(v.vid), Fill)))
    if a is None:
        return None
    shape = prog.values[a].shape
    res = prog.new_value(shape, g.layout(shape, partial=g.on("partial-binding") and g.rng.random() < 0.3))
    prog.values[res].mag = prog.values[a].mag
    return Reshard(res, a)


# The families, by feature name.
FAMILIES = {
    "eltwise": gen_eltwise,
    "map": gen_map,
    "generic": gen_generic,
    "matmul": gen_matmul,
    "batch_matmul": gen_batch_matmul,
    "einsum": gen_einsum,
    "transpose": gen_transpose,
    "broadcast": gen_broadcast,
    "reduce": gen_reduce,
    "fill": gen_fill,
    "splat": gen_splat,
    "expand": gen_expand,
    "collapse": gen_collapse,
    "copy": gen_copy,
    "cast": gen_cast,
    "reshard": gen_reshard,
}


# --------------------------------------------------------------------------
# Families dist-partition does not take yet (off by default; semantics §6 grows):
# slices, concat, pad, softmax
# --------------------------------------------------------------------------

class ExtractSlice(UnaryOp):
    family = "extract_slice"

    def __init__(self, result, a, offsets):
        super().__init__(result, a)
        self.offsets = list(offsets)

    def emit(self, em):
        a, ta = em.operand(self.a)
        sizes = em.prog.sizes(self.result)
        em.emit(f"{em.name(self.result)} = tensor.extract_slice {a}{list_text(self.offsets)} "
                f"{list_text(sizes)} {list_text([1] * len(sizes))} : {ta} to {em.type(self.result)}")

    def ref(self, rf):
        sizes = rf.prog.sizes(self.result)
        index = ", ".join(f"{o}:{o + n}" for o, n in zip(self.offsets, sizes))
        return f"{rf.ref(self.a)}[{index}]"


def gen_extract_slice(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: len(v.shape) >= 1)
    if a is None:
        return None
    out, offsets = [], []
    for d in prog.values[a].shape:
        n = prog.size(d)
        s = rng.randint(1, n)
        if s == n and rng.random() < 0.5:
            out.append(d)
            offsets.append(0)
            continue
        offsets.append(rng.randint(0, n - s))
        out.append(prog.new_dim(s))
    res = prog.new_value(out, g.binding(out))
    prog.values[res].mag = prog.values[a].mag
    return ExtractSlice(res, a, offsets)


class InsertSlice(Op):
    """tensor.insert_slice: the result has the destination's type."""
    family = "insert_slice"

    def __init__(self, result, src, dst, offsets):
        super().__init__(result)
        self.a, self.b, self.offsets = src, dst, list(offsets)

    def operands(self):
        return [self.a, self.b]

    def emit(self, em):
        rty = em.type(self.result)
        src, ts = em.operand(self.a)
        dst, _ = em.operand(self.b, rty)
        sizes = em.prog.sizes(self.a)
        em.emit(f"{em.name(self.result)} = tensor.insert_slice {src} into {dst}{list_text(self.offsets)} "
                f"{list_text(sizes)} {list_text([1] * len(sizes))} : {ts} into {rty}")

    def ref(self, rf):
        put = rf.helper("put")
        return f"{put}({rf.ref(self.b)}, {rf.ref(self.a)}, {tuple_text(self.offsets)})"


def gen_insert_slice(g):
    rng, prog = g.rng, g.prog
    dst = g.pick(lambda v: len(v.shape) >= 1)
    if dst is None:
        return None
    dshape = prog.values[dst].shape
    src = g.pick(lambda v: v.vid != dst and len(v.shape) == len(dshape) and
                 all(prog.size(x) <= prog.size(y) for x, y in zip(v.shape, dshape)))
    if src is None or rng.random() < 0.4:
        src = g.arg([d if rng.random() < 0.3 else prog.new_dim(rng.randint(1, prog.size(d)))
                     for d in dshape])
    offsets = [rng.randint(0, prog.size(d) - prog.size(s))
               for s, d in zip(prog.values[src].shape, dshape)]
    res = prog.new_value(dshape, prog.values[dst].layout)
    prog.values[res].mag = max(prog.values[src].mag, prog.values[dst].mag)
    return InsertSlice(res, src, dst, offsets)


class Concat(Op):
    family = "concat"

    def __init__(self, result, ins, dim):
        super().__init__(result)
        self.ins, self.dim = list(ins), dim

    def operands(self):
        return self.ins

    def emit(self, em):
        ops = [em.operand(x) for x in self.ins]
        em.emit(f"{em.name(self.result)} = tensor.concat dim({self.dim}) "
                f"{', '.join(n for n, _ in ops)} : ({', '.join(t for _, t in ops)}) -> {em.type(self.result)}")

    def ref(self, rf):
        parts = ", ".join(rf.ref(x) for x in self.ins)
        return f"np.concatenate(({parts},), axis={self.dim})"


def gen_concat(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: len(v.shape) >= 1)
    if a is None:
        return None
    shape = prog.values[a].shape
    dim = rng.randrange(len(shape))
    ins = [a]
    for _ in range(rng.choice([1, 1, 2])):
        other = g.pick(lambda v: len(v.shape) == len(shape) and
                       all(x == y for i, (x, y) in enumerate(zip(v.shape, shape)) if i != dim))
        if other is None or rng.random() < 0.4:
            other = g.arg([g.dim(0.2) if i == dim else d for i, d in enumerate(shape)])
        ins.append(other)
    total = sum(prog.size(prog.values[x].shape[dim]) for x in ins)
    out = list(shape)
    out[dim] = prog.new_dim(total)
    if g.numel(out) > g.max_numel:
        return None
    res = prog.new_value(out, g.binding(out))
    prog.values[res].mag = max(prog.values[x].mag for x in ins)
    return Concat(res, ins, dim)


class Pad(UnaryOp):
    family = "pad"

    def __init__(self, result, a, low, high, value):
        super().__init__(result, a)
        self.low, self.high, self.value = list(low), list(high), value

    def emit(self, em):
        dt = em.dt
        a, ta = em.operand(self.a)
        c = em.scalar(self.value)
        idx = ", ".join(f"%p{i}: index" for i in range(len(self.low)))
        em.emit(f"{em.name(self.result)} = tensor.pad {a} low{list_text(self.low)} "
                f"high{list_text(self.high)} {{")
        em.emit(f"  ^bb0({idx}):")
        em.emit(f"    tensor.yield {c} : {dt}")
        em.emit(f"  }} : {ta} to {em.type(self.result)}")

    def ref(self, rf):
        widths = tuple_text(f"({lo}, {hi})" for lo, hi in zip(self.low, self.high))
        return f"np.pad({rf.ref(self.a)}, {widths}, constant_values={rf.const(self.value)})"


def gen_pad(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: len(v.shape) >= 1)
    if a is None:
        return None
    shape = prog.values[a].shape
    low = [rng.choice([0, 0, 1, 2]) for _ in shape]
    high = [rng.choice([0, 0, 1, 3]) for _ in shape]
    out = [d if lo == hi == 0 else prog.new_dim(prog.size(d) + lo + hi)
           for d, lo, hi in zip(shape, low, high)]
    if g.numel(out) > g.max_numel:
        return None
    c = g.constant()
    res = prog.new_value(out, g.binding(out))
    prog.values[res].mag = max(prog.values[a].mag, abs(c))
    return Pad(res, a, low, high, c)


class Softmax(UnaryOp):
    family = "softmax"

    def __init__(self, result, a, dim):
        super().__init__(result, a)
        self.dim = dim

    def emit(self, em):
        a, ta = em.operand(self.a)
        init = em.init(self.result)
        rty = em.type(self.result)
        em.emit(f"{em.name(self.result)} = linalg.softmax dimension({self.dim}) "
                f"ins({a} : {ta}) outs({init} : {rty}) -> {rty}")

    def ref(self, rf):
        d = self.dim
        return rf.wrap(f"(lambda e: e / e.sum(axis={d}, keepdims=True))"
                       f"(np.exp({rf.ref(self.a)} - {rf.ref(self.a)}.max(axis={d}, keepdims=True)))")


def gen_softmax(g):
    rng, prog = g.rng, g.prog
    # A softmax sums, and f16/bf16 sums round differently in every order
    # (and per step, where the reference rounds once).
    if not is_float(prog.dtype) or prog.dtype in ("f16", "bf16"):
        return None
    a = g.pick(lambda v: len(v.shape) >= 1)
    if a is None:
        return None
    shape = prog.values[a].shape
    res = prog.new_value(shape, g.binding(shape))
    prog.values[res].mag = 1.0
    prog.values[res].normalized = True
    return Softmax(res, a, rng.randrange(len(shape)))


FAMILIES.update({
    "extract_slice": gen_extract_slice,
    "insert_slice": gen_insert_slice,
    "concat": gen_concat,
    "pad": gen_pad,
    "softmax": gen_softmax,
})


# --------------------------------------------------------------------------
# scf.for carrying a value: h = op(h, w) for a few iterations
# --------------------------------------------------------------------------

class Loop(Op):
    """An scf.for of `trips` iterations carrying value `a` (the loop's
    result has a's type): each iteration h = name(h, w) by a linalg.map, w a
    value the loop does not change (or a splat)."""
    family = "loop"

    def __init__(self, result, a, name, w, trips):
        super().__init__(result)
        self.a, self.name, self.w, self.trips = a, name, w, trips

    def operands(self):
        return [self.a, self.w]

    def emit(self, em):
        a, ta = em.operand(self.a, em.type(self.result))
        prog = em.prog
        free = prog.type_of(prog.values[self.result].shape, None, em.dt)
        w, tw = em.operand(self.w, free) if isinstance(self.w, Const) else em.operand(self.w)
        lo, one, hi = em.tmp("lo"), em.tmp("one"), em.tmp("hi")
        em.emit(f"{lo} = arith.constant 0 : index")
        em.emit(f"{one} = arith.constant 1 : index")
        em.emit(f"{hi} = arith.constant {self.trips} : index")
        h, iv, empty, step = em.tmp("h"), em.tmp("iv"), em.tmp("e"), em.tmp("m")
        em.emit(f"{em.name(self.result)} = scf.for {iv} = {lo} to {hi} step {one} "
                f"iter_args({h} = {a}) -> ({ta}) {{")
        em.emit(f"  {empty} = tensor.empty() : {ta}")
        em.emit(f"  {step} = linalg.map {{ {binary_op(em.dt, self.name)} }} "
                f"ins({h}, {w} : {ta}, {tw}) outs({empty} : {ta})")
        em.emit(f"  scf.yield {step} : {ta}")
        em.emit("}")

    def ref(self, rf):
        w = rf.operand(self.w)
        step = rf.wrap(np_binary(rf, self.name, "x", w))
        shape = tuple(rf.prog.sizes(self.result))
        return (f"(lambda x: [x := np.broadcast_to({step}, {shape}) "
                f"for _ in range({self.trips})][-1])({rf.ref(self.a)})")

    def simpler(self, prog):
        return [_copy(self, trips=1)] if self.trips > 1 else []


def gen_loop(g):
    rng, prog = g.rng, g.prog
    a = g.pick(lambda v: True)
    if a is None:
        return None
    v = prog.values[a]
    name = rng.choice(["add", "sub", "max", "min"])
    w = _second_operand(g, a, same_type=False)
    trips = rng.randint(1, 4)
    mag = g.operand_mag(a)
    for _ in range(trips):
        mag = g.mag_of(name, [mag, g.operand_mag(w)])
        if mag is None:
            return None
    res = prog.new_value(v.shape, v.layout, v.dtype)
    prog.values[res].mag = mag
    return Loop(res, a, name, w, trips)


FAMILIES["loop"] = gen_loop


# --------------------------------------------------------------------------
# Lookups: an embedding as exporters write it (docs/partitioning.md, "Lookups")
# --------------------------------------------------------------------------

class Lookup(Op):
    """out[s..., j] = table[row(ids[s...]), j] (data_dim 0) or
    table[j, row(ids[s...])] (data_dim 1): a linalg.generic over the ids
    whose body reads the 2-D `table` (a value it does not take as an
    operand) with tensor.extract; row(x) = trunc(x) mod the table's rows, as
    NumPy's mod (>= 0). The ids are an argument, so that dist and NumPy
    read the same rows."""
    family = "lookup"

    def __init__(self, result, table, ids, data_dim):
        super().__init__(result)
        self.table, self.ids, self.data_dim = table, ids, data_dim

    def operands(self):
        return [self.ids, self.table]

    def replace(self, old, new):
        if self.table == old:
            self.table = new
        if self.ids == old:
            self.ids = new

    def emit(self, em):
        prog = em.prog
        dt = em.dt
        ids, tids = em.operand(self.ids)
        table, ttable = em.operand(self.table)
        rows = prog.sizes(self.table)[self.data_dim]
        init = em.init(self.result)
        rty = em.type(self.result)
        n = len(prog.values[self.ids].shape)
        loops = ", ".join(f"d{k}" for k in range(n + 1))
        ids_map = f"affine_map<({loops}) -> ({', '.join(f'd{k}' for k in range(n))})>"
        out_map = f"affine_map<({loops}) -> ({loops})>"
        x, o = em.tmp("lx"), em.tmp("lo")
        iterators = ", ".join(['"parallel"'] * (n + 1))
        em.emit(f"{em.name(self.result)} = linalg.generic {{indexing_maps = [{ids_map}, {out_map}], "
                f"iterator_types = [{iterators}]}} "
                f"ins({ids} : {tids}) outs({init} : {rty}) {{")
        em.emit(f"^bb0({x}: {dt}, {o}: {dt}):")
        wide = em.tmp("li")
        if is_float(dt):
            em.emit(f"  {wide} = arith.fptosi {x} : {dt} to i64")
        elif dt != "i64":
            em.emit(f"  {wide} = arith.extsi {x} : {dt} to i64")
        else:
            wide = x
        count, zero = em.tmp("ln"), em.tmp("lz")
        m, mp, neg, row64, row, j, v = (em.tmp(h) for h in
                                        ("lm", "lmp", "lneg", "lr", "lrow", "lj", "lv"))
        em.emit(f"  {count} = arith.constant {rows} : i64")
        em.emit(f"  {zero} = arith.constant 0 : i64")
        em.emit(f"  {m} = arith.remsi {wide}, {count} : i64")
        em.emit(f"  {mp} = arith.addi {m}, {count} : i64")
        em.emit(f"  {neg} = arith.cmpi slt, {m}, {zero} : i64")
        em.emit(f"  {row64} = arith.select {neg}, {mp}, {m} : i64")
        em.emit(f"  {row} = arith.index_cast {row64} : i64 to index")
        em.emit(f"  {j} = linalg.index {n} : index")
        at = f"{row}, {j}" if self.data_dim == 0 else f"{j}, {row}"
        em.emit(f"  {v} = tensor.extract {table}[{at}] : {ttable}")
        em.emit(f"  linalg.yield {v} : {dt}")
        em.emit(f"}} -> {rty}")

    def ref(self, rf):
        prog = rf.prog
        rows = prog.sizes(self.table)[self.data_dim]
        ids = rf.ref(self.ids)
        wide = f"np.trunc({ids}).astype(np.int64)" if is_float(rf.dt) else f"np.asarray({ids}, np.int64)"
        index = rf.temp(f"np.mod({wide}, {rows})")
        table = rf.ref(self.table)
        if self.data_dim == 0:
            return f"{table}[{index}]"
        return f"np.moveaxis({table}[:, {index}], 0, -1)"


def gen_lookup(g):
    rng, prog = g.rng, g.prog
    table = None
    if rng.random() < 0.4:
        table = g.pick(lambda v: len(v.shape) == 2)
    data_dim = rng.randrange(2)
    if table is None:
        shape = [g.dim(), g.dim()]
        shape[data_dim] = prog.new_dim(rng.choice([2, 3, 5, 7, 8, 9, 12, 13]))
        if g.numel(shape) > g.max_numel:
            return None
        layout = g.layout(shape, partial=False)
        if rng.random() < 0.7:
            # The rows split (a RowwiseParallel nn.Embedding's vocabulary).
            axes = [a for a in prog.mesh.names if rng.random() < 0.6]
            for axis in axes:
                layout.drop_axis(axis)
            layout.dims[data_dim] = axes
            layout.segments[data_dim] = None
        table = g.arg(shape, layout=layout)
    tshape = prog.values[table].shape
    ids_shape = g.shape(rng.choice([1, 1, 2]))
    out = ids_shape + [tshape[1 - data_dim]]
    if g.numel(out) > g.max_numel:
        return None
    ids = g.arg(ids_shape, layout=g.layout(ids_shape))
    layout = g.binding(out)
    # Often the result is a partial sum over the axes splitting the table's
    # rows: the vocabulary-parallel form, whatever the sizes would choose.
    tlayout = prog.values[table].layout
    row_axes = tlayout.dims[data_dim] if tlayout is not None else []
    if (row_axes and not (tlayout.segments[data_dim] or None) and g.on("partial-binding")
            and rng.random() < 0.6):
        layout = g.layout(out)
        for axis in row_axes:
            layout.drop_axis(axis)
        layout.partial = ("sum", list(row_axes))
    res = prog.new_value(out, layout)
    prog.values[res].mag = prog.values[table].mag
    return Lookup(res, table, ids, data_dim)


FAMILIES["lookup"] = gen_lookup

"""The seeded generator: Generator(seed, features).program() -> Program.

The same seed and features give the same program (random.Random(seed) is
the only source of choices). Features switch op families and program
traits on and off (FEATURES); `--features` takes a comma list of names,
`all`, `default`, `-name` to remove one, `+name` to add one.
"""

import math
import random

from . import ops
from .program import Const, Layout, Mesh, Program, is_float

FEATURES = {
    # op families (ops.FAMILIES)
    "eltwise": "elementwise arith/math ops on tensors (one type for operands and result)",
    "map": "linalg.map with an arith/math op",
    "generic": "linalg.generic: projected-permutation maps, arith/math/select bodies",
    "reduction": "reduction loops in linalg.generic (combiners add, max, min, mul)",
    "index": "linalg.index in generic bodies: masks (j <= i ? x : c), iota-like values",
    "matmul": "linalg.matmul (init: a fill or an earlier value)",
    "batch_matmul": "linalg.batch_matmul",
    "einsum": "einsum-shaped linalg.generic contractions (out + a * b): batch, row, column and "
              "summed loops in any order per operand, broadcast output dims, sums over one "
              "input or none, operand dims indexed by `loop floordiv G` or `loop mod M`; "
              "f16/bf16 inputs accumulate in f32",
    "transpose": "linalg.transpose",
    "broadcast": "linalg.broadcast",
    "reduce": "linalg.reduce (add, max, min, mul)",
    "fill": "linalg.fill of a scalar into tensor.empty",
    "splat": "arith.constant dense<c> splat tensors",
    "expand": "tensor.expand_shape",
    "collapse": "tensor.collapse_shape",
    "copy": "linalg.copy into a binding layout (an explicit reshard)",
    "reshard": "dist.reshard of an encoded value into another layout",
    "reshard-of-constant": "dist.reshard reading a linalg.fill or splat of a binding type",
    "cast": "arith casts on tensors (extf, truncf, fptosi, sitofp, extsi, trunci) and "
            "mixed-precision contractions (bf16/f16 into f32, i8/i16 into i32)",
    # the op families of slices, concat, pad, softmax, index and loops
    "extract_slice": "tensor.extract_slice (static offsets, unit strides)",
    "insert_slice": "tensor.insert_slice into an earlier value",
    "concat": "tensor.concat of two or three values",
    "pad": "tensor.pad with a constant",
    "softmax": "linalg.softmax (floats)",
    "loop": "scf.for carrying a value through 1-4 iterations of an elementwise update",
    "lookup": "embedding-style lookups: a linalg.generic reading a 2-D table (by rows or by "
              "columns) with tensor.extract at rows an argument's values choose, the result "
              "often a partial sum over the axes splitting the table's rows (vocabulary-parallel)",
    # types and layouts
    "f32": "f32 programs", "f64": "f64 programs",
    "lowp": "f16 and bf16 programs",
    "int": "i32 and i64 programs (compared exactly)",
    "narrow-int": "i8 and i16 programs (compared exactly; sums wrap)",
    "binding": "ops whose result type carries a #dist.sharding (binding)",
    "partial-args": "arguments with partial = sum/max/min",
    "partial-binding": "partial layouts on binding intermediates",
    "partial-results": "partial layouts on results",
    "partial-avg-prod": "partial = avg and partial = prod among the kinds above",
    "div": "division: floats by |x| + 1 or a non-zero splat, integers by a non-zero splat",
    "math": "more math ops (expm1, exp2, atan, erf, cbrt, log1p, floor, ceil)",
    "segments": "segments [...] on split dims",
    "segments-3d": "segments on 3-D meshes too",
    "mesh3d": "3-D meshes",
    "size1-axes": "mesh axes of size 1",
    "one-device": "half the programs on a mesh of one device (the local compute alone)",
    "devices": "devices = [...]: permuted ranks, meshes not starting at rank 0",
    "rank0": "rank-0 tensors (full reductions)",
    "reshape-3d": "expand_shape/collapse_shape on 3-D meshes",
    "device": "half the programs compiled under a random topology file: a device roofline "
              "(compute priced, semantics §6a), link parameters per axis and per move kind, "
              "local copies (§3b)",
    # isolations of known bugs (off by default)
    "transpose-of-broadcast": "linalg.transpose reading a linalg.broadcast result",
    "return-twice": "one value returned as two results",
}
# Known compiler bugs (docs/fuzzing.md) keep these off unless asked for.
DEFAULT_OFF = set()
# Traits a preset asks for that would thin out the default set's meshes.
OPT_IN = {"one-device"}
DEFAULT = [f for f in FEATURES if f not in DEFAULT_OFF | OPT_IN]
# Named sets: "ci" is what test/e2e/program-fuzzer.test runs: the default
# less what still fails today (test/e2e/fuzz-regressions/PENDING.md). Put a
# feature back once its bug is fixed.
CI_OFF = set()
# "contractions": the contraction fuzzer (docs/fuzzing.md): einsum-shaped
# products of the float types, fed by reshapes and transposes, on one device
# and on random meshes and layouts.
CONTRACTIONS = ["einsum", "transpose", "expand", "collapse",
                "f32", "f64", "lowp", "binding", "segments", "size1-axes", "one-device",
                "mesh3d"]
PRESETS = {
    "default": DEFAULT,
    "all": list(FEATURES),
    "ci": [f for f in DEFAULT if f not in CI_OFF],
    "contractions": CONTRACTIONS,
}


def parse_features(text):
    """'default', 'all', 'a,b,c', 'default,-index', '+index' (comma list;
    a leading +/- edits the default set)."""
    items = [t.strip() for t in (text or "default").split(",") if t.strip()]
    if not items or items[0][0] in "+-":
        items = ["default"] + items
    chosen = []
    for item in items:
        name = item.lstrip("+-")
        if name in PRESETS:
            chosen = list(PRESETS[name])
            continue
        if name not in FEATURES:
            raise ValueError(f"unknown feature '{name}' (have: {', '.join(FEATURES)})")
        if item.startswith("-"):
            chosen = [f for f in chosen if f != name]
        elif name not in chosen:
            chosen.append(name)
    return [f for f in FEATURES if f in chosen]


# How often each family is tried (constants are operands more than ops).
FAMILY_WEIGHT = {"generic": 2.0, "matmul": 1.5, "einsum": 3.0, "fill": 0.4, "splat": 0.4, "copy": 0.6,
                 "reshard": 0.6}
AXIS_NAMES = ["x", "y", "z", "tp", "dp", "sp", "a", "b"]
# Float magnitudes above which results would lose the reference's
# tolerance or overflow (the reference follows the element type, but the
# order of sums differs).
MAG_LIMIT = {"f16": 2.0e4, "bf16": 1.0e6, "f32": 1.0e7, "f64": 1.0e12}
FLOAT_CONSTANTS = [0.0, 1.0, -1.0, 0.5, 2.0, -0.25, 3.0, 1.5, -2.5, 0.125]
INT_CONSTANTS = [0, 1, -1, 2, 3, -3, 5, 7]


class Generator:
    def __init__(self, seed, features=None, max_ops=6):
        self.seed = seed
        self.rng = random.Random(seed)
        self.features = list(features if features is not None else DEFAULT)
        self.max_ops = max_ops
        self.max_numel = 256
        self.max_loop_space = 1024
        self.prog = None

    def on(self, feature):
        return feature in self.features

    # -- mesh, types, dims ---------------------------------------------------
    def mesh(self):
        rng = self.rng
        if self.on("one-device") and rng.random() < 0.5:
            return Mesh([(rng.choice(AXIS_NAMES), 1)])
        rank = rng.choice([1, 1, 2, 2, 2] + ([3, 3] if self.on("mesh3d") else []))
        for _ in range(100):
            sizes = [rng.choice([1, 2, 2, 2, 3, 4, 4, 8] if self.on("size1-axes")
                                else [2, 2, 2, 3, 4, 4, 8]) for _ in range(rank)]
            if math.prod(sizes) <= 8 and (math.prod(sizes) > 1 or rng.random() < 0.1):
                break
        else:
            sizes = [2] * rank
        names = rng.sample(AXIS_NAMES, rank)
        n = math.prod(sizes)
        devices = None
        if self.on("devices") and rng.random() < 0.35:
            world = rng.randint(n, 8)
            devices = rng.sample(range(world), n)
            if devices == list(range(n)):
                devices = None
        return Mesh(list(zip(names, sizes)), devices)

    def dtype_pool(self):
        """The element types the features allow."""
        pool = []
        for feature, types in (("f32", ["f32"]), ("f64", ["f64"]), ("lowp", ["f16", "bf16"]),
                               ("int", ["i32", "i64"]), ("narrow-int", ["i8", "i16"])):
            if self.on(feature):
                pool += types
        return pool or ["i32"]

    def dtype(self):
        kinds = []
        if self.on("f32"):
            kinds += ["f32"] * 3
        if self.on("f64"):
            kinds += ["f64"]
        if self.on("int"):
            kinds += ["i32", "i32", "i64"]
        if self.on("narrow-int"):
            kinds += ["i16", "i8"]
        if self.on("lowp"):
            kinds += ["f16", "bf16"]
        return self.rng.choice(kinds or ["i32"])

    def extent(self):
        return self.rng.choice([1, 2, 2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 12])

    def dim(self, reuse=0.4):
        """A dim id: an existing one (so that operands meet) or a new one."""
        prog = self.prog
        if prog.dims and self.rng.random() < reuse:
            return self.rng.choice(sorted(prog.dims))
        return prog.new_dim(self.extent())

    def shape(self, rank=None):
        if rank is None:
            rank = self.rng.choice([1, 2, 2, 2, 3])
        for _ in range(20):
            shape = [self.dim() for _ in range(rank)]
            if self.numel(shape) <= self.max_numel:
                return shape
        return [self.prog.new_dim(self.rng.choice([1, 2, 3])) for _ in range(rank)]

    def numel(self, shape):
        return math.prod(self.prog.size(d) for d in shape)

    def prod_dim(self, ids):
        """The dim whose extent is the product of `ids` (an existing one
        with the same leaves, else a new derived one)."""
        prog = self.prog
        leaves = [leaf for d in ids for leaf in prog.leaves(d)]
        if len(ids) == 1:
            return ids[0]
        for d, spec in prog.dims.items():
            if not isinstance(spec, int) and prog.leaves(d) == leaves:
                return d
        return prog.new_dim(list(ids))

    def split_dim(self, d):
        """Dims whose product is dim d (for an expand): a grouping of d's
        leaves, splitting a leaf first when d has only one."""
        prog, rng = self.prog, self.rng
        leaves = prog.leaves(d)
        if len(leaves) == 1:
            leaf = leaves[0]
            n = prog.size(leaf)
            divisors = [k for k in range(1, n + 1) if n % k == 0]
            k = rng.choice(divisors)
            if k in (1, n) and len(divisors) > 2 and rng.random() < 0.7:
                k = rng.choice(divisors[1:-1])
            prog.dims[leaf] = [prog.new_dim(k), prog.new_dim(n // k)]
            leaves = prog.leaves(d)
        # consecutive groups, at least two
        cuts = sorted(rng.sample(range(1, len(leaves)), rng.randint(1, len(leaves) - 1)))
        groups, start = [], 0
        for c in cuts + [len(leaves)]:
            groups.append(leaves[start:c])
            start = c
        return [self.prod_dim(grp) for grp in groups]

    # -- layouts -------------------------------------------------------------
    def layout(self, shape, partial=False, segments=None):
        """A random #dist.sharding for a value of `shape`."""
        rng, prog = self.rng, self.prog
        if segments is None:
            segments = self.on("segments") and (len(prog.mesh.axes) < 3 or self.on("segments-3d"))
        dims = [[] for _ in shape]
        part = []
        names = prog.mesh.names
        rng.shuffle(names)
        for axis in names:
            r = rng.random()
            if partial and r < 0.2:
                part.append(axis)
            elif r < 0.75 and shape:
                dims[rng.randrange(len(shape))].append(axis)
        segs = [None] * len(shape)
        for i, d in enumerate(shape):
            n = prog.size(d)
            if segments and dims[i] and n >= 2 and rng.random() < 0.25:
                k = rng.randint(2, min(3, n))
                cuts = sorted(rng.sample(range(1, n), k - 1))
                segs[i] = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        kinds = ["sum", "sum", "max", "min"]
        if self.on("partial-avg-prod"):
            kinds += ["avg", "prod"]
        kind = rng.choice(kinds) if part else None
        return Layout(dims, segs, (kind, part) if part else None)

    def binding(self, shape, reshape=None):
        """A binding layout for an op's result, or None (free)."""
        if not self.on("binding") or self.rng.random() > 0.3:
            return None
        return self.layout(shape, partial=self.on("partial-binding") and self.rng.random() < 0.3)

    def arg(self, shape, layout=None):
        prog = self.prog
        if layout is None:
            layout = self.layout(shape, partial=self.on("partial-args") and self.rng.random() < 0.4)
        vid = prog.new_value(shape, layout)
        prog.args.append(vid)
        v = prog.values[vid]
        v.mag = 64.0 if is_float(prog.dtype) else 100.0
        return vid

    # -- picking operands ------------------------------------------------------
    def pick(self, pred):
        """A value satisfying pred, recent ones more likely, or None."""
        prog = self.prog
        cands = [v.vid for v in prog.values.values() if v.dtype == prog.dtype and pred(v)]
        if not cands:
            return None
        weights = [(1 + i) ** 2 for i in range(len(cands))]
        return self.rng.choices(cands, weights)[0]

    # -- constants, magnitudes, bodies -----------------------------------------
    def constant(self):
        if is_float(self.prog.dtype):
            return self.rng.choice(FLOAT_CONSTANTS)
        return self.rng.choice(INT_CONSTANTS)

    def combiners(self):
        """Reduction combiners for this program. f16/bf16 sums are left
        out: their rounding depends on the order of the additions, which a
        split reduction changes, beyond any fair tolerance; max and min are
        exact in every order."""
        dt = self.prog.dtype
        if dt in ("f16", "bf16"):
            return ["max", "min"]
        return ["add", "add", "max", "min"] + ([] if is_float(dt) else ["mul"])

    def mag_ok(self, mag):
        dt = self.prog.dtype
        return not is_float(dt) or mag <= MAG_LIMIT[dt]

    def operand_mag(self, x):
        return abs(x.value) if isinstance(x, Const) else self.prog.values[x].mag

    def mag_of(self, name, mags):
        """A bound on |name(operands)|, or None when too large."""
        if name in ("add", "sub"):
            m = mags[0] + mags[1]
        elif name == "mul":
            m = mags[0] * mags[1]
        elif name in ("max", "min", "abs", "neg"):
            m = max(mags)
        elif name == "tanh":
            m = 1.0
        elif name == "exp":
            m = math.exp(min(mags[0], 700))
        elif name == "sqrt":
            m = math.sqrt(mags[0])
        elif name == "div":
            m = mags[0] / mags[1] if mags[1] > 0 else mags[0]
        elif name in ("atan", "erf"):
            m = 2.0
        elif name == "cbrt":
            m = mags[0] ** (1 / 3)
        elif name in ("floor", "ceil"):
            m = mags[0] + 1
        elif name == "log1p":
            m = math.log1p(mags[0])
        elif name == "expm1":
            m = math.exp(min(mags[0], 700))
        elif name == "exp2":
            m = 2.0 ** min(mags[0], 1000)
        else:
            raise ValueError(name)
        return m if self.mag_ok(m) else None

    def unary_name(self, v):
        names = ["neg", "abs", "tanh"]
        if v.nonneg:
            names.append("sqrt")
        small = v.mag <= (8 if self.prog.dtype == "f16" else 12)
        if small:
            names.append("exp")
        if self.on("math"):
            names += ["atan", "erf", "cbrt", "floor", "ceil"]
            if v.nonneg:
                names.append("log1p")
            if small:
                names += ["expm1", "exp2"]
        return self.rng.choice(names)

    def init_spec(self, shape, combiner):
        """The init of a reduction or contraction: a fill (often the
        combiner's identity), or an earlier value of the result's shape."""
        rng, prog = self.rng, self.prog
        if rng.random() < 0.2:
            v = self.pick(lambda w: w.shape == shape)
            if v is not None:
                return ("value", v)
        if rng.random() < 0.6:
            identity = {"add": 0, "mul": 1, "max": float("-inf"), "min": float("inf")}[combiner or "add"]
            if not is_float(prog.dtype) and combiner in ("max", "min"):
                identity = -100 if combiner == "max" else 100
            if is_float(prog.dtype) and combiner in ("max", "min") and rng.random() < 0.5:
                identity = -64.0 if combiner == "max" else 64.0
            return ("fill", identity)
        return ("fill", self.constant())

    def init_mag(self, init):
        if init[0] == "value":
            return self.prog.values[init[1]].mag
        return 0.0 if math.isinf(init[1]) else abs(init[1])

    def body(self, nins, mags, loops, use_out):
        """A body tree over inputs 0..nins-1 (every one used), constants,
        and with the index feature loop indices; (tree, magnitude bound)."""
        rng = self.rng
        dt = self.prog.dtype
        terms = [(("in", k), mags[k]) for k in range(nins)]
        if self.on("index") and rng.random() < 0.5:
            a = rng.randrange(len(loops))
            ix = ("loop", a)
            bound = self.prog.size(loops[a])
            if len(loops) > 1 and rng.random() < 0.5:
                b = rng.randrange(len(loops))
                n = self.prog.size(loops[b])
                ix = ("iadd", ("imul", ix, ("iconst", n)), ("loop", b))
                bound = bound * n + n
            terms.append((("cast", ix), float(bound)))
        if rng.random() < 0.3 or not terms:
            c = self.constant()
            terms.append((("const", c), abs(c)))
        while len(terms) > 1:
            (x, mx) = terms.pop(rng.randrange(len(terms)))
            (y, my) = terms.pop(rng.randrange(len(terms)))
            name = rng.choice(["add", "sub", "mul", "max", "min"])
            if self.on("div") and is_float(dt) and rng.random() < 0.15:
                # x / (|y| + 1): never a division by zero
                one = ("const", 1.0)
                tree = ("bin", "div", x, ("bin", "add", ("un", "abs", y), one))
                terms.append((tree, mx))
                continue
            m = self.mag_of(name, [mx, my])
            if m is None:
                name, m = "add", mx + my
            terms.append((("bin", name, x, y), m))
        tree, mag = terms[0]
        if is_float(dt) and rng.random() < 0.3:
            v = type("V", (), {"mag": mag, "nonneg": False})
            name = self.unary_name(v)
            tree, mag = ("un", name, tree), self.mag_of(name, [mag])
            if mag is None:
                return None, None
            if rng.random() < 0.3:
                tree = ("un", "sqrt", ("un", "abs", tree))
                mag = math.sqrt(mag)
        if rng.random() < 0.2:
            # relu-like select on the value itself
            zero = ("const", 0.0 if is_float(dt) else 0)
            pred = rng.choice(["ogt", "olt", "oge"] if is_float(dt) else ["sgt", "slt", "sge"])
            tree = ("sel", ("vcmp", pred, tree, zero), tree, zero)
        if self.on("index") and rng.random() < 0.4:
            i, j = rng.randrange(len(loops)), rng.randrange(len(loops))
            rhs = ("loop", j) if i != j else ("iconst", rng.randint(0, self.prog.size(loops[i])))
            pred = rng.choice(["sle", "slt", "sge", "eq", "ne"])
            c = self.constant()
            branches = (tree, ("const", c)) if rng.random() < 0.7 else (("const", c), tree)
            tree = ("sel", ("icmp", pred, ("loop", i), rhs)) + branches
            mag = max(mag, abs(c))
        if not self.mag_ok(mag):
            return None, None
        return tree, mag

    # -- the program -------------------------------------------------------------
    def topology(self, mesh):
        """A random topology file (semantics §3b) for the mesh, or None: from
        its own generator seeded by the program's seed, so that switching
        the feature on leaves every program's ops as they were. Rates span
        orders of magnitude on both sides of the defaults, so that compute
        and communication each win somewhere and the partitioner splits work
        it would otherwise keep whole."""
        rng = random.Random(f"topology:{self.seed}")
        if rng.random() < 0.5:
            return None

        def log_uniform(lo, hi):
            return float(f"{10 ** rng.uniform(math.log10(lo), math.log10(hi)):.3g}")

        axes = {}
        for name, _ in mesh.axes:
            axis = {"alpha": log_uniform(1e-7, 1e-4), "beta": log_uniform(1e-13, 1e-9)}
            kinds = ["all_gather", "all_to_all", "reduce_scatter", "all_reduce",
                     "permute", "redistribute"]
            ops_ = {k: {"alpha": log_uniform(1e-7, 1e-4), "beta": log_uniform(1e-13, 1e-9)}
                    for k in kinds if rng.random() < 0.3}
            if ops_:
                axis["ops"] = ops_
            axes[name] = axis
        topology = {"axes": axes,
                    "device": {"flops": log_uniform(1e8, 1e15),
                               "mem_bw": log_uniform(1e8, 1e13)}}
        if rng.random() < 0.5:
            topology["local"] = {"beta": log_uniform(1e-13, 1e-9)}
        return topology

    def program(self):
        rng = self.rng
        prog = Program(self.mesh(), None)
        self.prog = prog
        prog.dtype = self.dtype()
        prog.seed = self.seed
        prog.features = list(self.features)
        prog.max_ops = self.max_ops
        prog.input_seed = self.seed % 1000 + 1
        for _ in range(rng.randint(1, 2)):
            self.arg(self.shape())
        families = [f for f in ops.FAMILIES if self.on(f)]
        if not families:
            raise ValueError("no op family enabled")
        weights = [FAMILY_WEIGHT.get(f, 1.0) for f in families]
        want = rng.randint(1, self.max_ops)
        tries = 0
        base = prog.dtype
        while len(prog.ops) < want and tries < 40 * want:
            tries += 1
            family = rng.choices(families, weights)[0]
            # The op's element type: mostly that of a recent value (casts
            # bring in others), else the program's first.
            vals = list(prog.values.values())
            if vals and rng.random() < 0.8:
                prog.dtype = rng.choices(vals, [(1 + i) ** 2 for i in range(len(vals))])[0].dtype
            else:
                prog.dtype = base
            before = (dict(prog.dims), set(prog.values), list(prog.args), prog.dtype)
            op = ops.FAMILIES[family](self)
            if op is None:
                # undo what the attempt created (arguments, values, dims)
                prog.dims = before[0]
                prog.values = {k: v for k, v in prog.values.items() if k in before[1]}
                prog.args = before[2]
                prog.dtype = before[3]
                continue
            v = prog.values[op.result]
            v.normalized = v.normalized or any(
                prog.values[i].normalized for i in op.inputs())
            if not is_float(v.dtype):
                # integers wrap: past the width, any value
                v.mag = min(v.mag, 2.0 ** (ops.WIDTH[v.dtype] - 1))
            prog.ops.append(op)
        prog.dtype = base
        self.results()
        prog.dce()
        if self.on("device"):
            prog.topology = self.topology(prog.mesh)
        return prog

    def results(self):
        """The last op's value and maybe one more unused value, each
        returned in its binding layout or copied into a random one."""
        rng, prog = self.rng, self.prog
        reads_args = set(prog.args)
        for op in prog.ops:
            if set(op.inputs()) & reads_args:
                reads_args.add(op.result)
        if not prog.ops:
            chosen = [prog.args[0]]
        else:
            # the last value that reads an argument (constants alone are dull)
            last = [op.result for op in prog.ops if op.result in reads_args] or [prog.ops[-1].result]
            chosen = [last[-1]]
            used = {x for op in prog.ops for x in op.inputs()}
            leaves = [op.result for op in prog.ops if op.result not in used and op.result != chosen[0]]
            if leaves and rng.random() < 0.6:
                chosen.append(rng.choice(leaves))
            elif rng.random() < 0.15 and len(prog.ops) > 1:
                chosen.append(rng.choice([op.result for op in prog.ops if op.result != chosen[0]]))
            if self.on("return-twice") and rng.random() < 0.3:
                chosen.append(chosen[0])
        prog.results = []
        for vid in chosen:
            v = prog.values[vid]
            if v.layout is not None and rng.random() < 0.6:
                layout = v.layout
            else:
                layout = self.layout(v.shape, partial=self.on("partial-results") and rng.random() < 0.25)
            prog.results.append((vid, layout))


def generate(seed, features=None, max_ops=6):
    return Generator(seed, features, max_ops).program()

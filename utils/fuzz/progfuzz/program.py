"""The program description and its two renderings.

A Program is a mesh, a table of dimension variables, values and ops, in
plain Python objects. It renders to a global-view MLIR function (for the
compiler, docs/partitioning.md) and, independently, to one NumPy expression
per result (the reference). Nothing here parses MLIR back.

Dimensions are variables so that reshapes and shrinking stay consistent:
`dims[d]` is an int (a free extent) or a list of dim ids (their product, the
extent of a collapsed or expanded dim). Every value's shape is a list of dim
ids; two operands that must agree in extent share the id.

Reference arithmetic follows the element type: float32 arrays for f32 (numpy
rounds every operation to f32, overflow included), float16 for f16, float32
rounded to bf16 after every op (`rb`) for bf16, float64 for f64; integers in
int64 wrapped to the width after every op (`w8`, `w16`, `w32`; i64 wraps by
itself).
"""

import copy
import json
import math

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
INT_TYPES = ("i8", "i16", "i32", "i64")
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
NP_FLOAT = {"f16": "np.float16", "bf16": "np.float32", "f32": "np.float32",
            "f64": "np.float64"}
# Hexadecimal -inf / +inf for float constants (MLIR's form for non-finite).
NEG_INF = {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000",
           "f64": "0xFFF0000000000000"}
POS_INF = {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000",
           "f64": "0x7FF0000000000000"}


def is_float(dtype):
    return dtype in FLOAT_TYPES


class Mesh:
    def __init__(self, axes, devices=None):
        self.axes = [tuple(a) for a in axes]      # [(name, size)]
        self.devices = list(devices) if devices else None

    @property
    def size(self):
        return math.prod(s for _, s in self.axes)

    @property
    def names(self):
        return [n for n, _ in self.axes]

    def axis_size(self, name):
        return dict(self.axes)[name]

    @property
    def world(self):
        """The --np to run on: every rank a mesh names must exist."""
        return max(self.devices) + 1 if self.devices else self.size

    def mlir(self):
        body = ", ".join(f'"{n}"={s}' for n, s in self.axes)
        devices = ""
        if self.devices:
            devices = ", devices = [" + ", ".join(map(str, self.devices)) + "]"
        return f"dist.mesh @m = <[{body}]{devices}>"


class Layout:
    """A #dist.sharding: axes per dim (major to minor), segment lengths per
    dim (None: contiguous), partial (kind, axes) or None."""

    def __init__(self, dims, segments=None, partial=None):
        self.dims = [list(d) for d in dims]
        self.segments = list(segments) if segments else [None] * len(self.dims)
        self.partial = (partial[0], list(partial[1])) if partial and partial[1] else None

    def axes(self):
        used = [a for d in self.dims for a in d]
        return used + (self.partial[1] if self.partial else [])

    def drop_axis(self, axis):
        self.dims = [[a for a in d if a != axis] for d in self.dims]
        if self.partial:
            rest = [a for a in self.partial[1] if a != axis]
            self.partial = (self.partial[0], rest) if rest else None

    def text(self, sizes):
        parts = []
        for d, axes in enumerate(self.dims):
            part = "{" + ", ".join(f'"{a}"' for a in axes) + "}"
            seg = self.segments[d] if d < len(self.segments) else None
            if axes and seg and len(seg) >= 2 and sum(seg) == sizes[d] and min(seg) >= 1:
                part += " segments [" + ", ".join(map(str, seg)) + "]"
            parts.append(part)
        text = "#dist.sharding<@m, [" + ", ".join(parts) + "]"
        if self.partial:
            kind, axes = self.partial
            text += f", partial = {kind} {{" + ", ".join(f'"{a}"' for a in axes) + "}"
        return text + ">"


class Value:
    def __init__(self, vid, shape, dtype, layout=None):
        self.vid = vid
        self.shape = list(shape)          # dim ids
        self.dtype = dtype
        self.layout = layout              # Layout (binding) or None (free)
        # Generator hints (not semantics): a bound on |x| and x >= 0.
        self.mag = 64.0
        self.nonneg = False
        # Computed from a softmax: sums of it may be whole numbers up to
        # rounding, and the rounding depends on the order of the additions
        # (a split reduction changes it), so truncating to an integer could
        # land either side of one.
        self.normalized = False


class Const:
    """A splat constant operand (`arith.constant dense<c> : T`)."""

    def __init__(self, value):
        self.value = value


class Program:
    def __init__(self, mesh, dtype):
        self.mesh = mesh
        self.dtype = dtype
        self.dims = {}        # id -> int | [ids]
        self.values = {}      # vid -> Value
        self.args = []        # vids, in argument order
        self.ops = []         # in program order
        self.results = []     # [(vid, Layout)]
        self.next_id = 0
        self.seed = None
        self.max_ops = None
        self.features = []
        self.input_seed = 1
        # A topology file's contents (semantics §3b) to compile under, or None.
        self.topology = None

    # -- dims --------------------------------------------------------------
    def new_dim(self, spec):
        d = self.next_id
        self.next_id += 1
        self.dims[d] = spec
        return d

    def size(self, d):
        spec = self.dims[d]
        if isinstance(spec, int):
            return spec
        return math.prod(self.size(f) for f in spec)

    def leaves(self, d):
        spec = self.dims[d]
        if isinstance(spec, int):
            return [d]
        return [leaf for f in spec for leaf in self.leaves(f)]

    def sizes(self, vid):
        return [self.size(d) for d in self.values[vid].shape]

    def numel(self, vid):
        return math.prod(self.sizes(vid))

    # -- values ------------------------------------------------------------
    def new_value(self, shape, layout=None, dtype=None):
        """A new value; its element type is `dtype` or the program's
        current one (the generator sets Program.dtype per op)."""
        vid = self.next_id
        self.next_id += 1
        self.values[vid] = Value(vid, shape, dtype or self.dtype, layout)
        return vid

    def producer(self, vid):
        for op in self.ops:
            if op.result == vid:
                return op
        return None

    def users(self, vid):
        return [op for op in self.ops if vid in op.inputs()]

    def type_of(self, shape, layout, dtype=None):
        sizes = [self.size(d) for d in shape]
        dims = "".join(f"{n}x" for n in sizes)
        enc = f", {layout.text(sizes)}" if layout is not None else ""
        return f"tensor<{dims}{dtype or self.dtype}{enc}>"

    def type(self, vid):
        v = self.values[vid]
        return self.type_of(v.shape, v.layout, v.dtype)

    def dtypes(self):
        return sorted({v.dtype for v in self.values.values()})

    def replace_uses(self, old, new):
        for op in self.ops:
            op.replace(old, new)
        self.results = [(new if v == old else v, lay) for v, lay in self.results]

    def dce(self):
        """Drops ops that no result needs and unused arguments."""
        live = {v for v, _ in self.results}
        kept = []
        for op in reversed(self.ops):
            if op.result in live:
                kept.append(op)
                live.update(op.inputs())
        self.ops = list(reversed(kept))
        self.args = [a for a in self.args if a in live]
        self.values = {k: v for k, v in self.values.items() if k in live}

    def clone(self):
        return copy.deepcopy(self)

    def summary(self):
        fam = {}
        for op in self.ops:
            fam[op.family] = fam.get(op.family, 0) + 1
        mesh = "x".join(str(s) for _, s in self.mesh.axes)
        return (f"{'/'.join(self.dtypes()) or self.dtype} mesh {mesh}{' devices' if self.mesh.devices else ''}, "
                f"{len(self.args)} args, {len(self.ops)} ops "
                f"({', '.join(f'{k} {n}' for k, n in sorted(fam.items()))})")


# --------------------------------------------------------------------------
# MLIR
# --------------------------------------------------------------------------

def float_literal(dtype, c):
    if c == float("-inf"):
        return NEG_INF[dtype]
    if c == float("inf"):
        return POS_INF[dtype]
    return repr(float(c))


def scalar_literal(dtype, c):
    return float_literal(dtype, c) if is_float(dtype) else str(int(c))


class Emitter:
    """Collects the lines of the function body and hands out SSA names."""

    def __init__(self, prog):
        self.prog = prog
        self.lines = []
        self.count = 0
        self.dt = prog.dtype      # the element type of the op being emitted

    def name(self, vid):
        return f"%v{vid}"

    def tmp(self, hint="t"):
        self.count += 1
        return f"%{hint}{self.count}"

    def emit(self, line):
        self.lines.append("  " + line)

    def type(self, vid):
        return self.prog.type(vid)

    def scalar(self, c, dt=None):
        name = self.tmp("c")
        dt = dt or self.dt
        self.emit(f"{name} = arith.constant {scalar_literal(dt, c)} : {dt}")
        return name

    def operand(self, x, want=None):
        """SSA name and type of operand x (a vid or a Const). With `want`,
        the operand is given exactly that type: a splat is created in it, a
        value of another type is copied into it (after minimization a value
        may stand where another type was)."""
        dt = self.dt
        if isinstance(x, Const):
            ty = want
            name = self.tmp("s")
            self.emit(f"{name} = arith.constant dense<{scalar_literal(dt, x.value)}> : {ty}")
            return name, ty
        ty = self.type(x)
        if want is None or want == ty:
            return self.name(x), ty
        empty, name = self.tmp("e"), self.tmp("cp")
        self.emit(f"{empty} = tensor.empty() : {want}")
        self.emit(f"{name} = linalg.copy ins({self.name(x)} : {ty}) outs({empty} : {want}) -> {want}")
        return name, want

    def init(self, vid, fill=None):
        """A tensor.empty of value vid's type, filled with `fill` if given."""
        ty = self.type(vid)
        empty = self.tmp("e")
        self.emit(f"{empty} = tensor.empty() : {ty}")
        if fill is None:
            return empty
        c = self.scalar(fill, self.prog.values[vid].dtype)
        name = self.tmp("f")
        dt = self.prog.values[vid].dtype
        self.emit(f"{name} = linalg.fill ins({c} : {dt}) outs({empty} : {ty}) -> {ty}")
        return name


TOPOLOGY_PREFIX = "// TOPOLOGY: "


def topology_lines(prog):
    """The topology the program is compiled under, as one comment line that
    the runner (and a regression test's RUN line) writes to a file for
    `dist-run --topology`; none without one (older programs have no field)."""
    topology = getattr(prog, "topology", None)
    if not topology:
        return []
    return [TOPOLOGY_PREFIX + json.dumps(topology, sort_keys=True)]


def topology_of(text):
    """The topology line's JSON text in a case, or None."""
    for line in text.splitlines():
        if line.startswith(TOPOLOGY_PREFIX):
            return line[len(TOPOLOGY_PREFIX):]
    return None


def emit_mlir(prog, header=()):
    """The program as an MLIR module (a string). `header`: comment lines."""
    em = Emitter(prog)
    for op in prog.ops:
        em.dt = prog.values[op.result].dtype
        op.emit(em)
    returned, result_types, seen = [], [], set()
    allow_twice = "return-twice" in prog.features
    for vid, layout in prog.results:
        want = prog.type_of(prog.values[vid].shape, layout, prog.values[vid].dtype)
        if em.type(vid) == want and (vid not in seen or allow_twice):
            returned.append(em.name(vid))
        else:
            empty, name = em.tmp("e"), em.tmp("r")
            em.emit(f"{empty} = tensor.empty() : {want}")
            em.emit(f"{name} = linalg.copy ins({em.name(vid)} : {em.type(vid)}) "
                    f"outs({empty} : {want}) -> {want}")
            returned.append(name)
        seen.add(vid)
        result_types.append(want)
    args = ",\n    ".join(f"{em.name(a)}: {prog.type(a)}" for a in prog.args)
    if len(result_types) == 1:
        results = result_types[0]
    else:
        results = "(" + ", ".join(result_types) + ")"
    out = list(header) + topology_lines(prog)
    args = f"\n    {args}" if args else ""
    out += [prog.mesh.mlir(), "",
            f"func.func @fuzz({args})\n    -> {results} {{"]
    out += em.lines
    out.append(f"  return {', '.join(returned)} : {', '.join(result_types)}")
    out.append("}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# NumPy reference
# --------------------------------------------------------------------------

HELPERS = {
    "w8": "w8 := lambda x: (np.asarray(x, np.int64) + 128) % 256 - 128",
    "w16": "w16 := lambda x: (np.asarray(x, np.int64) + 32768) % 65536 - 32768",
    "w32": "w32 := lambda x: (np.asarray(x, np.int64) + 2147483648) % 4294967296 - 2147483648",
    # tensor.insert_slice: a copy of d with s written at offsets o
    "put": "put := lambda d, s, o: (lambda t: (t.__setitem__(tuple(slice(a, a + n) for a, n in"
           " zip(o, np.shape(s))), s), t)[1])(np.array(d))",
    # float32 -> nearest bf16 (ties to even), kept in float32
    "rb": "rb := lambda x: ((lambda u: (u + np.uint32(32767) + ((u >> np.uint32(16)) & np.uint32(1)))"
          " & np.uint32(4294901760))(np.asarray(x, np.float32).view(np.uint32))).view(np.float32)",
}


class Reference:
    """Builds the NumPy expression of values: one walrus assignment per
    value, in dependency order, with the helpers the dtype needs."""

    def __init__(self, prog):
        self.prog = prog
        self.stmts = []
        self.done = set()
        self.helpers = []
        self.count = 0
        self.dt = prog.dtype      # the element type of the op being built

    def helper(self, name):
        if name not in self.helpers:
            self.helpers.append(name)
        return name

    def wrap(self, expr, dt=None):
        """Rounds or wraps `expr` to the element type."""
        dt = dt or self.dt
        if dt in ("i8", "i16", "i32"):
            return f"{self.helper('w' + dt[1:])}({expr})"
        if dt == "bf16":
            return f"{self.helper('rb')}({expr})"
        return expr

    def np_type(self, dt=None):
        dt = dt or self.dt
        return NP_FLOAT[dt] if is_float(dt) else "np.int64"

    def const(self, c, dt=None):
        dt = dt or self.dt
        if is_float(dt):
            if c in (float("inf"), float("-inf")):
                return f"{self.np_type(dt)}({'-' if c < 0 else ''}np.inf)"
            return f"{self.np_type(dt)}({float(c)!r})"
        return f"np.int64({self.wrap_int(int(c), dt)})"

    def wrap_int(self, c, dt):
        bits = BITS[dt]
        return ((c + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))

    def operand(self, x):
        return self.const(x.value) if isinstance(x, Const) else self.ref(x)

    def temp(self, expr):
        """Binds a sub-expression to a fresh name (to keep lines short)."""
        self.count += 1
        name = f"t{self.count}"
        self.stmts.append(f"{name} := {expr}")
        return name

    def ref(self, vid):
        name = f"v{vid}"
        if vid in self.done:
            return name
        prog = self.prog
        saved, self.dt = self.dt, prog.values[vid].dtype
        if vid in prog.args:
            k = prog.args.index(vid)
            expr = f"np.asarray(arg{k}).astype({self.np_type()})"
        else:
            op = prog.producer(vid)
            expr = op.ref(self)
        self.dt = saved
        self.stmts.append(f"{name} := {expr}")
        self.done.add(vid)
        return name

    def expression(self, vid):
        result = self.ref(vid)
        parts = [HELPERS[h] for h in self.helpers] + self.stmts + [result]
        return "(" + ",\n".join(parts) + ")[-1]"


def reference_expressions(prog):
    """One NumPy expression per result (check_shards' EXPECT syntax)."""
    return [Reference(prog).expression(vid) for vid, _ in prog.results]


def expect_lines(prog):
    lines = []
    for k, expr in enumerate(reference_expressions(prog)):
        first, *rest = expr.split("\n")
        lines.append(f"// EXPECT result{k} = {first}")
        lines += [f"// ...   {line}" for line in rest]
    return lines

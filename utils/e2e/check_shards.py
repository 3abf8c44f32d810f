#!/usr/bin/env python3
"""Independent checker of dist-run's results (semantics §1, §2, §5, §6).

    check_shards.py CASE.mlir DUMP_DIR [--entry NAME]
                    [--input iota|random:SEED|npy:DIR]

Reads the global-view program CASE.mlir with regular expressions (meshes, the
entry's argument and result types, and which argument each result is a layout
change of), recomputes every argument's global tensor from the input rule of
semantics §5 (or reads it from DIR/arg<k>.npy), derives each result's expected
*global* value, and for every rank derives the expected local padded shard
from the block semantics of semantics §2, implemented here from scratch with numpy
(not through the planner or the runtime). Then it compares with
DUMP_DIR/result<k>.rank<r>.npy element by element.

Where a result's global value comes from
----------------------------------------
1. An EXPECT directive in CASE.mlir, for programs that compute (semantics §6):

       // EXPECT result0 = arg0 @ arg1
       // EXPECT result1 = np.maximum(arg0, 0).sum(axis=1,
       // ...                                      keepdims=True)

   One directive per result at most; `result<k>` is the entry's k-th result.
   A long expression continues on the lines right after it that start with
   `// ...` (joined with a space). The expression is evaluated with `np`
   (numpy), `ref` (utils/e2e/reference.py: RMSNorm, softmax, a Llama layer,
   ...) and `arg0, arg1, ...` bound to fresh copies of the entry's global
   inputs, as float64 arrays for float element types, int64 for integer
   ones and bool for i1 (the values are those dist-run feeds: already
   rounded or wrapped to the element type). Its value must have the result's
   global shape; it is converted like this:
     - float results: to float64, compared with a tolerance (below);
     - integer results: integer (or bool) values only, wrapped to the width
       like a C cast (i1 keeps the lowest bit); a float value for an integer
       result is an error of the case (use //, or .astype(np.int64)).
2. Otherwise, the argument the result is a layout change of: every dist op of
   the global view (reshard and the collectives) returns the same global
   tensor in another layout. A result that cannot be traced back to an
   argument through dist ops needs an EXPECT directive.

Comparison
----------
- Non-partial results, per rank, against the expected local padded shard.
  Layout-change results (case 2): exactly, padding included. EXPECT results
  (case 1): the padding must be exactly zero; held elements of integer types
  must be equal, those of float types close in the sense of np.isclose:
      |got - want| <= atol + rtol * |want|,
      rtol = 1e-4 (f32, f64) or 2e-2 (f16, bf16),
      atol = rtol * max(1, max |want| over the whole global result),
  NaN matching NaN and infinities matching themselves.
- Partial results: the dumps of the devices that differ only in the partial
  axes are reduced (sum, max, min, prod, avg; in float64 for floats; integer
  sums and products wrap to the width, as the runtime's do) and
  compared with the global value. Layout-change results allow for floats the
  rounding error of that reduction; EXPECT results use the rule above.

Inputs (--input, as given to dist-run): iota and random:SEED are recomputed
(docs/dist-run.md); npy:DIR reads DIR/arg<k>.npy, whose shape must be the
global shape, and converts it to the element type as dist-run does (floats:
nearest, ties to even; integers and bools: wrap-around; float data for an
integer argument is an error; integers beyond 2^53 in magnitude may round
differently for bf16).

Exit status 0 when everything matches; 1 with the differing rank, index and
values otherwise; 2 when the case (or an EXPECT expression, or an input
file) cannot be read.
"""

import argparse
import builtins
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (the NumPy model blocks, `ref` in EXPECT)

# --------------------------------------------------------------------------
# Parsing the program
# --------------------------------------------------------------------------

MESH_RE = re.compile(
    r'dist\.mesh\s+@([\w$.-]+)\s*=\s*<\s*\[(.*?)\]\s*'
    r'(?:,\s*devices\s*=\s*\[([\d\s,]*)\]\s*)?>')
AXIS_RE = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
TENSOR_RE = re.compile(
    r'tensor<\s*((?:\d+x)*)(\w+)\s*,\s*#dist\.sharding<\s*@([\w$.-]+)\s*,\s*'
    r'\[(.*?)\]\s*(?:,\s*partial\s*=\s*(\w+)\s*\{([^}]*)\})?\s*>\s*>$')
FUNC_RE = re.compile(r'func\.func\s+(?:(public|private|nested)\s+)?@([\w$.-]+)\s*\(')
DEF_RE = re.compile(r'%([\w$.-]+)\s*=\s*dist\.(\w+)\s+%([\w$.-]+)')
RETURN_RE = re.compile(r'(?:func\.)?return\s+([^:\n]*?)\s*:')
EXPECT_RE = re.compile(r'^\s*//\s*EXPECT\b\s*(.*)$')
EXPECT_HEAD_RE = re.compile(r'result(\d+)\s*=(?!=)\s*(.*)$', re.S)
CONTINUE_RE = re.compile(r'^\s*//\s*\.\.\.(?:\s|$)(.*)$')

# The global-view dist ops: each returns its operand's global tensor in
# another layout.
LAYOUT_OPS = {"reshard", "all_gather", "all_slice", "all_to_all",
              "reduce_scatter", "all_reduce", "replicate_to_partial",
              "permute", "redistribute"}

ELEMENT_TYPES = {"f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64"}
# What dist-run writes for each element type (bf16 widened to float32).
NPY_DTYPE = {"f16": np.float16, "bf16": np.float32, "f32": np.float32,
             "f64": np.float64, "i1": np.bool_, "i8": np.int8,
             "i16": np.int16, "i32": np.int32, "i64": np.int64}
# Unit roundoff of the float types, for the tolerance of reduced values.
UNIT_ROUNDOFF = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 2.0 ** -24,
                 "f64": 2.0 ** -53}


class CaseError(Exception):
    """The case file cannot be understood."""


class Mesh:
    def __init__(self, name, axes, devices):
        self.name = name
        self.axes = axes                      # [(name, size)]
        self.sizes = [s for _, s in axes]
        self.size = math.prod(self.sizes)
        self.devices = devices or list(range(self.size))
        # semantics §1: any distinct world ranks (pipeline stages use disjoint
        # sets); a rank outside a result's mesh writes no dump for it.
        if len(self.devices) != self.size or len(set(self.devices)) != self.size:
            raise CaseError(f"mesh @{name}: devices must be {self.size} "
                            "distinct ranks")

    def axis_index(self, axis):
        for i, (name, _) in enumerate(self.axes):
            if name == axis:
                return i
        raise CaseError(f"mesh @{self.name} has no axis \"{axis}\"")

    def coordinate_of_rank(self, rank):
        """semantics §1: rank = devices[L(c)], L row-major with axis 0 major."""
        linear = self.devices.index(rank)
        coord = []
        for size in reversed(self.sizes):
            coord.append(linear % size)
            linear //= size
        return list(reversed(coord))


class TensorType:
    def __init__(self, text, meshes):
        m = TENSOR_RE.match(text.strip())
        if not m:
            raise CaseError(f"not a sharded tensor type: {text.strip()}")
        dims, element, mesh, body, kind, partial = m.groups()
        if element not in ELEMENT_TYPES:
            raise CaseError(f"unsupported element type {element}")
        if mesh not in meshes:
            raise CaseError(f"unknown mesh @{mesh}")
        self.text = text.strip()
        self.shape = [int(d) for d in dims.split("x") if d]
        self.element = element
        self.mesh = meshes[mesh]
        self.dim_axes = [
            [self.mesh.axis_index(a) for a in re.findall(r'"([^"]+)"', group)]
            for group in re.findall(r'\{([^}]*)\}', body)]
        if len(self.dim_axes) != len(self.shape):
            raise CaseError(f"{self.text}: one {{...}} per dim expected")
        # semantics §2 segments: `{"tp"} segments [a, b]` after a dim's axes.
        self.segments = []
        for m_dim in re.finditer(r'\{[^}]*\}(\s*segments\s*\[([\d\s,]*)\])?', body):
            lengths = m_dim.group(2)
            self.segments.append([int(n) for n in lengths.split(",")]
                                 if lengths else None)
        self.partial_kind = kind or "sum"
        self.partial_axes = sorted(
            self.mesh.axis_index(a) for a in re.findall(r'"([^"]+)"',
                                                        partial or ""))

    def block(self, coord):
        """semantics §2: per dim, the padded local extent and, for each local
        position, the global index it holds (-1: padding). An interleaved
        dim (segments) holds its block of each segment in turn, each padded
        on its own."""
        extents, global_of = [], []
        for d, (n, axes) in enumerate(zip(self.shape, self.dim_axes)):
            parts, shard = 1, 0
            for a in axes:                      # major -> minor
                shard = shard * self.mesh.sizes[a] + coord[a]
                parts *= self.mesh.sizes[a]
            segments = self.segments[d] if d < len(self.segments) else None
            if not axes or not segments:
                segments = [n]
            index, offset = [], 0
            for length in segments:
                b = -(-length // parts)
                index += [offset + shard * b + i if shard * b + i < length else -1
                          for i in range(b)]
                offset += length
            extents.append(len(index))
            global_of.append(np.array(index, dtype=np.int64))
        return extents, global_of


def split_top_level(text):
    """Splits at commas outside <>, (), [], {} and string literals."""
    parts, depth, start, in_string = [], 0, 0, False
    for i, ch in enumerate(text):
        if in_string:
            in_string = ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:])
    return [p.strip() for p in parts]


def balanced(text, start, open_ch, close_ch):
    """Index just past the bracket matching text[start] == open_ch. A '>'
    that belongs to '->' is not a closing bracket."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch and not (close_ch == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i + 1
    raise CaseError(f"unbalanced {open_ch}{close_ch}")


def strip_comments(text):
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


class Function:
    def __init__(self, name, public, args, results, sources, untraced):
        self.name, self.public = name, public
        self.args, self.results = args, results   # [TensorType]
        # result k -> argument index, or None when the returned value
        # (untraced[k], for messages) is not a layout change of an argument.
        self.sources = sources
        self.untraced = untraced


def parse_program(text):
    text = strip_comments(text)
    meshes = {}
    for m in MESH_RE.finditer(text):
        axes = [(a, int(s)) for a, s in AXIS_RE.findall(m.group(2))]
        devices = [int(d) for d in m.group(3).split(",")] if m.group(3) else None
        meshes[m.group(1)] = Mesh(m.group(1), axes, devices)
    functions = {}
    for m in FUNC_RE.finditer(text):
        name = m.group(2)
        public = m.group(1) in (None, "public")
        args_end = balanced(text, m.end() - 1, "(", ")")
        arg_texts = split_top_level(text[m.end():args_end - 1])
        rest = text[args_end:]
        results_text = ""
        arrow = re.match(r'\s*->\s*', rest)
        pos = args_end
        if arrow:
            pos = args_end + arrow.end()
            if text[pos] == "(":
                end = balanced(text, pos, "(", ")")
                results_text = text[pos + 1:end - 1]
            else:
                end = balanced(text, text.index("<", pos), "<", ">")
                results_text = text[pos:end]
            pos = end
        body_start = text.find("{", pos)
        # Function attributes (`attributes {...}`) come before the body.
        attrs = re.match(r'\s*attributes\s*', text[pos:])
        if attrs:
            body_start = text.find("{", balanced(text, text.find("{", pos), "{", "}"))
        body_end = balanced(text, body_start, "{", "}")
        body = text[body_start + 1:body_end - 1]

        arg_names, args = [], []
        for arg in arg_texts:
            am = re.match(r'%([\w$.-]+)\s*:\s*(.*)$', arg, re.S)
            if not am:
                raise CaseError(f"@{name}: cannot read argument '{arg}'")
            arg_names.append(am.group(1))
            # Drop argument attributes: `tensor<...> {dist.foo}`.
            type_text = am.group(2)
            type_text = type_text[:balanced(type_text, type_text.index("<"), "<", ">")]
            args.append(TensorType(type_text, meshes))
        results = [TensorType(t, meshes) for t in split_top_level(results_text)]

        origin = {n: i for i, n in enumerate(arg_names)}
        for dm in DEF_RE.finditer(body):
            result, op, operand = dm.groups()
            if op in LAYOUT_OPS and operand in origin:
                origin[result] = origin[operand]
        rm = RETURN_RE.search(body)
        returned = [v.strip().lstrip("%") for v in rm.group(1).split(",")] if rm and rm.group(1).strip() else []
        if len(returned) != len(results):
            raise CaseError(f"@{name}: the return does not match the results")
        sources = [origin.get(value) for value in returned]
        functions[name] = Function(name, public, args, results, sources,
                                   returned)
    return meshes, functions


def parse_expectations(text):
    """The EXPECT directives: {k: expression text}, in the raw file (they are
    comments). See the module docstring."""
    expect = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = EXPECT_RE.match(lines[i])
        i += 1
        if not m:
            continue
        head = EXPECT_HEAD_RE.match(m.group(1).strip())
        if not head:
            raise CaseError(f"line {i}: expected '// EXPECT result<k> = "
                            f"<python expression>', got '{lines[i - 1].strip()}'")
        k, parts = int(head.group(1)), [head.group(2).strip()]
        while i < len(lines) and CONTINUE_RE.match(lines[i]):
            parts.append(CONTINUE_RE.match(lines[i]).group(1).strip())
            i += 1
        expression = " ".join(p for p in parts if p)
        if not expression:
            raise CaseError(f"EXPECT result{k}: empty expression")
        if k in expect:
            raise CaseError(f"EXPECT result{k} appears twice")
        expect[k] = expression
    return expect


# --------------------------------------------------------------------------
# Global inputs (semantics §5 and docs/dist-run.md)
# --------------------------------------------------------------------------

def round_to_bf16(x):
    """Nearest bfloat16 (8 significant bits), ties to even, from float64."""
    x = np.asarray(x, dtype=np.float64)
    mantissa, exponent = np.frexp(x)          # x = m * 2^e, 0.5 <= |m| < 1
    return np.ldexp(np.round(mantissa * 256.0), exponent - 8)  # round: half to even


def to_element(values, element):
    """Exact (float64/int64/bool) values of `values` converted to `element`:
    nearest value for floats (overflow gives infinity), two's complement
    wrap-around for integers."""
    with np.errstate(over="ignore"):
        return _to_element(values, element)


def _to_element(values, element):
    if element == "f64":
        return values.astype(np.float64)
    if element == "f32":
        return values.astype(np.float64).astype(np.float32).astype(np.float64)
    if element == "f16":
        return values.astype(np.float64).astype(np.float16).astype(np.float64)
    if element == "bf16":
        return round_to_bf16(values.astype(np.float64))
    if element == "i1":
        return (values.astype(np.int64) & 1).astype(np.bool_)
    return values.astype(np.int64).astype(NPY_DTYPE[element]).astype(np.int64)


def splitmix64(seed, n):
    """The n-th output (n >= 1, an array) of SplitMix64 seeded with `seed`."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + n.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def npy_input(tensor, path):
    """Argument `tensor`'s global value read from `path`, converted to the
    element type as dist-run converts it (see the module docstring)."""
    if not os.path.isfile(path):
        raise CaseError(f"no input file {path}")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise CaseError(f"{path}: {e}") from None
    if list(data.shape) != list(tensor.shape):
        raise CaseError(f"{path}: shape {tuple(data.shape)}, expected the "
                        f"global shape {tuple(tensor.shape)} of {tensor.text}")
    kind = data.dtype.kind
    if kind not in "fiub":
        raise CaseError(f"{path}: unsupported dtype {data.dtype.str}")
    if tensor.element in UNIT_ROUNDOFF:
        if kind == "f" or tensor.element == "f64":
            values = data.astype(np.float64)      # exact, then rounded once
            return to_element(values, tensor.element)
        if tensor.element == "f32":               # one rounding from the integer
            with np.errstate(over="ignore"):
                return data.astype(np.float32).astype(np.float64)
        return to_element(data.astype(np.float64), tensor.element)
    if kind == "f":
        raise CaseError(f"{path}: float dtype {data.dtype.str} for an integer "
                        f"argument ({tensor.element}); dist-run refuses it")
    return to_element(data.astype(np.int64), tensor.element)


def global_input(tensor, input_kind, seed):
    count = math.prod(tensor.shape)
    index = np.arange(count, dtype=np.int64)
    if input_kind == "iota":
        values = index
    else:
        z = splitmix64(seed, index + 1)
        if tensor.element in UNIT_ROUNDOFF:
            k = ((z >> np.uint64(40)) % np.uint64(2048)).astype(np.int64) - 1024
            values = k.astype(np.float64) / 16.0
        elif tensor.element == "i1":
            values = (z >> np.uint64(63)).astype(np.int64)
        else:
            values = ((z >> np.uint64(40)) % np.uint64(201)).astype(np.int64) - 100
    return to_element(values, tensor.element).reshape(tensor.shape)


# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------

def expected_shard(tensor, global_value, rank):
    coord = tensor.mesh.coordinate_of_rank(rank)
    extents, ranges = tensor.block(coord)
    local = np.zeros(extents, dtype=global_value.dtype)
    keep = [np.nonzero(g >= 0)[0] for g in ranges]
    if all(len(k) for k in keep):
        local[np.ix_(*keep)] = global_value[np.ix_(*[g[k] for g, k in zip(ranges, keep)])]
    return local, coord, ranges


def describe_rank(tensor, rank):
    coord = tensor.mesh.coordinate_of_rank(rank)
    return "rank %d (%s)" % (rank, ", ".join(
        "%s=%d" % (name, c) for (name, _), c in zip(tensor.mesh.axes, coord)))


def load_dump(path, tensor, extents, errors):
    if not os.path.exists(path):
        errors.append(f"missing {path}")
        return None
    data = np.load(path, allow_pickle=False)
    want = np.dtype(NPY_DTYPE[tensor.element])
    if data.dtype != want:
        errors.append(f"{path}: dtype {data.dtype}, expected {want}")
        return None
    if list(data.shape) != list(extents):
        errors.append(f"{path}: shape {list(data.shape)}, expected the local "
                      f"padded shape {list(extents)}")
        return None
    if tensor.element == "bf16":
        bits = data.view(np.uint32)
        bad = np.argwhere(bits & np.uint32(0xFFFF))
        if len(bad):
            errors.append(f"{path}: element {tuple(bad[0])} = "
                          f"{data[tuple(bad[0])]!r} is not a widened bf16")
            return None
    if tensor.element == "i1":
        return data.astype(np.bool_)
    return data.astype(np.float64) if tensor.element in UNIT_ROUNDOFF else data.astype(np.int64)


def report(errors, what, bad, got, want, ranges, limit=5):
    """Appends one line per differing element (`bad` marks them), at most
    `limit`, naming the local index and the global index it stands for."""
    diff = np.argwhere(bad)
    for idx in diff[:limit]:
        idx = tuple(int(i) for i in idx)
        inside = all(g[i] >= 0 for i, g in zip(idx, ranges))
        where = ("global index %s" % (tuple(int(g[i]) for i, g in zip(idx, ranges)),)
                 if inside else "padding")
        # .item(): plain Python values print the same under every numpy.
        errors.append(f"{what}: local index {idx} ({where}): got "
                      f"{got[idx].item()!r}, expected {want[idx].item()!r}")
    if len(diff) > limit:
        errors.append(f"{what}: ... {len(diff)} elements differ in all")


def reduce_group(kind, stack, element):
    if kind == "sum":
        return stack.sum(axis=0)
    if kind == "max":
        return stack.max(axis=0)
    if kind == "min":
        return stack.min(axis=0)
    if kind == "prod":
        return stack.prod(axis=0)
    if kind == "avg":
        total = stack.sum(axis=0)
        if element in UNIT_ROUNDOFF:
            return total / stack.shape[0]
        # Integer means truncate toward zero (docs/runtime.md).
        return np.trunc(total / stack.shape[0]).astype(np.int64)
    raise CaseError(f"unknown reduction {kind}")


# The tolerance of results an EXPECT expression computes (module docstring).
COMPUTE_RTOL = {"f16": 2e-2, "bf16": 2e-2, "f32": 1e-4, "f64": 1e-4}


def evaluate_expectation(k, expression, tensor, inputs):
    """The global value of result k from its EXPECT expression: float64 for
    float types, int64 (wrapped to the width) or bool for integer ones."""
    # One namespace, so that lambdas in the expression see the arguments.
    names = {f"arg{i}": value.copy() for i, value in enumerate(inputs)}
    names.update({"np": np, "ref": reference, "__builtins__": builtins})
    try:
        value = eval(expression, names)
        value = np.asarray(value)
    except Exception as e:  # the case's expression: report, don't crash
        raise CaseError(f"EXPECT result{k} = {expression}: "
                        f"{type(e).__name__}: {e}") from None
    if list(value.shape) != list(tensor.shape):
        raise CaseError(f"EXPECT result{k}: the expression has shape "
                        f"{tuple(value.shape)}, the result's global shape is "
                        f"{tuple(tensor.shape)} ({tensor.text})")
    kind = value.dtype.kind
    if tensor.element in UNIT_ROUNDOFF:
        if kind not in "fiub":
            raise CaseError(f"EXPECT result{k}: values of dtype {value.dtype} "
                            f"for a {tensor.element} result")
        return value.astype(np.float64)
    if kind not in "iub":
        raise CaseError(f"EXPECT result{k}: values of dtype {value.dtype} for "
                        f"an integer result ({tensor.element}); use integer "
                        "operations (// rather than /) or .astype(np.int64)")
    # Wrap like a C cast: through the 64-bit pattern, then to the width.
    return to_element(value.astype(np.int64), tensor.element)


def compute_mismatch(got, want, ranges, element, atol, rtol):
    """Where an EXPECT result differs: padding not exactly zero, or held
    elements not equal (integers) / not close (floats)."""
    held = np.ones(got.shape, dtype=bool)
    for d, g in enumerate(ranges):
        shape = [1] * len(ranges)
        shape[d] = len(g)
        held &= (g >= 0).reshape(shape)
    if element in UNIT_ROUNDOFF:
        inside = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        inside = got != want
    return np.where(held, inside, got != 0)


def check_result(k, tensor, global_value, dump_dir, errors, computed=False):
    """Compares result k's dumps with `global_value`; `computed` (an EXPECT
    result) selects the comparison rule of the module docstring."""
    mesh = tensor.mesh
    tolerance = ""
    if computed and tensor.element in UNIT_ROUNDOFF:
        rtol = COMPUTE_RTOL[tensor.element]
        finite = np.abs(global_value[np.isfinite(global_value)])
        atol = rtol * max(1.0, float(finite.max()) if finite.size else 0.0)
        tolerance = f" [rtol {rtol:g}, atol {atol:g}]"
    else:
        rtol = atol = 0.0

    def mismatch(got, want, ranges):
        if computed:
            return compute_mismatch(got, want, ranges, tensor.element, atol, rtol)
        return got != want

    checked = 0
    local = {}
    for rank in mesh.devices:
        want, coord, ranges = expected_shard(tensor, global_value, rank)
        got = load_dump(os.path.join(dump_dir, f"result{k}.rank{rank}.npy"),
                        tensor, want.shape, errors)
        if got is None:
            continue
        local[rank] = (got, want, coord, ranges)
        if not tensor.partial_axes:
            report(errors, f"result {k}, {describe_rank(tensor, rank)}"
                   f"{tolerance}", mismatch(got, want, ranges), got, want,
                   ranges)
            checked += got.size
    if not tensor.partial_axes or len(local) != mesh.size:
        return checked
    # Partial: reduce over the devices that differ only in the partial axes.
    groups = {}
    for rank, (_, _, coord, _) in local.items():
        key = tuple(c for a, c in enumerate(coord) if a not in tensor.partial_axes)
        groups.setdefault(key, []).append(rank)
    for ranks in groups.values():
        stack = np.stack([local[r][0] for r in ranks])
        got = reduce_group(tensor.partial_kind, stack, tensor.element)
        if (tensor.partial_kind in ("sum", "prod")
                and tensor.element in ("i8", "i16", "i32", "i64")):
            # The runtime reduces in the element type: sums and products
            # wrap (int64 arithmetic keeps the low bits right).
            got = to_element(got, tensor.element)
        want, ranges = local[ranks[0]][1], local[ranks[0]][3]
        what = (f"result {k}, partial {tensor.partial_kind} over ranks "
                f"{sorted(ranks)} (group of {describe_rank(tensor, ranks[0])})"
                f"{tolerance}")
        if computed:
            report(errors, what, mismatch(got, want, ranges), got, want, ranges)
        elif tensor.element in UNIT_ROUNDOFF:
            # Each of the p-1 combining steps rounds once (f16/bf16 combine in
            # float and round after every step), relative to the magnitudes
            # involved.
            scale = np.abs(stack).sum(axis=0)
            tol = len(ranks) * UNIT_ROUNDOFF[tensor.element] * scale
            report(errors, what, np.abs(got - want) > tol, got, want, ranges)
        else:
            report(errors, what, got != want, got, want, ranges)
        checked += got.size
    return checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case")
    parser.add_argument("dump_dir")
    parser.add_argument("--entry")
    parser.add_argument("--input", default="iota")
    args = parser.parse_args()

    npy_dir = None
    if args.input == "iota":
        input_kind, seed = "iota", 0
    elif args.input.startswith("npy:") and len(args.input) > 4:
        input_kind, seed, npy_dir = "npy", 0, args.input[4:]
    else:
        m = re.fullmatch(r"random:(\d+)", args.input)
        if not m:
            print(f"check_shards: bad --input {args.input}", file=sys.stderr)
            return 2
        input_kind, seed = "random", int(m.group(1))

    try:
        with open(args.case) as f:
            text = f.read()
        _, functions = parse_program(text)
        expect = parse_expectations(text)
        if args.entry:
            if args.entry not in functions:
                raise CaseError(f"no function @{args.entry}")
            entry = functions[args.entry]
        else:
            public = [f for f in functions.values() if f.public]
            if len(public) != 1:
                raise CaseError("expected exactly one public function; use --entry")
            entry = public[0]
        for k in sorted(expect):
            if k >= len(entry.results):
                raise CaseError(f"EXPECT result{k}: @{entry.name} has "
                                f"{len(entry.results)} result(s)")
        for k, source in enumerate(entry.sources):
            if source is None and k not in expect:
                raise CaseError(
                    f"@{entry.name}: cannot trace %{entry.untraced[k]} (result "
                    f"{k}) back to an argument through dist ops; give its "
                    f"value with '// EXPECT result{k} = <python expression>'")
        if input_kind == "npy":
            globals_ = [npy_input(t, os.path.join(npy_dir, f"arg{i}.npy"))
                        for i, t in enumerate(entry.args)]
        else:
            globals_ = [global_input(t, input_kind, seed) for t in entry.args]
        wanted = {}
        for k, tensor in enumerate(entry.results):
            if k in expect:
                wanted[k] = evaluate_expectation(k, expect[k], tensor, globals_)
            else:
                wanted[k] = globals_[entry.sources[k]]
    except CaseError as e:
        print(f"check_shards: {args.case}: {e}", file=sys.stderr)
        return 2

    errors, checked = [], 0
    expected_files = set()
    for k, tensor in enumerate(entry.results):
        expected_files |= {f"result{k}.rank{r}.npy" for r in tensor.mesh.devices}
        checked += check_result(k, tensor, wanted[k], args.dump_dir, errors,
                                computed=k in expect)
    extra = sorted(set(f for f in os.listdir(args.dump_dir) if f.endswith(".npy"))
                   - expected_files) if os.path.isdir(args.dump_dir) else []
    if extra:
        errors.append(f"unexpected files in {args.dump_dir}: {', '.join(extra)}")
    if errors:
        for e in errors:
            print(f"check_shards: {e}", file=sys.stderr)
        print(f"check_shards: FAILED: @{entry.name}, {len(errors)} problem(s)",
              file=sys.stderr)
        return 1
    ranks = max((t.mesh.size for t in entry.results), default=0)
    print(f"check_shards: OK: @{entry.name}, {len(entry.results)} result(s) on "
          f"{ranks} ranks, {checked} elements checked ({args.input} inputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

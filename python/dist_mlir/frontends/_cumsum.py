"""Cumulative sums as products with a triangular matrix of ones.

JAX lowers ``jnp.cumsum`` / ``lax.cumsum`` to a ``stablehlo.reduce_window``
whose window spans the whole axis, padded by n - 1 zeros before it (after
it for ``reverse=True``), with an add body. IREE's input conversion turns
that into ``iree_linalg_ext.scan``, which no upstream MLIR tool reads. Here
it becomes what the PyTorch door makes of ``torch.cumsum`` (torch.py,
``_decompositions``): ``x`` contracted over the axis with an n x n matrix
``T[i, j] = (i <= j)`` (``i >= j`` reversed), built from iotas, then the
axis moved back. dist partitions that like any product (the other axes
split freely, the summed one too, with a partial sum); floating-point
results differ from a sequential scan only by reassociation (semantics
§6). Other windows (``cummax``, pooling) are left as they are.
"""

from __future__ import annotations

import re

# The generic form JAX prints: operands, properties, the body, the types.
_REDUCE_WINDOW = re.compile(
    r'^(?P<indent>[ \t]*)(?P<result>%[\w#]+) = "stablehlo\.reduce_window"'
    r'\((?P<input>%[\w#]+), (?P<init>%[\w#]+)\) <\{(?P<props>[^\n]*)\}> \(\{\n'
    r'[ \t]*\^bb0\((?P<a>%\w+): [^\n]*?, (?P<b>%\w+): [^\n]*\):\n'
    r'[ \t]*(?P<sum>%\w+) = stablehlo\.add (?P=a), (?P=b) : [^\n]*\n'
    r'[ \t]*stablehlo\.return (?P=sum) : [^\n]*\n'
    r'[ \t]*\}\) : \((?P<type>tensor<[^>]*>), tensor<[^>]*>\) -> tensor<[^>]*>'
    r'(?P<loc> loc\([^\n]*\))?$', re.M)


def _ints(props: str, name: str) -> list[int] | None:
    m = re.search(name + r" = array<i64(?:: ([-\d, ]*))?>", props)
    if not m:
        return None
    return [int(v) for v in m.group(1).split(",")] if m.group(1) else []


def _padding(props: str) -> list[list[int]] | None:
    m = re.search(r"padding = dense<(\[.*?\]|\d+)> : tensor<", props)
    if not m:
        return None
    text = m.group(1)
    if text.isdigit():                    # a splat: every pair the same
        return None if int(text) else []
    pairs = re.findall(r"\[(-?\d+), (-?\d+)\]", text)
    return [[int(lo), int(hi)] for lo, hi in pairs]


def _zero_values(text: str) -> set[str]:
    """SSA names (function-local, so only as a hint checked per use) of zero
    scalars: `stablehlo.constant dense<0...>` and broadcasts of them."""
    zeros = set()
    for m in re.finditer(r"^\s*(%[\w#]+) = stablehlo\.constant dense<(-?0(?:\.0+)?"
                         r"(?:e[+-]?0+)?|false)> : tensor<\w+>", text, re.M):
        zeros.add(m.group(1))
    for m in re.finditer(r"^\s*(%[\w#]+) = stablehlo\.broadcast_in_dim (%[\w#]+), "
                         r"dims = \[\] : \(tensor<\w+>\) -> tensor<\w+>", text, re.M):
        if m.group(2) in zeros:
            zeros.add(m.group(1))
    return zeros


def _axis_of(shape: list[int], window: list[int], padding: list[list[int]],
             strides: list[int], base: list[int] | None,
             dilations: list[int] | None) -> tuple[int, bool] | None:
    """The axis a cumulative sum runs along and whether it runs backwards,
    or None for any other window."""
    rank = len(shape)
    if not (len(window) == len(padding) == len(strides) == rank):
        return None
    if any(s != 1 for s in strides) or any(d != 1 for d in (base or [])) or \
            any(d != 1 for d in (dilations or [])):
        return None
    axes = [k for k in range(rank) if window[k] != 1 or padding[k] != [0, 0]]
    if len(axes) != 1:
        return None
    k = axes[0]
    n = shape[k]
    if n < 2 or window[k] != n:
        return None
    if padding[k] == [n - 1, 0]:
        return k, False
    if padding[k] == [0, n - 1]:
        return k, True
    return None


def rewrite(text: str) -> str:
    """`text` (a StableHLO module as JAX prints it) with every cumulative sum
    a product with a triangular matrix."""
    zeros = _zero_values(text)
    counter = iter(range(1 << 30))

    def replace(m: re.Match[str]) -> str:
        props = m.group("props")
        shape_text, _, element = m.group("type")[len("tensor<"):-1].rpartition("x")
        if m.group("init") not in zeros or not shape_text or "?" in shape_text:
            return m.group(0)
        shape = [int(d) for d in shape_text.split("x")]
        window, strides = _ints(props, "window_dimensions"), _ints(props, "window_strides")
        padding = _padding(props)
        if window is None or strides is None or padding is None:
            return m.group(0)
        if padding == []:
            padding = [[0, 0]] * len(shape)
        found = _axis_of(shape, window, padding, strides,
                         _ints(props, "base_dilations"), _ints(props, "window_dilations"))
        if found is None:
            return m.group(0)
        k, reverse = found
        n, rank = shape[k], len(shape)
        ind, loc = m.group("indent"), m.group("loc") or ""
        name = f"%cumsum{next(counter)}_"
        square = f"tensor<{n}x{n}x{element}>"
        one = "1.000000e+00" if element[0] in "fb" else "1"
        zero = "0.000000e+00" if element[0] in "fb" else "0"
        moved = shape[:k] + shape[k + 1:] + [n]
        moved_type = "tensor<" + "".join(f"{d}x" for d in moved) + element + ">"
        lines = [
            f"{name}i = stablehlo.iota dim = 0 : tensor<{n}x{n}xi64>{loc}",
            f"{name}j = stablehlo.iota dim = 1 : tensor<{n}x{n}xi64>{loc}",
            f"{name}in = stablehlo.compare {'GE' if reverse else 'LE'}, {name}i, {name}j : "
            f"(tensor<{n}x{n}xi64>, tensor<{n}x{n}xi64>) -> tensor<{n}x{n}xi1>{loc}",
            f"{name}one = stablehlo.constant dense<{one}> : {square}{loc}",
            f"{name}zero = stablehlo.constant dense<{zero}> : {square}{loc}",
            f"{name}tri = stablehlo.select {name}in, {name}one, {name}zero : "
            f"tensor<{n}x{n}xi1>, {square}{loc}",
        ]
        product = m.group("result") if k == rank - 1 else f"{name}product"
        lines.append(
            f"{product} = stablehlo.dot_general {m.group('input')}, {name}tri, "
            f"contracting_dims = [{k}] x [0] : ({m.group('type')}, {square}) -> "
            f"{moved_type}{loc}")
        if k != rank - 1:
            perm = [p if p < k else (rank - 1 if p == k else p - 1) for p in range(rank)]
            lines.append(
                f"{m.group('result')} = stablehlo.transpose {product}, dims = "
                f"[{', '.join(map(str, perm))}] : ({moved_type}) -> {m.group('type')}{loc}")
        return "\n".join(ind + line for line in lines)

    return _REDUCE_WINDOW.sub(replace, text)

"""Large tensor constants of an exported program as function arguments.

dist-partition replicates a tensor constant on every device (semantics §6),
which is right for a small table and wasteful for a large one: a JAX array a
function closes over, or a tensor attribute of a module that is neither a
parameter nor a buffer, would sit whole on every rank. The front doors turn
each constant of at least ``LARGE_CONSTANT_BYTES`` into an argument of the
entry function instead (free, so dist-partition places it like any other
input, split where that is cheaper), and hand its value to the Program.
"""

from __future__ import annotations

import re
from typing import Any

#: Constants this large or larger become arguments (64 KiB: the replicated
#: copies of smaller ones cost less than a placement decision is worth).
LARGE_CONSTANT_BYTES = 1 << 16

# Element type -> (NumPy dtype name, bytes per element). bf16 is widened to
# float32 (dist-run rounds it back); i1 is packed by MLIR, left as a constant.
_DTYPES = {"f64": ("float64", 8), "f32": ("float32", 4), "f16": ("float16", 2),
           "bf16": ("bfloat16", 2), "i64": ("int64", 8), "i32": ("int32", 4),
           "i16": ("int16", 2), "i8": ("int8", 1), "ui8": ("uint8", 1),
           "ui16": ("uint16", 2), "ui32": ("uint32", 4), "ui64": ("uint64", 8)}

_CONSTANT = re.compile(
    r'^(?P<indent>[ \t]*)(?P<name>%[\w$.-]+) = arith\.constant '
    r'(?:dense<"0x(?P<hex>[0-9A-Fa-f]+)">|dense_resource<(?P<resource>[\w$.-]+)>)'
    r' : (?P<type>tensor<(?P<shape>(?:\d+x)*)(?P<element>[a-z]+\d+)>)(?P<rest>.*)$',
    re.M)
_BLOB = r'^[ \t]*{name}: "0x(?P<hex>[0-9A-Fa-f]+)",?[ \t]*\n'


def hoist(text: str, entry: str,
          limit: int = LARGE_CONSTANT_BYTES) -> tuple[str, list[tuple[str, Any]]]:
    """`text` with every tensor constant of ``func.func @entry`` of at least
    `limit` bytes turned into a leading argument ``%dist_const<k>``, and
    each one's (name, NumPy value) in argument order."""
    import numpy

    head = text.find(f"func.func @{entry}(")
    if head < 0:
        return text, []
    end = _function_end(text, head)
    hoisted: list[tuple[str, str, Any]] = []   # (ssa name, type, value)
    drop: list[tuple[int, int]] = []
    for m in _CONSTANT.finditer(text, head, end):
        dtype, size = _DTYPES.get(m.group("element"), (None, 0))
        shape = [int(d) for d in m.group("shape").split("x") if d]
        count = int(numpy.prod(shape)) if shape else 1
        if dtype is None or count * size < limit:
            continue
        data = _bytes(text, m)
        if data is None or len(data) != count * size:
            continue                       # a splat, or no blob: leave it
        hoisted.append((m.group("name"), m.group("type"),
                        _array(numpy, data, dtype, shape)))
        drop.append((m.start(), m.end() + 1))
    if not hoisted:
        return text, []
    body = text[head:end]
    for start, stop in reversed(drop):
        body = body[:start - head] + body[stop - head:]
    arguments = []
    for k, (name, type_, _) in enumerate(hoisted):
        body = re.sub(re.escape(name) + r"(?![\w$.-])", f"%dist_const{k}", body)
        arguments.append(f"%dist_const{k}: {type_}")
    opening = body.index("(") + 1
    separator = ", " if body[opening] != ")" else ""
    body = body[:opening] + ", ".join(arguments) + separator + body[opening:]
    text = _drop_unused_blobs(text[:head] + body + text[end:])
    return text, [(f"const[{k}]", value) for k, (_, _, value) in enumerate(hoisted)]


def _function_end(text: str, head: int) -> int:
    """The index just past the `}` closing the function at `head`."""
    depth, i = 0, text.index("{\n", text.index(")", head))
    while True:
        ch = text[i]
        if ch == '"':
            i = text.index('"', i + 1)
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def _bytes(text: str, m: re.Match[str]) -> bytes | None:
    if m.group("hex") is not None:
        return bytes.fromhex(m.group("hex"))
    blob = re.search(_BLOB.format(name=re.escape(m.group("resource"))), text, re.M)
    if blob is None:
        return None
    return bytes.fromhex(blob.group("hex"))[4:]   # the alignment comes first


def _array(numpy: Any, data: bytes, dtype: str, shape: list[int]) -> Any:
    if dtype == "bfloat16":                       # the high half of an f32
        halves = numpy.frombuffer(data, dtype="<u2").astype(numpy.uint32) << 16
        return halves.view(numpy.float32).reshape(shape)
    return numpy.frombuffer(data, dtype=numpy.dtype(dtype).newbyteorder("<")
                            ).reshape(shape).copy()


def _drop_unused_blobs(text: str) -> str:
    """The module without resource blobs nothing names any more."""
    section = text.find("{-#")
    if section < 0:
        return text
    code, resources = text[:section], text[section:]

    def keep(m: re.Match[str]) -> str:
        return m.group(0) if f"dense_resource<{m.group(1)}>" in code else ""
    resources = re.sub(r'^[ \t]*([\w$.-]+): "0x[0-9A-Fa-f]*",?[ \t]*\n', keep,
                       resources, flags=re.M)
    return code + re.sub(r',(\s*\})', r'\1', resources)

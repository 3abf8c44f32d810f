"""Reading the MLIR text the exporters print, where the front doors edit it."""

from __future__ import annotations

import re


def balanced(text: str, start: int, open_: str = "<", close: str = ">") -> int:
    """The index just past the bracket that closes text[start] (open_)."""
    depth, i = 0, start
    while True:
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def annotate_entry(text: str, entry: str, mesh: str,
                   arguments: list[str | None],
                   results: list[str | None] | None = None) -> str:
    """`text` with `func.func @entry` planned as a front door plans it: each
    argument (and result) with a layout text gets `{dist.sharding =
    #dist.sharding<@mesh, LAYOUT>}` (semantics §6), those with None stay
    free, the function is marked `dist.auto = @mesh`, and `dist.mesh @mesh =
    MESH` opens the module. ValueError when the counts differ."""
    head = re.search(rf"func\.func @{re.escape(entry)}\(", text)
    if head is None:
        raise ValueError(f"the module has no func.func @{entry}")
    end = balanced(text, head.end() - 1, "(", ")")
    written = split_top_level(text[head.end():end - 1])
    if len(written) != len(arguments):
        raise ValueError(f"@{entry} has {len(written)} arguments, expected "
                         f"{len(arguments)}")
    body = text.index(" {\n", end)
    tail = text[end:body]
    written = [_with_layout(a, layout) for a, layout in zip(written, arguments)]
    if results is not None and "->" in tail:
        listed = tail[tail.index("->") + 2:].strip()
        if listed.startswith("("):
            listed = listed[1:-1]
        entries = split_top_level(listed)
        if len(entries) != len(results):
            raise ValueError(f"@{entry} has {len(entries)} results, expected "
                             f"{len(results)}")
        tail = " -> (" + ", ".join(
            _with_layout(r, layout) for r, layout in zip(entries, results)) + ")"
    signature = (text[head.start():head.end()] + ", ".join(written) + ")" +
                 tail + " attributes {dist.auto = @mesh}")
    text = text[:head.start()] + signature + text[body:]
    return re.sub(r"^module( @[\w$.-]+)?( attributes \{[^\n]*\})? \{",
                  lambda m: m.group(0) + f"\n  dist.mesh @mesh = {mesh}",
                  text, count=1, flags=re.M)


def _with_layout(entry: str, layout: str | None) -> str:
    """An argument or result entry with the layout attribute, written
    before its location if it has one."""
    if layout is None:
        return entry
    attr = f"{{dist.sharding = #dist.sharding<@mesh, {layout}>}}"
    loc = re.search(r"\sloc\(", entry)
    at = loc.start() if loc else len(entry)
    return f"{entry[:at]} {attr}{entry[at:]}"


def split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside brackets and strings: the entries
    of an argument or result list (`%a: tensor<2x3xf32> {attr}`, ...)."""
    out, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def foreign_op(text: str, dialects: str) -> tuple[str, str, str] | None:
    """The first op of one of `dialects` (a regex alternation, e.g.
    ``"tm_tensor|torch"``) in `text`: its name, its first line and the
    `file:line: ` of the framework source that made it ('' when the
    exporter recorded none); None when there is none."""
    m = re.search(rf"^\s*(?:%[^=]*=\s*)?((?:{dialects})\.[\w.]+)", text, re.M)
    if m is None:
        return None
    first = text[m.start():text.find("\n", m.start())].strip()
    return m.group(1), first, _source_line(text, _op_end(text, m.start()))


def _op_end(text: str, start: int) -> str:
    """The line that ends the op whose first line starts at `start` (where
    its location is printed): that line, or for an op with regions the
    line closing them."""
    line_end = text.find("\n", start)
    first = text[start:line_end]
    if not first.rstrip().endswith("{"):
        return first
    indent = len(first) - len(first.lstrip())
    for line in text[line_end + 1:].splitlines():
        if len(line) - len(line.lstrip()) == indent and line.lstrip().startswith("}"):
            return line
    return first


def _source_line(text: str, line: str) -> str:
    """`file:line: ` of the first source position in `line`'s location,
    following `#locN` aliases to their definitions, or ''."""
    aliases = dict(re.findall(r"^#(loc\d*) = (loc\(.*\))$", text, re.M))
    location = line[line.find("loc("):] if "loc(" in line else ""
    for _ in range(8):                     # aliases refer to aliases
        m = re.search(r'"([^"]+)":(\d+):(\d+)', location)
        if m:
            return f"{m.group(1)}:{m.group(2)}: "
        names = re.findall(r"#(loc\d*)", location)
        if not names:
            return ""
        location = " ".join(aliases.get(n, "") for n in names)
    return ""

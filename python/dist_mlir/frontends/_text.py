"""Reading the MLIR text the exporters print, where the front doors edit it."""

from __future__ import annotations

import re


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

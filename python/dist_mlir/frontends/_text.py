"""Reading the MLIR text the exporters print, where the front doors edit it."""

from __future__ import annotations


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

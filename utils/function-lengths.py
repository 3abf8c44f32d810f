#!/usr/bin/env python3
"""The longest C++ functions of the project, by lines of code.

    utils/function-lengths.py [--max N] [--top K] [PATH ...]

Counts, for every function body (a free function, a method, a lambda given
its own name is part of its enclosing function), the lines between its
opening and closing brace that hold code: blank lines and lines that are
only a comment do not count (lizard's NLOC, near enough). Paths default to
lib/, include/ and tools/ of the repository. With --max N, exits 1 naming
every function longer than N lines (test/function-lengths.test holds the
project to 200, issue 48); otherwise prints the K longest.

A body is a `{` that closes a parameter list (`)`, possibly followed by
qualifiers such as const, override, noexcept, an initializer list or a
trailing return type) at namespace or class scope; the scanner skips
strings, characters and comments. Needs only the standard library.
"""
import argparse
import os
import re
import sys

SOURCES = (".cpp", ".h", ".cc", ".cu", ".inc.h")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def strip_code(text):
    """`text` with comments, strings and character literals blanked (newlines
    kept), so that braces and parentheses in them are not counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# What may stand between a parameter list's `)` and its body's `{`.
TAIL = re.compile(r"\)\s*(const|override|final|noexcept|mutable|volatile|&|&&|\s|"
                  r"->\s*[\w:<>,\s*&]+|:\s*[^{;]*)*$", re.S)
NAME = re.compile(r"([~\w:]+(?:<[^<>]*>)?|operator\s*\S+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)"
                  r"[^()]*$", re.S)
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype",
           "alignof", "static_assert", "defined", "__attribute__"}


def functions(path):
    """(name, first line, code lines) of every function body in `path`."""
    text = open(path, encoding="utf-8", errors="replace").read()
    code = strip_code(text)
    lines = text.split("\n")
    # A stack of open braces: True where the scope may hold functions
    # (the file, a namespace, a class/struct), False inside a function.
    stack = []
    found = []
    for m in re.finditer(r"[{}]", code):
        pos = m.start()
        if code[pos] == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    first = code.count("\n", 0, start)
                    last = code.count("\n", 0, pos)
                    body = [l for l in code.split("\n")[first + 1:last] if l.strip()]
                    found.append((name, first + 1, len(body)))
            continue
        inside_function = any(k == "function" for k, _, _ in stack)
        head = code[max(0, pos - 600):pos]
        head = head[max(head.rfind(";"), head.rfind("}"), head.rfind("{")) + 1:]
        if not inside_function and TAIL.search(head) and "(" in head:
            signature = head[:head.rfind(")") + 1] if ")" in head else head
            nm = NAME.search(signature.split(" : ")[0] if " : " in signature else signature)
            name = nm.group(1) if nm else "?"
            if name.split("::")[-1] not in CONTROL and not re.search(r"=\s*\[", head):
                stack.append(("function", pos, name))
                continue
        stack.append(("scope", pos, ""))
    del lines
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--max", type=int, help="fail naming every function longer")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    paths = a.paths or [os.path.join(ROOT, d) for d in ("lib", "include", "tools")]
    rows = []
    for top in paths:
        walk = [(top, [], [os.path.basename(top)])] if os.path.isfile(top) else os.walk(top)
        for folder, _, files in walk:
            for f in files:
                p = os.path.join(folder, f) if not os.path.isfile(top) else top
                if p.endswith(SOURCES):
                    for name, line, count in functions(p):
                        rows.append((count, os.path.relpath(p, ROOT), line, name))
    rows.sort(reverse=True)
    if a.max is not None:
        over = [r for r in rows if r[0] > a.max]
        for count, path, line, name in over:
            print(f"{path}:{line}: {name}: {count} lines of code (at most {a.max})")
        print(f"function-lengths: {len(rows)} functions, {len(over)} over {a.max} lines")
        return 1 if over else 0
    for count, path, line, name in rows[:a.top]:
        print(f"{count:5d}  {path}:{line}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

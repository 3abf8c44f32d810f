#!/usr/bin/env python3
"""Checks that the code a doc shows is the code the repository builds.

    check_listings.py DOC.md --root SRC

A fenced block right after a line `<!-- listing: PATH -->` (PATH relative to
SRC) must appear, line for line, in that file: the whole file or an excerpt
of consecutive lines. The files are built and run by the tests (e.g.
test/consumer), so a doc that shows them cannot drift from working code.
Exit 0 when every listing matches, 1 otherwise (also when there is none).
"""

import argparse
import os
import re
import sys

MARKER = re.compile(r"^<!-- listing: (\S+) -->$")


def listings(text):
    """[(path, [block lines])] for every marked fenced block."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        m = MARKER.match(lines[i].strip())
        if m and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            j = i + 2
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            out.append((m.group(1), lines[i + 2:j]))
            i = j
        i += 1
    return out


def contains(haystack, needle):
    n = len(needle)
    return any(haystack[k:k + n] == needle for k in range(len(haystack) - n + 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("doc")
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    found = listings(open(a.doc).read())
    failures = 0
    for path, block in found:
        full = os.path.join(a.root, path)
        if not os.path.isfile(full):
            print(f"check_listings: {a.doc}: {path} does not exist")
            failures += 1
        elif not block or not contains(open(full).read().splitlines(), block):
            print(f"check_listings: {a.doc}: the listing of {path} is not in "
                  f"that file (first line: {block[0] if block else ''!r})")
            failures += 1
    if not found:
        print(f"check_listings: {a.doc} shows no listing")
        return 1
    print(f"check_listings: {a.doc}: {len(found) - failures} of {len(found)} "
          f"listings match their files")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs the commands a doc shows and checks they print what it says.

    check_console.py DOC.md --root SRC --bin BUILD/bin [--python PY]

Every ```console block of DOC.md holds commands (lines starting with "$ ",
continued by a trailing backslash, or by the lines of a here-document up to
its terminator: `$ python3 - <<'EOF'` ... `EOF`) each followed by its
expected output.
The commands run one by one with bash in a fresh scratch folder holding
links to the repository's examples/ and utils/, with BUILD/bin first on
PATH (and PY, when given, as `python3`), so that blocks may build on files
earlier commands wrote. Output (stdout and stderr) must equal the expected
lines, except that "…" in an expected line matches any text (timings).
Exit 0 when everything matches, 1 with a diff otherwise.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile


def blocks(text):
    inside, current = False, []
    for line in text.splitlines():
        if line.strip() == "```console":
            inside, current = True, []
        elif inside and line.strip() == "```":
            inside = False
            yield current
        elif inside:
            current.append(line)


HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def commands(block):
    """[(command, [expected lines])]."""
    out, i = [], 0
    while i < len(block):
        line = block[i]
        if not line.startswith("$ "):
            raise SystemExit(f"check_console: output before any command: {line!r}")
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(block):
            i += 1
            command = command + "\n" + block[i]
        i += 1
        heredoc = HEREDOC.search(command)
        if heredoc:
            end = heredoc.group(2)
            while i < len(block) and block[i] != end:
                command = command + "\n" + block[i]
                i += 1
            if i == len(block):
                raise SystemExit(f"check_console: the here-document of "
                                 f"{line!r} has no {end} line")
            command = command + "\n" + end
            i += 1
        expected = []
        while i < len(block) and not block[i].startswith("$ "):
            expected.append(block[i])
            i += 1
        out.append((command, expected))
    return out


def matches(expected, actual):
    if len(expected) != len(actual):
        return False
    for e, a in zip(expected, actual):
        pattern = "^" + ".*".join(re.escape(p) for p in e.split("…")) + "$"
        if not re.match(pattern, a):
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("doc")
    ap.add_argument("--root", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--python")
    a = ap.parse_args()
    a.root, a.bin = os.path.abspath(a.root), os.path.abspath(a.bin)
    text = open(a.doc).read()
    failures, count = 0, 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("examples", "utils"):
            os.symlink(os.path.join(a.root, name), os.path.join(scratch, name))
        tools = os.path.join(scratch, ".bin")
        os.mkdir(tools)
        if a.python:
            # A script, not a link: a virtual environment's python finds its
            # environment from the path it is started by.
            wrapper = os.path.join(tools, "python3")
            with open(wrapper, "w") as f:
                f.write(f'#!/bin/sh\nexec "{os.path.abspath(a.python)}" "$@"\n')
            os.chmod(wrapper, 0o755)
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([tools, a.bin, env.get("PATH", "")])
        for block in blocks(text):
            for command, expected in commands(block):
                count += 1
                run = subprocess.run(["bash", "-o", "pipefail", "-c", command],
                                     cwd=scratch, env=env, capture_output=True,
                                     text=True, timeout=600)
                actual = (run.stdout + run.stderr).splitlines()
                if run.returncode != 0 or not matches(expected, actual):
                    failures += 1
                    print(f"check_console: {a.doc}: `{command}` "
                          f"(exit {run.returncode}) printed:")
                    sys.stdout.writelines(difflib.unified_diff(
                        [l + "\n" for l in expected], [l + "\n" for l in actual],
                        "doc", "actual"))
    if count == 0:
        print(f"check_console: {a.doc} shows no command")
        return 1
    print(f"check_console: {a.doc}: {count - failures} of {count} commands print what the doc shows")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

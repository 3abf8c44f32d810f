#!/usr/bin/env python3
"""Runs a command and succeeds iff it exits with the expected status.

    expect_exit.py STATUS -- COMMAND [ARGS...]

The command's stdout and stderr pass through unchanged (so that FileCheck can
read them); a different status is reported on stderr. lit's `not` only
inverts success, and dist-run distinguishes bad usage (2) from failures (1).
"""

import subprocess
import sys


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print("usage: expect_exit.py STATUS -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    expected = int(sys.argv[1])
    status = subprocess.run(sys.argv[3:]).returncode
    if status != expected:
        print(f"expect_exit: '{sys.argv[3]}' exited with status {status}, "
              f"expected {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared fixtures of the dist_mlir test suite.

Run through lit (test/python/*.test), which puts the built package on
PYTHONPATH and points DIST_TOOLS_DIR at the build's tools; by hand:

    PYTHONPATH=build/python_packages DIST_TOOLS_DIR=build/bin \\
        /usr/bin/python3 -m pytest -q python/tests
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

import dist_mlir
from dist_mlir import _dist
from dist_mlir._tools import find_tool

SOURCE_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = SOURCE_ROOT / "examples"

# The package under test must be the built one (with its extension), not
# python/dist_mlir from the source tree, which has no _dist module.
assert Path(_dist.__file__).parent == Path(dist_mlir.__file__).parent

requires_mlir = pytest.mark.skipif(
    not _dist.HAVE_MLIR, reason="dist_mlir was built without MLIR")


def run_tool(name: str, *args: str) -> subprocess.CompletedProcess:
    """Runs a built dist tool, capturing text output."""
    return subprocess.run([find_tool(name), *args], capture_output=True,
                          text=True, check=False)


def run_bounded(command: list[str], seconds: int,
                mebibytes: int) -> subprocess.CompletedProcess:
    """Runs `command` with its address space capped (RLIMIT_AS) and a time
    limit, for reproducers of inputs that used to crash, hang or exhaust
    memory. Sanitized builds (DIST_SANITIZE_BUILD=1) reserve terabytes of
    shadow memory, so there ASan's own RSS limit bounds memory instead."""
    sanitized = os.environ.get("DIST_SANITIZE_BUILD") == "1"

    def limit() -> None:
        if not sanitized:
            size = mebibytes << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return subprocess.run(command, capture_output=True, text=True,
                          check=False, preexec_fn=limit,
                          timeout=seconds * (2 if sanitized else 1))


@pytest.fixture
def mesh24() -> dist_mlir.Mesh:
    return dist_mlir.Mesh({"x": 2, "y": 4})


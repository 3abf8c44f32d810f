"""Locating the dist command-line tools that dist_mlir drives."""

from __future__ import annotations

import os
import shutil

from . import _config

__all__ = ["find_tool"]


def find_tool(name: str) -> str:
    """Returns the path of the dist tool `name` (e.g. ``"dist-run"``).

    Looked up, in order: ``$DIST_TOOLS_DIR`` (so tests and users can point at
    another build), the build this package came from, then ``$PATH``.

    Raises:
        FileNotFoundError: the tool is in none of them.
    """
    searched = []
    for directory in (os.environ.get("DIST_TOOLS_DIR"), _config.TOOLS_DIR):
        if not directory:
            continue
        candidate = os.path.join(directory, name)
        searched.append(directory)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return found
    searched.append("$PATH")
    raise FileNotFoundError(
        f"{name} not found (looked in {', '.join(searched)}); build it "
        f"(ninja {name}) or set DIST_TOOLS_DIR to the folder that holds it")

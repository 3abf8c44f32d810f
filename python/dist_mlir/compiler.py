"""compile(): run dist passes and pipelines on MLIR text, in-process."""

from __future__ import annotations

import os
import warnings

from . import _dist
from ._errors import CompileError, CompileWarning

__all__ = ["compile", "program_path", "read_program"]


def program_path(program: str | os.PathLike) -> str | None:
    """The file ``program`` names, or ``None`` when it is MLIR text.

    A ``pathlib.Path`` (any ``os.PathLike``) or a one-line string ending in
    ``.mlir`` names a file; any other string is MLIR text.
    """
    if isinstance(program, os.PathLike):
        return os.fspath(program)
    if not isinstance(program, str):
        raise TypeError("expected MLIR text or a path, got "
                        f"{type(program).__name__}")
    stripped = program.strip()
    if "\n" not in stripped and stripped.endswith(".mlir"):
        return stripped
    return None


def read_program(program: str | os.PathLike) -> tuple[str, str]:
    """Returns (MLIR text, name for diagnostics) of ``program``."""
    path = program_path(program)
    if path is None:
        return program, "<input>"
    with open(path, encoding="utf-8") as file:
        return file.read(), path


def compile(module: str | os.PathLike,
            pipeline: str = "dist-partition,dist-lower-reshard") -> str:
    """Parses ``module``, runs ``pipeline`` on it and returns the printed result.

    Every dist dialect, pass and pipeline is registered, as in ``dist-opt``,
    so the output equals ``dist-opt --pass-pipeline='builtin.module(...)'``.

    Args:
        module: MLIR text, or a path (see :func:`program_path`).
        pipeline: a pass pipeline as the pass flags spell it. The default
            partitions the compute of a global-view program (a no-op where
            there is none) and plans every reshard. Others, e.g.
            ``"dist-lower-reshard"``,
            ``"dist-lower-reshard{strategy=greedy cache-dir=/tmp/plans}"``,
            ``"canonicalize,dist-lower-reshard,cse"``, ``"dist-to-llvm"``;
            the anchored form ``"builtin.module(...)"`` works too. ``""``
            only parses, verifies and prints.

    Returns:
        The transformed module as text.

    Raises:
        CompileError: (a ``ValueError``) the text does not parse or verify,
            the pipeline is unknown or malformed, or a pass failed; the
            message is the diagnostics (``<input>:3:5: error: ...``).

    Warnings and remarks that passes emit (e.g. ``dist-lower-reshard
    {remarks=true}``) are issued as :class:`CompileWarning` through the
    ``warnings`` module.
    """
    source, name = read_program(module)
    if not isinstance(pipeline, str):
        raise TypeError(f"pipeline must be str, got {type(pipeline).__name__}")
    try:
        output, diagnostics = _dist.compile(source, pipeline, name)
    except CompileError as error:
        # The C++ side keeps each diagnostic's trailing newline; a Python
        # message reads better without the last one.
        raise CompileError(str(error).rstrip("\n")) from None
    for _, text in diagnostics:
        warnings.warn(text.rstrip("\n"), CompileWarning, stacklevel=2)
    return output

"""The exceptions and warnings dist_mlir raises.

Every mistake in what you pass (a malformed mesh or layout, an unknown axis,
a rank mismatch, bad MLIR) is a ``ValueError`` whose text is the message the
C++ library or the MLIR diagnostics give. Two subclasses let you tell the
cases that are not typos apart:

- :class:`NoPlanError`: the request is valid but no plan exists, e.g. every
  plan needs more memory than ``max_peak_bytes``.
- :class:`CompileError`: parsing, verifying or a pass failed; the text is the
  diagnostics exactly as ``dist-opt`` prints them.

:class:`RunError` (a ``RuntimeError``) reports a failed ``dist-run`` job.
"""

from __future__ import annotations

from . import _dist

__all__ = ["NoPlanError", "CompileError", "RunError", "CompileWarning",
           "PlanCacheWarning"]

# The extension creates these two (so C++ can raise them); give them a home
# and a docstring that help() can show.
NoPlanError = _dist.NoPlanError
NoPlanError.__module__ = "dist_mlir"
NoPlanError.__doc__ = (
    "A valid reshard request for which no plan exists (for instance, none "
    "fits under max_peak_bytes). A subclass of ValueError; the text is the "
    "planner's reason.")

CompileError = _dist.CompileError
CompileError.__module__ = "dist_mlir"
CompileError.__doc__ = (
    "Parsing, verifying or running a pass pipeline failed. A subclass of "
    "ValueError; the text is the error diagnostics as dist-opt prints them "
    "(file:line:col, the source line and a caret).")


class RunError(RuntimeError):
    """A ``dist-run`` job failed (compile error, a rank failed, timeout).

    Attributes:
        returncode: dist-run's exit code (``None`` after a timeout).
        stderr: what dist-run printed on stderr (names the failing rank).
        command: the command line that was run.
    """

    def __init__(self, message: str, returncode: int | None, stderr: str,
                 command: list[str]) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = command


class CompileWarning(UserWarning):
    """A warning or remark a pass emitted while compile() succeeded."""


class PlanCacheWarning(RuntimeWarning):
    """The plan cache skipped something: an unusable directory (plans stay
    in memory) or a damaged entry (recomputed and rewritten)."""

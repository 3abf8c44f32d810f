"""The layout solver on its own: one strategy per node, least modelled time.

dist-partition describes a program as a layout problem (every op's
strategies with their compute time and memory, every value's reshard costs
between layouts) and solves it exactly; ``solve_layouts`` runs the same
solver on a problem you describe, for instance from another compiler's cost
tables (docs/partitioning.md, "The solver on its own", gives the format):

    >>> from dist_mlir import solve_layouts
    >>> answer = solve_layouts({
    ...     "nodes": [{"work": [1, 1], "seconds": [0.0, 0.0]},
    ...               {"work": [1, 1], "seconds": [2.0, 1.0]}],
    ...     "edges": [{"from": 0, "to": 1, "table": [0, 5, 5, 0]}]})
    >>> answer["choice"], answer["optimal"]
    ([1, 1], True)
    >>> answer["time"] == 1.0  # layout 1 throughout: no move, 1 s of compute
    True
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Union

from . import _dist

__all__ = ["solve_layouts"]


def solve_layouts(problem: Union[Mapping[str, Any], str]) -> dict[str, Any]:
    """Solves `problem` (a mapping, or its JSON text) as dist-partition does.

    Returns the answer as a dict: ``choice`` (one strategy index per node),
    ``time`` (compute + communication, seconds), ``compute``,
    ``communication``, ``peak_bytes`` (per device), ``optimal`` (proven) and
    ``lower_bound``, with ``fallback_reason`` when the exact search stopped.
    Raises ValueError naming the fault of a bad problem, and
    dist_mlir.NoPlanError when no choice fits ``options.memory_budget``.
    """
    text = problem if isinstance(problem, str) else json.dumps(problem)
    return json.loads(_dist.solve_layouts(text))

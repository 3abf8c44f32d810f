"""dist_mlir: plan, compile and run tensor resharding with dist, from Python.

dist moves a tensor between two shardings on a device mesh with the cheapest
sequence of collectives (all-gather, all-to-all, reduce-scatter, ...) under
an alpha-beta cost model, and compiles that plan into MLIR. This package is
its Python face; the vocabulary follows PyTorch's DTensor.

Meshes
    >>> from dist_mlir import Mesh
    >>> mesh = Mesh({"dp": 2, "tp": 4})          # 8 devices, dp major
    >>> str(mesh)
    '<["dp"=2, "tp"=4]>'

    ``Mesh(axes, devices=None, topology=None)``: ``devices`` maps row-major
    coordinates to ranks; ``topology`` gives per-axis ``alpha`` (seconds per
    message) and ``beta`` (seconds per byte), as a dict or a JSON file.

Layouts
    One ``{...}`` per tensor dim listing the mesh axes that split it (major
    to minor), plus optionally the axes holding partial values:

    >>> from dist_mlir import Layout, Shard, Replicate, Partial
    >>> row = Layout(mesh, '[{"dp"}, {"tp"}]')
    >>> row.to_placements()
    [Shard(dim=0), Shard(dim=1)]
    >>> str(Layout.from_placements(mesh, [Replicate(), Partial("sum")], ndim=2))
    '[{}, {}], partial = sum {"tp"}'

    Two axes on one dim split it in mesh order, as in DTensor; write
    ``Shard(d, order=k)`` on each to choose another order (0 = major).

Planning
    >>> from dist_mlir import plan
    >>> p = plan(mesh, (1024, 1024), "f32", '[{"dp"}, {"tp"}]',
    ...          [Replicate(), Shard(0)])
    >>> [(step.op, step.axes) for step in p]
    [('redistribute', ()), ('all_gather', ('dp',))]
    >>> q = plan(mesh, (1024, 1024), "f32", '[{"dp"}, {"tp"}]',
    ...          [Replicate(), Shard(0)], moves="collective")
    >>> [(step.op, step.axes) for step in q]
    [('all_gather', ('dp',)), ('all_to_all', ('tp',))]
    >>> print(p)                                  # doctest: +SKIP
    step  op            axes    dims    bytes    recv  cost (us)  layout after
    ...

    ``plan(mesh, shape, dtype, src, dst, strategy="optimal", cache_dir=None,
    max_peak_bytes=None, alpha=None, beta=None, moves="all", to_mesh=None,
    transfer=None)`` returns a :class:`Plan`: ``.steps``, ``.cost``
    (seconds), ``.peak_bytes``, ``.lower_bound``, ``.cache`` and
    ``.to_json()``, identical to ``dist-plan --format json``. ``moves=
    "collective"`` leaves out point-to-point ``redistribute`` steps;
    ``to_mesh`` plans a reshard onto another mesh (a pipeline stage's
    hand-off), ``dst`` being a layout on it.

Compiling
    ``compile(mlir_text, pipeline="dist-lower-reshard")`` runs any
    registered pass or pipeline in-process (``"dist-to-llvm"``,
    ``"dist-lower-reshard{strategy=greedy}"``, ...) and returns the text.

Running
    ``run(mlir_text_or_path, np)`` runs a program on ``np`` MPI ranks with
    the ``dist-run`` tool and returns ``results[k][rank]`` as NumPy arrays.

Front doors
    ``dist_mlir.frontends.torch.export(model, args, mesh=..., plan=...)``
    makes a :class:`Program` of a PyTorch module (docs/frontends.md):
    ``.layouts``, ``.run()`` returning global arrays, ``.save()``.

Errors
    Bad input raises ``ValueError`` with the library's message;
    :class:`NoPlanError` and :class:`CompileError` are ValueErrors too.
    A failed ``dist-run`` raises :class:`RunError`.

See docs/python.md for a longer walk-through.
"""

from __future__ import annotations

from ._errors import (CompileError, CompileWarning, NoPlanError,
                      PlanCacheWarning, RunError)
from .compiler import compile
from .layout import Layout
from .layouts import solve_layouts
from .mesh import Mesh
from .placement import (REDUCTIONS, Partial, Placement, Replicate, Shard,
                        StridedShard)
from .planning import DTYPES, Plan, Step, plan
from .runner import run
from .program import Program
from . import _dist

#: Version of the planner's algorithm; plan caches key on it.
PLANNER_VERSION: int = _dist.PLANNER_VERSION
#: semantics §3 defaults, used for every axis a topology does not mention.
DEFAULT_ALPHA: float = _dist.DEFAULT_ALPHA
DEFAULT_BETA: float = _dist.DEFAULT_BETA

__all__ = [
    "Mesh", "Layout", "Placement", "Shard", "StridedShard", "Replicate",
    "Partial",
    "REDUCTIONS", "plan", "Plan", "Step", "DTYPES", "compile", "run",
    "solve_layouts",
    "Program",
    "NoPlanError", "CompileError", "RunError", "CompileWarning",
    "PlanCacheWarning", "PLANNER_VERSION", "DEFAULT_ALPHA", "DEFAULT_BETA",
]

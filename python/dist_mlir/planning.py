"""Planning a reshard: the cheapest sequence of collectives between layouts.

``plan()`` is the Python face of ``dist-plan``: the same request gives the
same plan, and :meth:`Plan.to_json` prints exactly what
``dist-plan --format json`` prints.
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from . import _dist
from ._errors import PlanCacheWarning
from .layout import Layout, LayoutLike, as_layout
from .mesh import Mesh

__all__ = ["plan", "Plan", "Step", "DTYPES"]

#: Element types the planner knows, with their size in bytes (the C++
#: table include/dist/Support/ElementTypes.def, which the runtime, the
#: planner and the compiler read too).
DTYPES = dict(_dist.ELEMENT_BYTES)

# Spellings from NumPy and PyTorch (``str(torch.bfloat16)`` is
# "torch.bfloat16") for the MLIR element types above.
_DTYPE_ALIASES = {
    "float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32",
    "float": "f32", "float64": "f64", "double": "f64", "bool": "i1",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "long": "i64", "int": "i32",
}

#: A cost parameter: one value for every axis, or per axis name.
CostParam = Union[float, Mapping[str, float]]


def _element_type(dtype: object) -> str:
    if isinstance(dtype, str):
        name = dtype
    elif type(dtype).__module__ == "torch":
        name = str(dtype)  # torch.dtype, without importing torch
    else:
        # NumPy scalar types and dtypes (numpy.float32, numpy.dtype("i4")).
        try:
            import numpy
            name = numpy.dtype(dtype).name
        except (ImportError, TypeError) as error:
            raise TypeError(f"dtype: cannot interpret {dtype!r}") from error
    name = name.removeprefix("torch.")
    name = _DTYPE_ALIASES.get(name, name)
    if name not in DTYPES:
        raise ValueError(
            f"dtype: {dtype!r} is not one of {', '.join(DTYPES)} (or their "
            "NumPy/PyTorch names)")
    return name


def _shape(shape: Sequence[int]) -> list[int]:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise TypeError(f"shape must be a sequence of ints, got {shape!r}")
    extents = []
    for n in shape:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(
                f"shape: extents must be non-negative ints, got {list(shape)}")
        extents.append(int(n))
    return extents


def _cost_list(mesh: Mesh, value: CostParam, what: str) -> str:
    """``x=1e-05,y=2e-05`` for Topology.set_from_list, as --alpha takes."""
    if isinstance(value, Mapping):
        items = list(value.items())
        for name, _ in items:
            if name not in mesh.axis_names:
                raise ValueError(f"{what}: {name!r} is not an axis of mesh {mesh}")
    else:
        items = [(name, value) for name in mesh.axis_names]
    parts = []
    for name, number in items:
        if isinstance(number, bool) or not isinstance(number, numbers.Real):
            raise TypeError(f"{what}: value for {name!r} must be a number, "
                            f"got {number!r}")
        # repr() is the shortest text that reads back as the same double.
        parts.append(f"{name}={float(number)!r}")
    return ",".join(parts)


@dataclass(frozen=True)
class Step:
    """One move of a plan (semantics §3).

    Attributes:
        op: ``all_gather``, ``all_slice``, ``all_to_all``,
            ``reduce_scatter``, ``all_reduce``, ``permute``,
            ``replicate_to_partial`` or ``redistribute`` (point-to-point).
        axes: the mesh axes of the collective (one group over their product).
        dim: the tensor dim it gathers, slices or scatters (all_to_all: the
            dim it leaves); ``None`` for moves without a dim.
        to_dim: all_to_all only: the dim the axes move to.
        reduction: reduce_scatter, all_reduce, replicate_to_partial only.
        bytes: local (padded) bytes per device before the step.
        bytes_after: local bytes per device after it.
        cost: modelled seconds.
        layout: the layout after the step.
        recv_bytes: the most bytes one device receives in the step (wire
            traffic).
        cross_mesh: the step moves the tensor onto the target mesh.
    """

    op: str
    axes: tuple[str, ...]
    dim: int | None
    to_dim: int | None
    reduction: str | None
    bytes: int
    bytes_after: int
    cost: float
    layout: Layout
    recv_bytes: int = 0
    cross_mesh: bool = False

    @property
    def dims(self) -> tuple[int, ...]:
        """The tensor dims the step touches: ``()``, ``(d,)`` or ``(d, e)``."""
        return tuple(d for d in (self.dim, self.to_dim) if d is not None)

    def __str__(self) -> str:
        text = self.op + " {" + ", ".join(json.dumps(a) for a in self.axes) + "}"
        if self.to_dim is not None:
            text += f" dim {self.dim} -> {self.to_dim}"
        elif self.dim is not None:
            text += f" dim {self.dim}"
        if self.reduction is not None:
            text += f" {self.reduction}"
        return text


class Plan:
    """A reshard plan. Iterating yields its :class:`Step` s.

    Attributes:
        mesh, shape, dtype: the request's tensor.
        to_mesh: the target's mesh of a cross-mesh plan (else ``None``).
        source, target: the request's layouts.
        strategy: ``"optimal"`` or ``"greedy"``.
        steps: the moves, in order.
        cost: modelled seconds, the sum of the steps' costs.
        peak_bytes: max over steps of bytes before + after, per device.
        lower_bound: no plan costs less than this.
        cache: ``"hit"``, ``"miss"`` or ``"off"`` (no ``cache_dir``).

    ``str(plan)`` is dist-plan's table; :meth:`to_json` its JSON.
    """

    __slots__ = ("mesh", "to_mesh", "shape", "dtype", "source", "target",
                 "steps", "_impl")

    def __init__(self, impl: _dist.Plan, mesh: Mesh, shape: tuple[int, ...],
                 dtype: str, source: Layout, target: Layout,
                 to_mesh: Mesh | None = None) -> None:
        self._impl = impl
        self.mesh = mesh
        self.to_mesh = to_mesh
        self.shape = shape
        self.dtype = dtype
        self.source = source
        self.target = target
        steps, on = [], mesh
        for s in impl.steps:
            if s["cross_mesh"] and to_mesh is not None:
                on = to_mesh
            steps.append(Step(
                op=s["op"], axes=tuple(s["axes"]), dim=s["dim"],
                to_dim=s["to_dim"], reduction=s["reduction"],
                bytes=s["bytes"], bytes_after=s["bytes_after"],
                cost=s["cost"], layout=Layout._wrap(on, s["layout"]),
                recv_bytes=s["recv_bytes"], cross_mesh=s["cross_mesh"]))
        self.steps: tuple[Step, ...] = tuple(steps)

    @property
    def strategy(self) -> str:
        return self._impl.strategy

    @property
    def cost(self) -> float:
        return self._impl.cost

    @property
    def peak_bytes(self) -> int:
        return self._impl.peak_bytes

    @property
    def lower_bound(self) -> float:
        return self._impl.lower_bound

    @property
    def cache(self) -> str:
        return self._impl.cache

    def to_json(self) -> str:
        """semantics §4's JSON object, byte-identical to
        ``dist-plan --format json`` (without its trailing newline)."""
        return self._impl.to_json()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object as a dict."""
        return json.loads(self.to_json())

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    def __str__(self) -> str:
        return self._impl.table()

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.shape + (self.dtype,)))
        return (f"<Plan {self.strategy} {shape} {self.source} -> {self.target}:"
                f" {len(self.steps)} step{'' if len(self.steps) == 1 else 's'},"
                f" cost {self.cost:.4g} s, peak {self.peak_bytes} B,"
                f" cache {self.cache}>")


def plan(mesh: Mesh | str, shape: Sequence[int], dtype: Any,
         src: LayoutLike, dst: LayoutLike, strategy: str = "optimal",
         cache_dir: str | os.PathLike | None = None,
         max_peak_bytes: int | None = None, alpha: CostParam | None = None,
         beta: CostParam | None = None, moves: str = "all",
         to_mesh: Mesh | str | None = None,
         transfer: tuple[float, float] | None = None) -> Plan:
    """Plans the reshard of a ``shape``/``dtype`` tensor from ``src`` to ``dst``.

    Args:
        mesh: a :class:`Mesh` (or its text).
        shape: the global tensor shape.
        dtype: ``"f32"``, ``"bf16"``, ... (also NumPy or PyTorch dtypes).
        src, dst: layouts: a :class:`Layout`, its text
            (``'[{"dp"}, {}]'``) or placements (``[Shard(0), Replicate()]``).
        strategy: ``"optimal"`` (exact search) or ``"greedy"`` (baseline).
        cache_dir: persistent plan cache directory: the store the
            ``dist-lower-reshard`` pass's ``cache-dir`` option uses. Plans
            are also kept in memory for the life of the process.
        max_peak_bytes: only plans whose per-device peak stays within this.
        alpha, beta: override the mesh's cost parameters: one number for
            every axis or a dict per axis name (seconds; seconds per byte).
        moves: ``"all"`` (collectives and point-to-point ``redistribute``)
            or ``"collective"``.
        to_mesh: for a reshard onto another mesh (a pipeline stage's
            hand-off): the target's mesh; ``dst`` is a layout on it.
        transfer: ``(alpha, beta)`` of the link between the two meshes
            (default: the slowest axis of either).

    Raises:
        ValueError: a bad argument (the message names it).
        NoPlanError: no plan reaches ``dst`` (e.g. within max_peak_bytes).

    >>> mesh = Mesh({"x": 2, "y": 4})
    >>> p = plan(mesh, (1024, 1024), "f32", '[{"x"}, {"y"}]', '[{"y"}, {"x"}]')
    >>> [step.op for step in p]
    ['redistribute']
    >>> [step.op for step in plan(mesh, (1024, 1024), "f32", '[{"x"}, {"y"}]',
    ...                           '[{"y"}, {"x"}]', moves="collective")]
    ['all_gather', 'all_to_all', 'all_slice']
    """
    if isinstance(mesh, str):
        mesh = Mesh.from_text(mesh)
    elif not isinstance(mesh, Mesh):
        raise TypeError(f"mesh must be a Mesh, got {type(mesh).__name__}")
    extents = _shape(shape)
    element = _element_type(dtype)
    spec = "x".join([str(n) for n in extents] + [element])
    extents, _, element_bytes = _dist.parse_tensor_spec(spec)
    if isinstance(to_mesh, str):
        to_mesh = Mesh.from_text(to_mesh)
    elif to_mesh is not None and not isinstance(to_mesh, Mesh):
        raise TypeError(f"to_mesh must be a Mesh, got {type(to_mesh).__name__}")
    source = as_layout(mesh, src, len(extents), "src", extents)
    target = as_layout(to_mesh or mesh, dst, len(extents), "dst", extents)
    if not isinstance(strategy, str):
        raise TypeError(f"strategy must be str, got {strategy!r}")
    if not isinstance(moves, str):
        raise TypeError(f"moves must be str, got {moves!r}")
    if transfer is not None:
        if to_mesh is None:
            raise ValueError("transfer: needs to_mesh")
        try:
            transfer = (float(transfer[0]), float(transfer[1]))
        except (TypeError, ValueError, IndexError):
            raise ValueError("transfer: expected (alpha, beta), got "
                             f"{transfer!r}") from None

    topology = mesh._topology()
    if alpha is not None:
        topology.set_from_list(_cost_list(mesh, alpha, "alpha"), True)
    if beta is not None:
        topology.set_from_list(_cost_list(mesh, beta, "beta"), False)

    if max_peak_bytes is not None:
        if (isinstance(max_peak_bytes, bool)
                or not isinstance(max_peak_bytes, numbers.Integral)
                or not 0 <= max_peak_bytes < 2**63):
            raise ValueError("max_peak_bytes: expected a non-negative int, "
                             f"got {max_peak_bytes!r}")
        max_peak_bytes = int(max_peak_bytes)
    directory = "" if cache_dir is None else os.fspath(cache_dir)
    if cache_dir is not None and not directory:
        raise ValueError("cache_dir: empty path (use None for no cache)")

    result = _dist.plan(mesh._impl, extents, element_bytes, source._impl,
                        target._impl, strategy, directory, max_peak_bytes,
                        topology, moves,
                        None if to_mesh is None else to_mesh._impl,
                        None if to_mesh is None else to_mesh._topology(),
                        transfer)
    for message in result.warnings:
        warnings.warn(message, PlanCacheWarning, stacklevel=2)
    return Plan(result, mesh, tuple(extents), element, source, target,
                to_mesh)

"""Sharding layouts (SPEC §2): the text form and DTensor-style placements.

A layout says, for every tensor dim, which mesh axes split it (major to
minor), which axes hold partial values, and leaves every other axis
replicating. Its text is the body of ``#dist.sharding<@mesh, ...>``::

    [{"dp"}, {"tp"}]                 dim 0 split by dp, dim 1 by tp
    [{"dp", "tp"}, {}]               dim 0 split 8 ways, dp major
    [{}, {}], partial = sum {"tp"}   replicated, but partial sums along tp

The same layouts from placements, one per mesh axis (see
:mod:`dist_mlir.placement`)::

    [Shard(0), Shard(1)]
    [Shard(0), Shard(0)]
    [Replicate(), Partial("sum")]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from . import _dist
from .mesh import Mesh
from .placement import Partial, Placement, Replicate, Shard, _check_int

__all__ = ["Layout", "LayoutLike"]


class Layout:
    """How a tensor is laid out on a :class:`Mesh`.

    Build one from text, ``Layout(mesh, '[{"dp"}, {"tp"}]')``, or from
    placements, ``Layout.from_placements(mesh, [Shard(0), Shard(1)], ndim=2)``.
    ``str(layout)`` is the canonical text; it and :meth:`to_placements`
    round-trip.

    Raises:
        ValueError: malformed text, an axis the mesh lacks, an axis used
            twice, or placements that do not describe one layout.
    """

    __slots__ = ("_mesh", "_impl")

    def __init__(self, mesh: Mesh, text: str) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh must be a Mesh, got {type(mesh).__name__}")
        if not isinstance(text, str):
            raise TypeError(
                f"layout text must be str, got {type(text).__name__} (use "
                "Layout.from_placements for placements)")
        self._mesh = mesh
        self._impl = _dist.Layout.parse(mesh._impl, text)

    @classmethod
    def _wrap(cls, mesh: Mesh, impl: _dist.Layout) -> Layout:
        layout = cls.__new__(cls)
        layout._mesh = mesh
        layout._impl = impl
        return layout

    @classmethod
    def from_text(cls, mesh: Mesh, text: str) -> Layout:
        """Same as ``Layout(mesh, text)``."""
        return cls(mesh, text)

    @classmethod
    def replicated(cls, mesh: Mesh, ndim: int) -> Layout:
        """The layout where every device holds the whole tensor."""
        ndim = _check_ndim(ndim)
        return cls._wrap(mesh, _dist.Layout.from_axes(
            mesh._impl, [[] for _ in range(ndim)], [], "sum"))

    @classmethod
    def from_placements(cls, mesh: Mesh, placements: Sequence[Placement],
                        ndim: int) -> Layout:
        """The layout of DTensor-style placements, one per mesh axis.

        Several ``Shard`` of one dim split it in mesh-axis order (the first
        is major) unless each carries an explicit ``order``.

        >>> mesh = Mesh({"dp": 2, "tp": 4})
        >>> str(Layout.from_placements(mesh, [Shard(0), Shard(-1)], ndim=2))
        '[{"dp"}, {"tp"}]'
        """
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh must be a Mesh, got {type(mesh).__name__}")
        ndim = _check_ndim(ndim)
        if isinstance(placements, (str, bytes)):
            raise TypeError("placements must be a sequence of Shard/Replicate/"
                            "Partial (use Layout(mesh, text) for text)")
        placements = list(placements)
        names = mesh.axis_names
        if len(placements) != len(names):
            raise ValueError(
                f"expected one placement per mesh axis ({len(names)}: "
                f"{', '.join(names)}), got {len(placements)}")
        # dim -> [(explicit order or None, mesh axis position, name)]
        shards: dict[int, list[tuple[int | None, int, str]]] = {}
        partial: list[str] = []
        reductions: dict[str, str] = {}
        for position, (name, placement) in enumerate(zip(names, placements)):
            if isinstance(placement, Shard):
                dim = placement.dim + ndim if placement.dim < 0 else placement.dim
                if not 0 <= dim < ndim:
                    raise ValueError(
                        f"mesh axis {name!r}: {placement!r} is out of range "
                        f"for a tensor of rank {ndim}")
                shards.setdefault(dim, []).append(
                    (placement.order, position, name))
            elif isinstance(placement, Partial):
                partial.append(name)
                reductions[name] = placement.reduce_op
            elif isinstance(placement, Replicate):
                pass
            else:
                raise TypeError(
                    f"mesh axis {name!r}: expected Shard, Replicate or "
                    f"Partial, got {placement!r}")
        if len(set(reductions.values())) > 1:
            described = ", ".join(f"{op} on {name!r}"
                                  for name, op in reductions.items())
            raise ValueError(
                f"all partial axes of a layout share one reduction; got "
                f"{described}")
        dims: list[list[str]] = [[] for _ in range(ndim)]
        for dim, entries in shards.items():
            orders = [order for order, _, _ in entries]
            if all(order is None for order in orders):
                entries.sort(key=lambda entry: entry[1])
            elif any(order is None for order in orders):
                raise ValueError(
                    f"dim {dim} is sharded by mesh axes "
                    f"{', '.join(repr(e[2]) for e in entries)}: give order= on "
                    "every Shard of that dim or on none")
            else:
                if sorted(orders) != list(range(len(entries))):
                    raise ValueError(
                        f"dim {dim}: Shard orders {orders} must be 0.."
                        f"{len(entries) - 1}, each once")
                entries.sort(key=lambda entry: entry[0])
            dims[dim] = [name for _, _, name in entries]
        kind = next(iter(reductions.values()), "sum")
        return cls._wrap(mesh,
                         _dist.Layout.from_axes(mesh._impl, dims, partial, kind))

    # -- views ---------------------------------------------------------------

    @property
    def mesh(self) -> Mesh:
        """The mesh whose axes the layout names."""
        return self._mesh

    @property
    def ndim(self) -> int:
        """The tensor rank."""
        return self._impl.rank

    @property
    def dims(self) -> tuple[tuple[str, ...], ...]:
        """Per tensor dim, the mesh axes splitting it, major to minor."""
        return tuple(tuple(axes) for axes in self._impl.dim_axes(self._mesh._impl))

    @property
    def segments(self) -> tuple[tuple[int, ...], ...]:
        """Per tensor dim, the sub-tensor lengths of an interleaved dim
        (SPEC §2 ``segments``, e.g. a fused QKV weight), else ``()``.

        >>> Layout(Mesh({"tp": 4}), '[{"tp"} segments [16, 4, 4], {}]').segments
        ((16, 4, 4), ())
        """
        return tuple(tuple(s) for s in self._impl.segments)

    @property
    def partial(self) -> tuple[str, ...]:
        """The mesh axes holding partial values, in mesh order."""
        return tuple(self._impl.partial_axes(self._mesh._impl))

    @property
    def reduction(self) -> str | None:
        """The partial values' reduction, or ``None`` when nothing is partial."""
        return self._impl.partial_kind

    def to_placements(self) -> list[Placement]:
        """One placement per mesh axis; ``Layout.from_placements`` inverts it.

        ``order=`` appears only on dims whose axes are not in mesh order.

        >>> mesh = Mesh({"x": 2, "y": 4})
        >>> Layout(mesh, '[{"y", "x"}]').to_placements()
        [Shard(dim=0, order=1), Shard(dim=0, order=0)]
        """
        if any(self.segments):
            raise ValueError(
                f"layout {self}: interleaved dims (segments) have no "
                "placement form yet; use the layout text")
        names = self._mesh.axis_names
        position = {name: i for i, name in enumerate(names)}
        placements: list[Placement] = [Replicate()] * len(names)
        for dim, axes in enumerate(self.dims):
            positions = [position[name] for name in axes]
            in_mesh_order = positions == sorted(positions)
            for order, name in enumerate(axes):
                placements[position[name]] = (
                    Shard(dim) if in_mesh_order else Shard(dim, order=order))
        for name in self.partial:
            placements[position[name]] = Partial(self.reduction)
        return placements

    def local_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The padded per-device buffer shape for a global ``shape``:
        ``ceil(N_d / P_d)`` per dim (SPEC §2), the same on every device."""
        extents = [_check_int(n, "shape extent") for n in shape]
        return tuple(self._impl.local_shape(self._mesh._impl, extents))

    # -- protocol ------------------------------------------------------------

    def __str__(self) -> str:
        return self._impl.text(self._mesh._impl)

    def __repr__(self) -> str:
        return f"Layout({self._mesh!r}, {str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self._mesh._same_devices(other._mesh) and self._impl == other._impl

    def __hash__(self) -> int:
        # The text is canonical (partial axes sorted, kind only if partial).
        return hash((str(self._mesh), str(self)))


#: What plan() accepts for a layout: a Layout, its text, or placements.
LayoutLike = Union[Layout, str, Sequence[Placement]]


def _check_ndim(ndim: object) -> int:
    ndim = _check_int(ndim, "ndim")
    if ndim < 0:
        raise ValueError(f"ndim must be >= 0, got {ndim}")
    return ndim


def as_layout(mesh: Mesh, value: object, ndim: int, what: str) -> Layout:
    """Converts plan()'s ``src``/``dst`` argument, naming it in errors."""
    try:
        if isinstance(value, Layout):
            if not value.mesh._same_devices(mesh):
                raise ValueError(
                    f"the layout is on mesh {value.mesh}, not on {mesh}")
            layout = value
        elif isinstance(value, str):
            layout = Layout(mesh, value)
        else:
            layout = Layout.from_placements(mesh, value, ndim)
        if layout.ndim != ndim:
            raise ValueError(
                f"layout has {layout.ndim} dims but the tensor has rank {ndim}")
        return layout
    except (TypeError, ValueError) as error:
        raise type(error)(f"{what}: {error}") from None

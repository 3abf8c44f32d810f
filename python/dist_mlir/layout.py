"""Sharding layouts (semantics §2): the text form and DTensor-style placements.

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
from .placement import (Partial, Placement, Replicate, Shard, StridedShard,
                        _check_int)

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
                        ndim: int,
                        shape: Sequence[int] | None = None) -> Layout:
        """The layout of DTensor-style placements, one per mesh axis.

        Several ``Shard`` of one dim split it in mesh-axis order (the first
        is major) unless each carries an explicit ``order``. A
        ``StridedShard`` alone on its dim splits it per segment; with a
        ``split_factor`` that needs the global ``shape``.

        >>> mesh = Mesh({"dp": 2, "tp": 4})
        >>> str(Layout.from_placements(mesh, [Shard(0), Shard(-1)], ndim=2))
        '[{"dp"}, {"tp"}]'
        >>> str(Layout.from_placements(
        ...     mesh, [Replicate(), StridedShard(0, split_factor=3)], ndim=2,
        ...     shape=(96, 8)))
        '[{"tp"} segments [32, 32, 32], {}]'
        >>> str(Layout.from_placements(  # FSDP2 + TP: tp major, dp minor
        ...     mesh, [StridedShard(0, split_factor=4), Shard(0)], ndim=1))
        '[{"tp", "dp"}]'
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
        strided: dict[int, list[tuple[StridedShard, int, str]]] = {}
        partial: list[str] = []
        reductions: dict[str, str] = {}
        for position, (name, placement) in enumerate(zip(names, placements)):
            if isinstance(placement, (Shard, StridedShard)):
                dim = placement.dim + ndim if placement.dim < 0 else placement.dim
                if not 0 <= dim < ndim:
                    raise ValueError(
                        f"mesh axis {name!r}: {placement!r} is out of range "
                        f"for a tensor of rank {ndim}")
                if isinstance(placement, StridedShard):
                    strided.setdefault(dim, []).append(
                        (placement, position, name))
                else:
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
        segments: list[list[int]] = [[] for _ in range(ndim)]
        # DTensor's right-to-left order: the plain shards' axes are major.
        minor: dict[int, list[str]] = {}
        for dim, entries in strided.items():
            if dim in shards:
                factor = 1
                for _, position, _ in shards[dim]:
                    factor *= mesh.shape[position]
                for placement, _, name in entries:
                    if placement.split_factor != factor:
                        raise ValueError(
                            f"mesh axis {name!r}: {placement!r} next to Shard"
                            f"({dim}) placements making {factor} shards; "
                            f"DTensor's split_factor would be {factor}")
                minor[dim] = [name for _, _, name in
                              sorted(entries, key=lambda e: e[1])]
                continue
            kinds = {p.segments if p.segments is not None else p.split_factor
                     for p, _, _ in entries}
            if len(kinds) > 1:
                raise ValueError(
                    f"dim {dim}: the StridedShard placements disagree on its "
                    f"segments: {', '.join(repr(p) for p, _, _ in entries)}")
            first = entries[0][0]
            if first.segments is not None:
                segments[dim] = list(first.segments)
            else:
                if shape is None:
                    raise ValueError(
                        f"{first!r}: split_factor needs the global shape "
                        "(Layout.from_placements(..., shape=...))")
                extent = _check_int(shape[dim], "shape extent")
                if extent % first.split_factor:
                    raise ValueError(
                        f"{first!r}: dim {dim} of extent {extent} is not "
                        f"{first.split_factor} equal sub-tensors")
                segments[dim] = ([extent // first.split_factor]
                                 * first.split_factor)
            shards[dim] = [(p.order, position, name)
                           for p, position, name in entries]
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
            dims[dim] = [name for _, _, name in entries] + minor.get(dim, [])
        kind = next(iter(reductions.values()), "sum")
        if shape is not None:
            extents = [_check_int(n, "shape extent") for n in shape]
            for dim, lengths in enumerate(segments):
                if lengths and dim < len(extents) and sum(lengths) != extents[dim]:
                    raise ValueError(
                        f"dim {dim}: segments {lengths} sum to {sum(lengths)}, "
                        f"not the extent {extents[dim]}")
        return cls._wrap(mesh, _dist.Layout.from_axes(
            mesh._impl, dims, partial, kind,
            segments if any(segments) else []))

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
        (semantics §2 ``segments``, e.g. a fused QKV weight), else ``()``.

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
        """One placement per mesh axis; ``Layout.from_placements`` inverts it
        (given the shape when an interleaved dim becomes a ``StridedShard``
        with a ``split_factor``).

        ``order=`` appears only on dims whose axes are not in mesh order.

        >>> mesh = Mesh({"x": 2, "y": 4})
        >>> Layout(mesh, '[{"y", "x"}]').to_placements()
        [Shard(dim=0, order=1), Shard(dim=0, order=0)]
        """
        names = self._mesh.axis_names
        position = {name: i for i, name in enumerate(names)}
        placements: list[Placement] = [Replicate()] * len(names)
        segments = self.segments
        for dim, axes in enumerate(self.dims):
            positions = [position[name] for name in axes]
            in_mesh_order = positions == sorted(positions)
            lengths = segments[dim] if dim < len(segments) else ()
            for order, name in enumerate(axes):
                explicit = None if in_mesh_order else order
                if not lengths:
                    placements[position[name]] = Shard(dim, order=explicit)
                elif len(set(lengths)) == 1:
                    placements[position[name]] = StridedShard(
                        dim, split_factor=len(lengths), order=explicit)
                else:
                    placements[position[name]] = StridedShard(
                        dim, segments=lengths, order=explicit)
        for name in self.partial:
            placements[position[name]] = Partial(self.reduction)
        return placements

    def local_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The padded per-device buffer shape for a global ``shape``:
        ``ceil(N_d / P_d)`` per dim (semantics §2), the same on every device."""
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


def as_layout(mesh: Mesh, value: object, ndim: int, what: str,
              shape: Sequence[int] | None = None) -> Layout:
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
            layout = Layout.from_placements(mesh, value, ndim, shape)
        if layout.ndim != ndim:
            raise ValueError(
                f"layout has {layout.ndim} dims but the tensor has rank {ndim}")
        return layout
    except (TypeError, ValueError) as error:
        raise type(error)(f"{what}: {error}") from None

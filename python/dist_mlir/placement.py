"""DTensor-style placements: what each mesh axis does to a tensor.

A layout can be written per mesh axis, as PyTorch's DTensor does, with one
placement for every axis of the mesh (in mesh order):

- ``Shard(d)``: the axis splits tensor dim ``d`` into equal blocks.
- ``Replicate()``: every device along the axis holds the same data.
- ``Partial("sum")``: devices along the axis hold partial values whose
  reduction (``sum``, ``max``, ``min``, ``prod`` or ``avg``) is the tensor.
- ``StridedShard(d, split_factor=k)``: DTensor's ``_StridedShard``. Alone on
  dim ``d``, the axis splits each of ``k`` equal sub-tensors of the dim on
  its own (a fused QKV weight: rank r holds ``[Q_r; K_r; V_r]``), which is
  the layout ``{"tp"} segments [n/k, ...]`` (semantics §2). Next to ``Shard(d)``
  placements whose axes make ``k`` shards (FSDP2 + TP), it is DTensor's
  right-to-left order: those axes are major, this one minor.
  ``StridedShard(d, segments=[...])`` gives unequal sub-tensors (GQA).

When several mesh axes shard the same dim, their order matters: the first is
the *major* one (it picks the coarse block, the next one splits that block
further). By default the order is the mesh's axis order, exactly as in
DTensor: on a mesh ``{"x": 2, "y": 4}``, ``[Shard(0), Shard(0)]`` is the
layout ``[{"x", "y"}]``. To shard in another order, give every ``Shard`` of
that dim an explicit position, 0 being the major-most:
``[Shard(0, order=1), Shard(0, order=0)]`` is ``[{"y", "x"}]``.

>>> from dist_mlir import Mesh, Layout, Shard, Replicate, Partial
>>> mesh = Mesh({"x": 2, "y": 4})
>>> str(Layout.from_placements(mesh, [Shard(0), Shard(0)], ndim=1))
'[{"x", "y"}]'
>>> str(Layout.from_placements(mesh, [Shard(0, order=1), Shard(0, order=0)], ndim=1))
'[{"y", "x"}]'
>>> str(Layout.from_placements(mesh, [Replicate(), Partial("max")], ndim=2))
'[{}, {}], partial = max {"y"}'
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

__all__ = ["Placement", "Shard", "StridedShard", "Replicate", "Partial",
           "REDUCTIONS"]

#: The reductions a partial value can have (semantics §2).
REDUCTIONS = ("sum", "max", "min", "prod", "avg")


class Placement:
    """Base class of :class:`Shard`, :class:`Replicate` and :class:`Partial`."""

    __slots__ = ()

    def is_shard(self, dim: int | None = None) -> bool:
        """True for a ``Shard`` (of ``dim``, when given)."""
        return False

    def is_replicate(self) -> bool:
        """True for ``Replicate()``."""
        return False

    def is_partial(self) -> bool:
        """True for a ``Partial``."""
        return False


def _check_int(value: object, what: str) -> int:
    # bool is an Integral too, and Shard(True) is surely a mistake.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Shard(Placement):
    """The mesh axis splits tensor dim ``dim`` (negative counts from the end).

    Args:
        dim: the tensor dim.
        order: only when several mesh axes shard ``dim``: this axis's
            position among them, 0 = major-most. Give it on all of them or
            on none (then the mesh's axis order is used).
    """

    dim: int
    order: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", _check_int(self.dim, "Shard dim"))
        if self.order is not None:
            order = _check_int(self.order, "Shard order")
            if order < 0:
                raise ValueError(f"Shard order must be >= 0, got {order}")
            object.__setattr__(self, "order", order)

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    def __repr__(self) -> str:
        if self.order is None:
            return f"Shard(dim={self.dim})"
        return f"Shard(dim={self.dim}, order={self.order})"


@dataclass(frozen=True)
class StridedShard(Placement):
    """The mesh axis splits tensor dim ``dim`` segment by segment.

    Args:
        dim: the tensor dim (negative counts from the end).
        split_factor: DTensor's ``_StridedShard`` argument: the dim is that
            many equal sub-tensors (then ``Layout.from_placements`` needs
            the global ``shape``), or, next to ``Shard`` placements of the
            same dim, the number of shards those make.
        segments: instead of ``split_factor``, the sub-tensor lengths, e.g.
            ``(4096, 1024, 1024)`` for a GQA QKV weight.
        order: as for ``Shard``, when several axes split the dim.
    """

    dim: int
    split_factor: int | None = None
    segments: tuple[int, ...] | None = None
    order: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", _check_int(self.dim, "StridedShard dim"))
        if (self.split_factor is None) == (self.segments is None):
            raise ValueError("StridedShard needs exactly one of split_factor= "
                             "and segments=")
        if self.split_factor is not None:
            factor = _check_int(self.split_factor, "StridedShard split_factor")
            if factor < 1:
                raise ValueError(
                    f"StridedShard split_factor must be >= 1, got {factor}")
            object.__setattr__(self, "split_factor", factor)
        if self.segments is not None:
            if isinstance(self.segments, (str, bytes)):
                raise TypeError("StridedShard segments must be a sequence of "
                                "ints")
            lengths = tuple(_check_int(n, "StridedShard segment")
                            for n in self.segments)
            if not lengths or any(n < 1 for n in lengths):
                raise ValueError(
                    f"StridedShard segments must be >= 1 each, got {lengths}")
            object.__setattr__(self, "segments", lengths)
        if self.order is not None:
            order = _check_int(self.order, "StridedShard order")
            if order < 0:
                raise ValueError(
                    f"StridedShard order must be >= 0, got {order}")
            object.__setattr__(self, "order", order)

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    def __repr__(self) -> str:
        what = (f"split_factor={self.split_factor}"
                if self.split_factor is not None
                else f"segments={list(self.segments)}")
        order = "" if self.order is None else f", order={self.order}"
        return f"StridedShard(dim={self.dim}, {what}{order})"


@dataclass(frozen=True)
class Replicate(Placement):
    """Every device along the mesh axis holds the same data."""

    def is_replicate(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "Replicate()"


@dataclass(frozen=True)
class Partial(Placement):
    """Devices along the mesh axis hold partial values of the tensor.

    Args:
        reduce_op: how the partial values combine: ``"sum"`` (the default,
            as in DTensor), ``"max"``, ``"min"``, ``"prod"`` or ``"avg"``.
            All partial axes of one layout share one reduction.
    """

    reduce_op: str = "sum"

    def __post_init__(self) -> None:
        if self.reduce_op not in REDUCTIONS:
            raise ValueError(
                f"Partial reduce_op {self.reduce_op!r} is not one of "
                f"{', '.join(REDUCTIONS)}")

    def is_partial(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op!r})"

"""DTensor-style placements: what each mesh axis does to a tensor.

A layout can be written per mesh axis, as PyTorch's DTensor does, with one
placement for every axis of the mesh (in mesh order):

- ``Shard(d)``: the axis splits tensor dim ``d`` into equal blocks.
- ``Replicate()``: every device along the axis holds the same data.
- ``Partial("sum")``: devices along the axis hold partial values whose
  reduction (``sum``, ``max``, ``min``, ``prod`` or ``avg``) is the tensor.

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

__all__ = ["Placement", "Shard", "Replicate", "Partial", "REDUCTIONS"]

#: The reductions a partial value can have (SPEC §2).
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

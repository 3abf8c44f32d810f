"""Global arrays from every rank's local shard (semantics §2), the inverse of
how dist-run feeds inputs: what a front door's ``Program.run`` returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy

    from .layout import Layout

__all__ = ["assemble"]


def _block_indices(layout: Layout, shape: Sequence[int],
                   coordinate: Sequence[int]) -> list[list[int]]:
    """Per dim, the global index each local padded position holds (-1:
    padding): the device's block of the dim, of each segment in turn on an
    interleaved dim (semantics §2)."""
    mesh = layout.mesh
    names = mesh.axis_names
    out = []
    for d, extent in enumerate(shape):
        axes = layout.dims[d]
        parts, block = 1, 0
        for axis in axes:                        # major to minor
            a = names.index(axis)
            block = block * mesh.shape[a] + coordinate[a]
            parts *= mesh.shape[a]
        segments = layout.segments[d] if axes and layout.segments[d] else (extent,)
        index, offset = [], 0
        for length in segments:
            size = -(-length // parts)
            index += [offset + block * size + i if block * size + i < length else -1
                      for i in range(size)]
            offset += length
        out.append(index)
    return out


_COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def assemble(shards: Sequence[numpy.ndarray | None], layout: Layout,
             shape: Sequence[int]) -> numpy.ndarray:
    """The global array of ``shape`` whose local padded blocks on the ranks
    of ``layout``'s mesh are ``shards`` (indexed by rank). Replicas must agree
    only in that the first one found is taken; partial values are reduced
    over the partial axes with the layout's reduction."""
    import numpy

    mesh = layout.mesh
    result = None
    seen = None
    partial_axes = [mesh.axis_names.index(a) for a in layout.partial]
    kind = layout.reduction or "sum"
    # The partial groups: one global array per combination of partial
    # coordinates, then reduced.
    groups: dict[tuple[int, ...], numpy.ndarray] = {}
    group_seen: dict[tuple[int, ...], numpy.ndarray] = {}
    for rank in mesh.devices:
        local = shards[rank]
        if local is None:
            raise ValueError(f"rank {rank} holds part of the result but dumped none")
        coordinate = mesh.coordinate_of(rank)
        key = tuple(coordinate[a] for a in partial_axes)
        if key not in groups:
            groups[key] = numpy.zeros(tuple(shape), dtype=local.dtype)
            group_seen[key] = numpy.zeros(tuple(shape), dtype=bool)
        index = _block_indices(layout, shape, coordinate)
        keep = [numpy.nonzero(numpy.asarray(ix) >= 0)[0] for ix in index]
        if not all(len(k) for k in keep):
            continue
        where = numpy.ix_(*[numpy.asarray(ix)[k] for ix, k in zip(index, keep)])
        groups[key][where] = local[numpy.ix_(*keep)]
        group_seen[key][where] = True
    for key, value in groups.items():
        if not group_seen[key].all():
            raise ValueError(f"the shards leave elements of the result unset "
                             f"(layout {layout})")
        if result is None:
            result = value
        elif kind == "avg":
            result = result + value
        else:
            result = getattr(numpy, _COMBINE[kind])(result, value)
        seen = True
    if kind == "avg" and partial_axes and seen:
        result = result / len(groups)
    return result

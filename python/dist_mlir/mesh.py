"""Device meshes (semantics §1) and their communication cost parameters (§3)."""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from . import _dist

__all__ = ["Mesh", "TopologyLike"]

#: A topology: the semantics §3 JSON object as a dict
#: (``{"axes": {"x": {"alpha": 1e-5, "beta": 2.7e-12}}}``) or the path of
#: a file holding it.
TopologyLike = Union[Mapping[str, Any], str, os.PathLike]

_INT64_MAX = 2**63 - 1


def _to_int64(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {value!r}")
    value = int(value)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise ValueError(f"{what} {value} does not fit in 64 bits")
    return value


def _load_topology(topology: TopologyLike) -> tuple[str, str]:
    """Returns (JSON text, description for messages and repr)."""
    if isinstance(topology, Mapping):
        try:
            return json.dumps(topology), "dict"
        except (TypeError, ValueError) as error:
            raise ValueError(f"topology: not JSON-serialisable: {error}") from None
    if isinstance(topology, (str, os.PathLike)):
        path = os.fspath(topology)
        try:
            with open(path, encoding="utf-8") as file:
                return file.read(), path
        except OSError as error:
            raise ValueError(
                f"topology: cannot read '{path}': {error.strerror}") from None
    raise TypeError(
        "topology must be a dict or the path of a JSON file, got "
        f"{type(topology).__name__}")


class Mesh:
    """A named, ordered grid of devices, like PyTorch's ``DeviceMesh``.

    ``Mesh({"dp": 2, "tp": 4})`` has 8 devices; the device at coordinate
    ``(i, j)`` has linear index ``4*i + j`` (row-major, axis 0 most
    significant) and rank ``devices[4*i + j]`` (the identity by default).

    Args:
        axes: axis name -> size, in mesh order (a dict keeps insertion
            order), or a sequence of ``(name, size)`` pairs.
        devices: optional rank of every device in row-major order; a
            permutation of ``0..N-1``.
        topology: optional cost parameters per axis, as the semantics §3 JSON
            object (a dict) or the path of a file holding it::

                {"axes": {"dp": {"alpha": 5e-5, "beta": 4e-11},
                          "tp": {"alpha": 1e-5, "beta": 2.7e-12}}}

            Axes left out use the defaults (``alpha = 1e-5`` s,
            ``beta = 1/370e9`` s/B: one 8-GPU NVLink node).

    Raises:
        ValueError: invalid axes, devices or topology (the message says
            which); TypeError: arguments of the wrong type.

    >>> mesh = Mesh({"dp": 2, "tp": 4})
    >>> str(mesh), mesh.shape, mesh.num_devices
    ('<["dp"=2, "tp"=4]>', (2, 4), 8)
    >>> mesh.coordinate_of(6)
    (1, 2)
    """

    __slots__ = ("_impl", "_topology_json", "_topology_source")

    def __init__(self, axes: Mapping[str, int] | Iterable[tuple[str, int]],
                 devices: Sequence[int] | None = None,
                 topology: TopologyLike | None = None) -> None:
        if isinstance(axes, (str, bytes)):
            raise TypeError("axes must be a dict of name -> size (use "
                            "Mesh.from_text to parse mesh text)")
        items = axes.items() if isinstance(axes, Mapping) else axes
        pairs = []
        for item in items:
            try:
                name, size = item
            except (TypeError, ValueError):
                raise TypeError(
                    f"mesh axes must be (name, size) pairs, got {item!r}") from None
            if not isinstance(name, str):
                raise TypeError(f"mesh axis names must be str, got {name!r}")
            pairs.append((name, _to_int64(size, f"size of mesh axis {name!r}")))
        table = [] if devices is None else [
            _to_int64(d, "device id") for d in devices]
        # The C++ API reads an empty table as "identity"; here it can only be
        # a mistake, as Mesh.from_text also rejects "devices = []".
        if devices is not None and not table:
            raise ValueError("mesh devices list is empty; leave devices=None "
                             "for the identity")
        self._init(_dist.Mesh.create(pairs, table), topology)

    def _init(self, impl: _dist.Mesh, topology: TopologyLike | None) -> None:
        self._impl = impl
        self._topology_json = None
        self._topology_source = None
        if topology is not None:
            text, source = _load_topology(topology)
            parsed = _dist.Topology.parse_json(text)
            # Catches axes the mesh does not have now, not at the first plan.
            parsed.cost_params(impl)
            self._topology_json = text
            self._topology_source = source

    @classmethod
    def from_text(cls, text: str,
                  topology: TopologyLike | None = None) -> Mesh:
        """Parses the text of semantics §1 ``<["x"=2, "y"=4], devices = [...]>``.

        >>> Mesh.from_text('<["x"=2, "y"=2], devices = [3, 2, 1, 0]>').devices
        (3, 2, 1, 0)
        """
        if not isinstance(text, str):
            raise TypeError(f"mesh text must be str, got {type(text).__name__}")
        mesh = cls.__new__(cls)
        mesh._init(_dist.Mesh.parse(text), topology)
        return mesh

    # -- shape ---------------------------------------------------------------

    @property
    def axis_names(self) -> tuple[str, ...]:
        """The axis names, in mesh order."""
        return tuple(name for name, _ in self._impl.axes)

    @property
    def shape(self) -> tuple[int, ...]:
        """The axis sizes, in mesh order."""
        return tuple(size for _, size in self._impl.axes)

    @property
    def axes(self) -> dict[str, int]:
        """Axis name -> size, in mesh order."""
        return dict(self._impl.axes)

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self._impl.axes)

    @property
    def num_devices(self) -> int:
        """The number of devices (the product of the axis sizes)."""
        return self._impl.num_devices

    def size(self, axis: str | int | None = None) -> int:
        """The number of devices, or the size of one axis given by name or
        by position (as ``DeviceMesh.size(mesh_dim)``)."""
        if axis is None:
            return self.num_devices
        if isinstance(axis, str):
            if axis not in self.axis_names:
                raise ValueError(f"{axis!r} is not an axis of mesh {self}")
            return self.axes[axis]
        position = _to_int64(axis, "axis position")
        if not -self.ndim <= position < self.ndim:
            raise ValueError(f"axis position {position} is out of range for "
                             f"mesh {self}")
        return self.shape[position]

    # -- devices -------------------------------------------------------------

    @property
    def devices(self) -> tuple[int, ...]:
        """The rank of every device in row-major coordinate order."""
        table = self._impl.device_table
        return tuple(table) if table else tuple(range(self.num_devices))

    def rank_of(self, coordinate: Sequence[int]) -> int:
        """The rank of the device at ``coordinate`` (one entry per axis)."""
        coord = [_to_int64(c, "coordinate entry") for c in coordinate]
        return self._impl.rank_of(coord)

    def coordinate_of(self, rank: int) -> tuple[int, ...]:
        """The coordinate of the device with this rank."""
        return tuple(self._impl.coordinate_of(_to_int64(rank, "rank")))

    # -- costs ---------------------------------------------------------------

    @property
    def topology(self) -> dict[str, Any] | None:
        """The topology given at construction, as a dict (``None``: defaults)."""
        return None if self._topology_json is None else json.loads(
            self._topology_json)

    def cost_params(self) -> dict[str, tuple[float, float]]:
        """Axis name -> ``(alpha, beta)`` the planner uses for this mesh.

        >>> Mesh({"x": 2}).cost_params()["x"][0]
        1e-05
        """
        return dict(self._topology().cost_params(self._impl))

    def _topology(self) -> _dist.Topology:
        # A fresh object each time: plan() overrides alpha/beta in place.
        if self._topology_json is None:
            return _dist.Topology()
        return _dist.Topology.parse_json(self._topology_json)

    # -- protocol ------------------------------------------------------------

    def __str__(self) -> str:
        return str(self._impl)

    def __repr__(self) -> str:
        args = [repr(self.axes)]
        if self._impl.device_table:
            args.append(f"devices={list(self.devices)!r}")
        if self._topology_source == "dict":
            args.append(f"topology={self.topology!r}")
        elif self._topology_source is not None:
            args.append(f"topology={self._topology_source!r}")
        return f"Mesh({', '.join(args)})"

    def __eq__(self, other: object) -> bool:
        # Equal meshes plan identically: same axes, devices and costs.
        if not isinstance(other, Mesh):
            return NotImplemented
        return (self._impl == other._impl
                and self.cost_params() == other.cost_params())

    def __hash__(self) -> int:
        return hash((str(self), tuple(sorted(self.cost_params().items()))))

    def _same_devices(self, other: Mesh) -> bool:
        """Same axes and devices; costs may differ (layouts only need this)."""
        return self._impl == other._impl

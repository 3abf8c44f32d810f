"""Program: a global-view dist program a front door made (SPEC §7a).

A front door (``dist_mlir.frontends.torch.export``, ...) exports a framework's
program to linalg on tensors, names its arguments, and writes the layouts it
was asked for on the function's signature (``{dist.sharding = ...}``,
semantics §6); tensors nobody planned are free (``dist.auto``). A Program
holds that module with the values its arguments had at export, and runs it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .compiler import compile as _compile
from .layout import Layout
from .mesh import Mesh
from .runner import run as _run
from .shards import assemble

if TYPE_CHECKING:
    import numpy

__all__ = ["Program"]

_SHARDING = "#dist.sharding<@"
_TENSOR = re.compile(r"tensor<((?:\d+x)*)([a-z0-9]+)")


def _encodings(signature: str) -> list[str]:
    """The layout text (`[...]` and partial) of each #dist.sharding in
    order."""
    out, i = [], 0
    while True:
        j = signature.find(_SHARDING, i)
        if j < 0:
            return out
        start = signature.index(",", j) + 1
        depth, k = 1, j + len(_SHARDING)
        while depth:
            depth += {"<": 1, ">": -1}.get(signature[k], 0)
            k += 1
        out.append(signature[start:k - 1].strip())
        i = k


def _function_signature(text: str, entry: str) -> tuple[str, str]:
    """The argument list and the result list of `func.func @entry` in text."""
    head = text.index(f"func.func @{entry}(")
    i, depth = head + len(f"func.func @{entry}("), 1
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    arguments = text[head:i]
    body = text.index("{\n", i)
    return arguments, text[i:body]


class Program:
    """A global-view program on one mesh: ``.mlir`` (the module, layouts on
    its signature), ``.names`` (one per argument: a parameter's FQN or
    ``args[k]``), ``.layouts`` (every argument's and result's layout after
    partitioning), ``.run()`` and ``.save()``."""

    def __init__(self, mlir: str, mesh: Mesh, entry: str, names: Sequence[str],
                 values: Sequence[Any], num_inputs: int,
                 flatten_inputs: Any = None) -> None:
        self.mlir = mlir
        self.mesh = mesh
        self.entry = entry
        self.names = list(names)
        self._values = list(values)
        self._num_inputs = num_inputs
        # The export's positional arguments as the function's flat inputs
        # (a JAX pytree's leaves); None: they are the inputs already.
        self._flatten_inputs = flatten_inputs
        self._partitioned: str | None = None

    def _partition(self) -> str:
        if self._partitioned is None:
            self._partitioned = _compile(self.mlir, "dist-partition")
        return self._partitioned

    @property
    def layouts(self) -> dict[str, Layout]:
        """Each argument's (by name) and result's (``result[k]``) layout
        after partitioning: what the plan fixed and what dist chose."""
        arguments, results = _function_signature(self._partition(), self.entry)
        out = {}
        for name, text in zip(self.names, _encodings(arguments)):
            out[name] = Layout(self.mesh, text)
        for k, text in enumerate(_encodings(results)):
            out[f"result[{k}]"] = Layout(self.mesh, text)
        return out

    def _result_shapes(self) -> list[tuple[int, ...]]:
        _, results = _function_signature(self._partition(), self.entry)
        return [tuple(int(d) for d in m.group(1).split("x") if d)
                for m in _TENSOR.finditer(results)]

    def run(self, np: int | None = None, inputs: Sequence[Any] | None = None,
            reps: int = 0, **kwargs: Any) -> list[numpy.ndarray]:
        """Runs the program on ``np`` ranks (default: the mesh's devices) and
        returns each result's *global* array, reassembled from the ranks.
        ``inputs``: the export's positional arguments again (default: the
        example ones); the parameters keep their values from the export.
        ``reps`` > 0 also times that many calls after a warm-up and prints
        dist-run's line ``dist-run: per call: median X ms, min Y ms over R
        calls (slowest rank); modelled Z ms`` (semantics §8). Other keyword
        arguments go to :func:`dist_mlir.run`."""
        import numpy as np_

        values = list(self._values)
        if inputs is not None:
            if self._flatten_inputs is not None:
                inputs = self._flatten_inputs(inputs)
            if len(inputs) != self._num_inputs:
                raise ValueError(f"inputs: expected {self._num_inputs} "
                                 f"arguments, got {len(inputs)}")
            values[len(values) - self._num_inputs:] = list(inputs)
        missing = [n for n, v in zip(self.names, values) if v is None]
        if missing:
            raise ValueError(f"inputs: the export had no values for {missing} "
                             "(shapes only): pass inputs=")
        arrays = [np_.asarray(_as_numpy(v)) for v in values]
        ranks = np or max(self.mesh.devices) + 1
        options = list(kwargs.pop("options", ()))
        if reps:
            options += ["--reps", str(reps)]
        shards = _run(self.mlir, ranks, inputs=arrays, options=options, **kwargs)
        layouts = list(self.layouts.values())[len(self.names):]
        return [assemble(local, layout, shape) for local, layout, shape
                in zip(shards, layouts, self._result_shapes())]

    def save(self, path: str | os.PathLike) -> None:
        """Writes ``.mlir`` to ``path``: a dist-run / dist-opt input."""
        with open(path, "w", encoding="utf-8") as file:
            file.write(self.mlir)


def _as_numpy(value: Any) -> Any:
    """A framework tensor (torch, jax) as a NumPy array, bf16 as float32."""
    if hasattr(value, "detach"):                  # torch
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if str(getattr(value, "dtype", "")) == "bfloat16":  # jax, ml_dtypes
        import numpy as np_
        return np_.asarray(value).astype(np_.float32)
    return value

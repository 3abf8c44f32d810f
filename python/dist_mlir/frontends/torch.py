"""A PyTorch module (or function) as a dist program (SPEC §7a).

    >>> program = export(model, (tokens,), mesh=Mesh({"tp": 4}),
    ...                  plan={"*.q_proj": ColwiseParallel(),
    ...                        "*.o_proj": RowwiseParallel()})
    >>> [y] = program.run()                                  # doctest: +SKIP

torch.export traces the module with its parameters and buffers lifted to
inputs (``torch.func.functional_call``), so torch-mlir's importer makes them
function arguments, never constants; its FX importer lowers the graph to
linalg on tensors. The plan writes layouts on the signature
(``{dist.sharding = ...}``, semantics §6); everything it does not name is
free (``dist.auto``, §6a) and dist-partition chooses it.

Plans, in PyTorch's own vocabulary (``torch.distributed.tensor``):

- ``"auto"``: nothing fixed;
- ``{pattern: ColwiseParallel() | RowwiseParallel() | SequenceParallel()}``:
  the submodules whose FQN matches (fnmatch) get the parameter layouts
  ``parallelize_module`` gives them, on the mesh axis ``"tp"`` (or the only
  axis): an ``nn.Linear`` column-wise splits its weight's output features
  (``Shard(0)``, bias too), row-wise its input features (``Shard(1)``, bias
  replicated); an ``nn.Embedding`` row-wise splits the vocabulary
  (``Shard(0)``), column-wise the embedding dim (``Shard(1)``);
  ``SequenceParallel`` keeps a norm's weights replicated (the activations are
  dist's choice);
- ``{parameter FQN pattern: (placement, ...)}``: DTensor placements
  (``Shard(d)``, ``Replicate()``), one per mesh axis.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from ..layout import Layout
from ..mesh import Mesh
from ..placement import Replicate as _Replicate
from ..placement import Shard as _Shard
from ..program import Program
from ._constants import hoist as hoist_constants
from . import ExportError
from ._text import annotate_entry, foreign_op

__all__ = ["export", "ExportError"]


def export(module_or_fn: Any, args: Any, *, mesh: Mesh,
           plan: str | Mapping[str, Any] = "auto") -> Program:
    """Exports ``module_or_fn(*args)`` to a dist Program on ``mesh``."""
    import torch

    if not isinstance(mesh, Mesh):
        raise TypeError(f"mesh: expected a dist_mlir.Mesh, got {type(mesh).__name__}")
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    module = module_or_fn
    if not isinstance(module, torch.nn.Module):
        if not callable(module):
            raise TypeError("module_or_fn: expected an nn.Module or a function")
        module = _Function(module)
    state = dict(module.named_parameters())
    state.update(dict(module.named_buffers()))
    names = list(state)
    layouts = _plan_layouts(module, state, mesh, plan)
    text = _import(module, names, [state[n] for n in names], args)
    foreign = foreign_op(text, r"torch|torch_c|tm_tensor|ml_program")
    if foreign:
        name, line, source = foreign
        raise ExportError(f"{source}torch-mlir made {name}, which dist does "
                          f"not read (no linalg form of it): {line[:300]}")
    text = _annotate(text, mesh, [layouts.get(n) for n in names] +
                     [None] * len(args))
    text, constants = hoist_constants(text, "forward")
    return Program(text, mesh, "forward",
                   [n for n, _ in constants] + names +
                   [f"args[{k}]" for k in range(len(args))],
                   [v for _, v in constants] + [state[n] for n in names] +
                   list(args), len(args))


class _Function:
    """A function as a module with no state."""

    def __new__(cls, fn: Any) -> Any:
        import torch

        class FunctionModule(torch.nn.Module):
            def forward(self, *args: Any) -> Any:
                return fn(*args)
        return FunctionModule()


def _import(module: Any, names: Sequence[str], state: Sequence[Any],
            args: Sequence[Any]) -> str:
    """torch-mlir's linalg-on-tensors module of module(*args), the state
    (parameters, then buffers, in `names` order) its first arguments."""
    import torch
    from torch_mlir import fx

    class Stateless(torch.nn.Module):
        """The module as a function of its state: the module is not a
        submodule here, so torch.export lifts nothing itself (non-persistent
        buffers included: every state tensor comes in as an input)."""

        def __init__(self) -> None:
            super().__init__()
            object.__setattr__(self, "inner", module)

        def forward(self, *flat: Any) -> Any:
            values = dict(zip(names, flat[:len(names)]))
            return torch.func.functional_call(self.inner, values,
                                              tuple(flat[len(names):]))

    imported = fx.export_and_import(Stateless(), *state, *args,
                                    output_type="linalg-on-tensors",
                                    func_name="forward",
                                    decomposition_table=_decompositions())
    # With torch's source lines, which dist's diagnostics then show.
    return imported.operation.get_asm(enable_debug_info=True)


def _decompositions() -> dict[Any, Any]:
    """torch-mlir's decompositions, and cumsum as a product with a
    triangular matrix of ones (linalg, which dist partitions; torch-mlir
    lowers cumsum to its own `tm_tensor.scan`, which no MLIR tool but
    torch-mlir's reads: the position ids of transformers' masks)."""
    import torch
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    def cumsum(x: Any, dim: int, dtype: Any = None) -> Any:
        if dtype is not None:
            x = x.to(dtype)
        dim = dim % x.dim()
        n = x.shape[dim]
        upper = torch.ones(n, n, dtype=x.dtype, device=x.device).triu()
        moved = x.movedim(dim, -1)
        return torch.tensordot(moved, upper, dims=([-1], [0])).movedim(-1, dim)

    table = dict(get_decomposition_table())
    table[torch.ops.aten.cumsum.default] = cumsum
    return table


def _style_placements(style: Any, submodule: Any, axis: int,
                      mesh: Mesh) -> dict[str, list[Any]]:
    """The parameter placements (by local name) parallelize_module gives
    `submodule` under `style` on mesh axis `axis`."""
    import torch

    kind = type(style).__name__
    rows = [_Replicate()] * mesh.ndim
    def shard(d: int) -> list[Any]:
        out = list(rows)
        out[axis] = _Shard(d)
        return out
    if isinstance(submodule, torch.nn.Linear):
        if kind == "ColwiseParallel":
            return {"weight": shard(0), "bias": shard(0)}
        if kind == "RowwiseParallel":
            return {"weight": shard(1), "bias": list(rows)}
    if isinstance(submodule, torch.nn.Embedding):
        if kind == "RowwiseParallel":
            return {"weight": shard(0)}
        if kind == "ColwiseParallel":
            return {"weight": shard(1)}
    if kind == "SequenceParallel":
        return {name: list(rows) for name, _ in submodule.named_parameters()}
    raise ValueError(f"plan: {kind} on a {type(submodule).__name__} has no "
                     "parameter layouts here (nn.Linear and nn.Embedding "
                     "take ColwiseParallel and RowwiseParallel, any module "
                     "SequenceParallel)")


def _tp_axis(mesh: Mesh) -> int:
    names = mesh.axis_names
    if "tp" in names:
        return names.index("tp")
    if len(names) == 1:
        return 0
    raise ValueError(f"plan: a tensor-parallel style needs a mesh axis named "
                     f"'tp' or a 1-D mesh, not {mesh}")


def _placements(value: Any) -> list[Any] | None:
    """DTensor placements (torch's or dist_mlir's) as dist_mlir's, or None
    when `value` is not a sequence of them."""
    if not isinstance(value, (list, tuple)):
        return None
    out = []
    for p in value:
        kind = type(p).__name__
        if kind == "Shard":
            out.append(_Shard(int(p.dim)))
        elif kind == "Replicate":
            out.append(_Replicate())
        else:
            return None
    return out


def _plan_layouts(module: Any, state: Mapping[str, Any], mesh: Mesh,
                  plan: str | Mapping[str, Any]) -> dict[str, Layout]:
    """The layout of every state tensor the plan names, by FQN."""
    if plan == "auto":
        return {}
    if not isinstance(plan, Mapping):
        raise TypeError("plan: expected \"auto\" or a dict")
    placements: dict[str, list[Any]] = {}
    modules = dict(module.named_modules())
    for pattern, value in plan.items():
        matched = False
        as_placements = _placements(value)
        if as_placements is not None:
            if len(as_placements) != mesh.ndim:
                raise ValueError(f"plan[{pattern!r}]: {len(as_placements)} "
                                 f"placements for a mesh of {mesh.ndim} axes")
            for name in state:
                if fnmatch.fnmatchcase(name, pattern):
                    placements[name] = as_placements
                    matched = True
        else:
            axis = _tp_axis(mesh)
            for name, sub in modules.items():
                if name and fnmatch.fnmatchcase(name, pattern):
                    for local, p in _style_placements(value, sub, axis, mesh).items():
                        full = f"{name}.{local}"
                        if full in state:
                            placements[full] = p
                    matched = True
        if not matched:
            raise ValueError(f"plan[{pattern!r}] names no "
                             f"{'parameter' if as_placements else 'module'} "
                             "of the model")
    return {name: Layout.from_placements(mesh, p, ndim=state[name].dim())
            for name, p in placements.items()}


def _annotate(text: str, mesh: Mesh, layouts: Sequence[Layout | None]) -> str:
    """The module with the mesh, the argument layouts on the signature and
    the function marked dist.auto (whatever is unnamed is dist's choice)."""
    try:
        return annotate_entry(text, "forward", str(mesh),
                              [None if l is None else str(l) for l in layouts])
    except ValueError as error:
        raise RuntimeError(f"torch-mlir's output: {error}") from None

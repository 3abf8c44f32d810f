"""A jitted JAX function as a dist program (SPEC §7a).

    >>> program = export(jax.jit(block), x, params)          # doctest: +SKIP
    >>> [y] = program.run()                                  # doctest: +SKIP

JAX lowers the function to StableHLO with Shardy's shardings (``sdy.mesh``,
``#sdy.sharding`` on the arguments and results, ``sdy.sharding_constraint``
in the body). The front door reads the mesh and the layouts from them, hands
the rest to IREE's StableHLO input conversion (``iree-compile
--compile-to=input``, pinned in utils/frontends/requirements.txt; it
turns the body into linalg on tensors and ``lax.scan`` into ``scf.for``) and
writes the layouts back in dist's form:

- an argument or result sharding: ``{dist.sharding = ...}`` on the
  signature (semantics §6), binding; one with an open dim (``?``, what
  ``jax.sharding.PartitionSpec.UNCONSTRAINED`` lowers to) or none at all:
  free (``dist.auto``), dist chooses it;
- a sharding constraint: a copy with ``{dist.sharding = ...}``, binding
  there (IREE keeps it as an optimization barrier in between);
- unreduced axes: partial sums; Shardy's sub-axes (``"x":(2)4``, part of a
  mesh axis): the mesh axis factored into named parts ``"x.0"``, ``"x.1"``
  (the same devices in the same order), every use of the whole axis
  written as all its parts.

The locations JAX records go through, so an op dist cannot partition is
reported at the line of the JAX program that made it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any

from ..layout import Layout
from ..mesh import Mesh
from ..program import Program
from ._constants import hoist as hoist_constants
from ._cumsum import rewrite as cumulative_sums_as_products
from . import ExportError
from ._text import annotate_entry, balanced, foreign_op, split_top_level

__all__ = ["export", "from_stablehlo", "ExportError"]


def export(jitted_fn: Any, *args: Any, mesh: Mesh | None = None) -> Program:
    """Exports ``jitted_fn(*args)`` to a dist Program.

    ``jitted_fn``: a ``jax.jit`` function (a plain function is jitted);
    ``args``: arrays or ``jax.ShapeDtypeStruct`` s (pytrees of them), whose
    shardings, with the jit's ``in_shardings``/``out_shardings`` and the
    body's constraints, are the plan. ``mesh``: the mesh when the function
    names none (no sharding anywhere: everything is dist's choice).
    """
    import jax

    if not hasattr(jitted_fn, "lower"):
        if not callable(jitted_fn):
            raise TypeError("jitted_fn: expected a jax.jit function")
        jitted_fn = jax.jit(jitted_fn)
    leaves, _ = jax.tree_util.tree_flatten_with_path(args)
    names = [_leaf_name(path) for path, _ in leaves]
    values = [None if isinstance(v, jax.ShapeDtypeStruct) else v
              for _, v in leaves]
    text, kept = _lower(jax, jitted_fn, args)
    if kept is not None:                 # jit dropped unused arguments
        names = [names[k] for k in kept]
        values = [values[k] for k in kept]
    mlir, mesh, constants, count = _convert(text, mesh)
    if count != len(names):
        raise ExportError(f"the lowered function has {count} arguments for "
                          f"{len(names)} array leaves; jit with keep_unused=True")
    kept_set = None if kept is None else set(kept)

    def flatten(inputs: Sequence[Any]) -> list[Any]:
        flat = [v for _, v in
                jax.tree_util.tree_flatten_with_path(tuple(inputs))[0]]
        return [v for k, v in enumerate(flat)
                if kept_set is None or k in kept_set]
    return Program(mlir, mesh, "main", [n for n, _ in constants] + names,
                   [v for _, v in constants] + values, len(values),
                   flatten_inputs=flatten)


def from_stablehlo(text: str, *, mesh: Mesh | None = None) -> Program:
    """A StableHLO module (text, Shardy shardings, entry ``@main``) as a dist
    Program, read as :func:`export` reads what JAX lowers: what
    ``jax.jit(f).lower(...).as_text()`` or ``jax.export`` give. The
    Program's inputs have no values: ``.run(inputs=...)``."""
    mlir, mesh, constants, count = _convert(text, mesh)
    names = [n for n, _ in constants] + [f"args[{k}]" for k in range(count)]
    return Program(mlir, mesh, "main", names,
                   [v for _, v in constants] + [None] * count, count)


def _convert(text: str, mesh: Mesh | None
             ) -> tuple[str, Mesh, list[tuple[str, Any]], int]:
    """The dist module of a StableHLO module, its mesh, the large constants
    made (leading) arguments with their values, and the number of the
    function's own arguments."""
    module = _StableHlo(text)
    found = module.mesh()
    if found is None and mesh is None:
        raise ExportError(
            "the function has no sharding, so it names no mesh: pass "
            "mesh=dist_mlir.Mesh(...) (every layout is then dist's choice)")
    if found is not None and mesh is not None and found[0] != mesh:
        raise ExportError(f"mesh={mesh} differs from the function's mesh "
                          f"{found[0]}")
    mesh, parts = found if found is not None else (mesh, {})
    stablehlo = cumulative_sums_as_products(module.stripped())
    mlir = _to_dist(_to_linalg(stablehlo), mesh, parts, module)
    mlir, constants = hoist_constants(mlir, "main")
    return mlir, mesh, constants, len(module.arguments)


def _leaf_name(path: Sequence[Any]) -> str:
    """`args[0]['w1']`-style name of a flattened argument (what
    jax.tree_util.keystr writes, rooted at args)."""
    import jax

    return "args" + jax.tree_util.keystr(tuple(path))


def _lower(jax: Any, jitted_fn: Any,
           args: Sequence[Any]) -> tuple[str, list[int] | None]:
    """The StableHLO text of jitted_fn(*args), shardings in Shardy's form
    and JAX's source locations kept; and which flat arguments it kept when
    jit dropped unused ones (None: all)."""
    _hide_own_frames()
    shardy = jax.config.jax_use_shardy_partitioner
    try:
        jax.config.update("jax_use_shardy_partitioner", True)
        lowered = jitted_fn.lower(*args)
    finally:
        jax.config.update("jax_use_shardy_partitioner", shardy)
    module = lowered.compiler_ir("stablehlo")
    kept = None
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", {})
    if compile_args.get("kept_var_idx") is not None:
        kept = sorted(compile_args["kept_var_idx"])
    return module.operation.get_asm(enable_debug_info=True), kept


def _hide_own_frames() -> None:
    """JAX records the Python stack in each op's location, minus its own
    frames; the front door's are not the user's either."""
    try:
        from jax._src import source_info_util
    except ImportError:  # a JAX without it: longer locations, nothing worse
        return
    source_info_util.register_exclusion(os.path.dirname(__file__))


_AXIS_REF = re.compile(r'"([^"]+)"(?::\((\d+)\)(\d+))?')


class _Sharding:
    """One `#sdy.sharding<@mesh, [dims], replicated=..., unreduced=...>`
    (or a constraint's `<@mesh, [...]>`)."""

    def __init__(self, text: str, where: str) -> None:
        body = text[text.index("<") + 1:text.rindex(">")]
        m = re.match(r"\s*@([\w$.-]+)\s*,\s*", body)
        if not m:
            raise ExportError(f"{where}: a sharding without a mesh: {text}")
        self.mesh_name = m.group(1)
        rest = body[m.end():]
        end = balanced(rest, 0, "[", "]")
        self.dims: list[list[tuple[str, int, int] | tuple[str]]] = []
        self.open = False
        for dim in re.findall(r"\{([^}]*)\}", rest[1:end - 1]):
            if "?" in dim:
                self.open = True
            self.dims.append([_axis_ref(a) for a in _AXIS_REF.finditer(dim)])
        self.unreduced: list[tuple[str, int, int] | tuple[str]] = []
        u = re.search(r"unreduced\s*=\s*\{([^}]*)\}", rest[end:])
        if u:
            self.unreduced = [_axis_ref(a) for a in _AXIS_REF.finditer(u.group(1))]

    def refs(self) -> list[tuple[str, int, int] | tuple[str]]:
        return [r for dim in self.dims for r in dim] + self.unreduced

    def layout(self, parts: dict[str, list[tuple[str, int]]]) -> str:
        """The dist layout text, on the mesh with `parts` factored."""
        def names(ref: tuple[Any, ...]) -> list[str]:
            return _part_names(ref, parts)
        dims = ", ".join(
            "{" + ", ".join(f'"{n}"' for r in dim for n in names(r)) + "}"
            for dim in self.dims)
        text = f"[{dims}]"
        if self.unreduced:
            axes = ", ".join(f'"{n}"' for r in self.unreduced for n in names(r))
            text += f", partial = sum {{{axes}}}"
        return text


def _axis_ref(match: re.Match[str]) -> tuple[str, int, int] | tuple[str]:
    if match.group(2) is None:
        return (match.group(1),)
    return (match.group(1), int(match.group(2)), int(match.group(3)))


def _part_names(ref: tuple[Any, ...], parts: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The mesh axes (after factoring) that axis reference `ref` covers."""
    axis = ref[0]
    if axis not in parts:
        return [axis]
    if len(ref) == 1:
        return [name for name, _ in parts[axis]]
    pre, size = ref[1], ref[2]
    out, product = [], 1
    for name, factor in parts[axis]:
        if product >= pre and product * factor <= pre * size:
            out.append(name)
        product *= factor
    return out


class _StableHlo:
    """The lowered module's text and what its shardings say."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.meshes: dict[str, tuple[list[tuple[str, int]], list[int] | None]] = {}
        for m in re.finditer(r"^\s*sdy\.mesh @([\w$.-]+) = <(.*?)>\s*(?:loc\(.*\))?$",
                             text, re.M):
            axes = [(a, int(s)) for a, s in re.findall(r'"([^"]+)"=(\d+)', m.group(2))]
            ids = re.search(r"device_ids=\[([\d,\s]*)\]", m.group(2))
            devices = [int(d) for d in ids.group(1).split(",")] if ids else None
            self.meshes[m.group(1)] = (axes, devices)
        self._check_supported()
        self.arguments, self.results = self._signature_shardings()
        self.constraints = [
            _Sharding(m.group(1), "a sharding constraint")
            for m in re.finditer(r"sdy\.sharding_constraint %[\w#]+ (<@.*?\]>)", text)]

    def _check_supported(self) -> None:
        for op, why in (("sdy.manual_computation",
                         "a shard_map (dist partitions the global view: write "
                         "the function without shard_map)"),):
            i = self.text.find(op)
            if i >= 0:
                line = self.text[i:self.text.find("\n", i)]
                raise ExportError(f"the function contains {why}: {line[:200]}")

    def _main(self) -> tuple[int, int, int]:
        """Where @main's argument list starts and ends, and its body starts."""
        head = re.search(r"func\.func public @main\(", self.text)
        if not head:
            raise ExportError("the lowered module has no public @main")
        end = balanced(self.text, head.end() - 1, "(", ")")
        body = self.text.index("{\n", end)
        return head.end(), end - 1, body

    def _signature_shardings(self) -> tuple[list[_Sharding | None], list[_Sharding | None]]:
        start, end, body = self._main()
        args = [_attr_sharding(a, f"argument {k}") for k, a in
                enumerate(split_top_level(self.text[start:end]))]
        results_text = self.text[end + 1:body].strip()
        if results_text.startswith("->"):
            results_text = results_text[2:].strip()
        if results_text.startswith("(") and balanced(results_text, 0, "(", ")") == len(results_text):
            results_text = results_text[1:-1]
        results = [_attr_sharding(r, f"result {k}") for k, r in
                   enumerate(split_top_level(results_text))]
        return args, results

    def shardings(self) -> list[_Sharding]:
        return [s for s in self.arguments + self.results + self.constraints if s]

    def mesh(self) -> tuple[Mesh, dict[str, list[tuple[str, int]]]] | None:
        """The one mesh the shardings use, with its axes factored where a
        sub-axis needs it (axis -> [(part name, size), ...]), or None."""
        used = {s.mesh_name for s in self.shardings()}
        used = {n for n in used if self.meshes.get(n, ([], None))[0]}
        if not used:
            return None
        if len(used) > 1:
            raise ExportError(f"the shardings use several meshes ({sorted(used)}); "
                              "dist reads a function on one mesh")
        name = used.pop()
        if name not in self.meshes:
            raise ExportError(f"a sharding names mesh @{name}, which the module "
                              "does not define")
        axes, devices = self.meshes[name]
        sizes = dict(axes)
        cuts: dict[str, set[int]] = {}
        for sharding in self.shardings():
            for ref in sharding.refs():
                if ref[0] not in sizes:
                    raise ExportError(f"a sharding uses axis {ref[0]!r}, which "
                                      f"mesh @{name} does not have")
                if len(ref) == 3:
                    cuts.setdefault(ref[0], set()).update({ref[1], ref[1] * ref[2]})
        parts: dict[str, list[tuple[str, int]]] = {}
        mesh_axes: list[tuple[str, int]] = []
        for axis, size in axes:
            points = sorted(cuts.get(axis, set()) | {1, size})
            if len(points) <= 2:
                mesh_axes.append((axis, size))
                continue
            parts[axis] = [(f"{axis}.{i}", points[i + 1] // points[i])
                           for i in range(len(points) - 1)]
            mesh_axes.extend(parts[axis])
        return Mesh(mesh_axes, devices=devices), parts

    def stripped(self) -> str:
        """The module without Shardy: meshes and signature shardings dropped,
        each constraint an optimization barrier (IREE keeps those)."""
        text = re.sub(r"^\s*sdy\.mesh @.*\n", "", self.text, flags=re.M)
        text = re.sub(r"sdy\.sharding_constraint (%[\w#]+) <@.*?\]> :",
                      r"stablehlo.optimization_barrier \1 :", text)
        out, i = [], 0
        while True:
            j = text.find("sdy.sharding = #sdy.sharding<", i)
            if j < 0:
                break
            k = balanced(text, text.index("<", j))
            # the attribute and the separator next to it
            before = text[:j].rstrip()
            if before.endswith(","):
                out.append(text[i:len(before) - 1])
            else:
                out.append(text[i:j])
                if text[k:k + 2] == ", ":
                    k += 2
            i = k
        out.append(text[i:])
        text = "".join(out)
        text = re.sub(r"\s*\{\s*\}", "", text)
        leftover = re.search(r"\bsdy\.[\w.]+", text)
        if leftover:
            raise ExportError(f"the function contains {leftover.group(0)}, which "
                              "the front door does not read")
        return text


def _attr_sharding(text: str, where: str) -> _Sharding | None:
    i = text.find("sdy.sharding = #sdy.sharding<")
    if i < 0:
        return None
    start = text.index("<", i)
    return _Sharding(text[start - len("#sdy.sharding"):balanced(text, start)], where)


def _iree_compile() -> str:
    from iree.compiler.tools.binaries import find_tool

    return find_tool("iree-compile")


def _to_linalg(stablehlo: str) -> str:
    """IREE's input conversion of the StableHLO module: linalg on tensors,
    scf, arith, math and tensor, in util.func's."""
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "input.mlir")
        with open(source, "w", encoding="utf-8") as file:
            file.write(stablehlo)
        done = subprocess.run(
            [_iree_compile(), "--compile-to=input", "--iree-input-type=stablehlo",
             "--mlir-print-debuginfo", source],
            capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ExportError("IREE's StableHLO input conversion failed:\n" +
                          done.stderr.strip())
    return done.stdout


def _to_dist(text: str, mesh: Mesh, parts: dict[str, list[tuple[str, int]]],
             module: _StableHlo) -> str:
    """IREE's output as a dist global-view module: func.func, the mesh, the
    layouts on the signature and at the constraints, dist.auto."""
    text = re.sub(r"\butil\.func (public|private) @", lambda m: (
        "func.func @" if m.group(1) == "public" else "func.func private @"), text)
    text = re.sub(r"\butil\.return\b", "return", text)
    text = re.sub(r"\butil\.call\b", "call", text)
    constraints = iter(module.constraints)

    def constraint(m: re.Match[str]) -> str:
        sharding = next(constraints, None)
        if sharding is None:
            raise ExportError("IREE made more optimization barriers than the "
                              "function has sharding constraints")
        indent, result, value, type_ = m.groups()
        init = "%dist_init_" + result.lstrip("%").replace("#", "_")
        layout = f"#dist.sharding<@mesh, {sharding.layout(parts)}>"
        return (f"{indent}{init} = tensor.empty() : {type_}\n"
                f"{indent}{result} = linalg.copy {{dist.sharding = {layout}}} "
                f"ins({value} : {type_}) outs({init} : {type_}) -> {type_}")
    text = re.sub(r"^(\s*)(%[\w#]+) = util\.optimization_barrier (%[\w#]+) : "
                  r"(tensor<[^>]*>)", constraint, text, flags=re.M)
    if next(constraints, None) is not None:
        raise ExportError("IREE dropped a sharding constraint (fewer "
                          "optimization barriers than constraints)")
    foreign = foreign_op(text, r"util|flow|hal|stream|iree_\w+")
    if foreign:
        name, line, source = foreign
        raise ExportError(f"{source}IREE made {name}, which dist does not "
                          f"read: {line[:300]}")
    return _annotate(text, mesh, parts, module)


def _annotate(text: str, mesh: Mesh, parts: dict[str, list[tuple[str, int]]],
              module: _StableHlo) -> str:
    """@main with the mesh, its signature layouts and dist.auto."""
    def layout(sharding: _Sharding | None) -> str | None:
        return None if sharding is None or sharding.open else sharding.layout(parts)
    try:
        return annotate_entry(text, "main", str(mesh),
                              [layout(s) for s in module.arguments],
                              [layout(s) for s in module.results])
    except ValueError as error:
        raise ExportError(f"IREE's output does not match the lowered "
                          f"function: {error}") from None

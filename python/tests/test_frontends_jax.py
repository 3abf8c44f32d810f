"""dist_mlir.frontends.jax (SPEC §7a): jitted JAX functions, their mesh and
layouts read from the lowered module's Shardy shardings, the body converted
by IREE's StableHLO input conversion, run on MPI ranks and compared with
JAX's own output.

Needs the frameworks' virtual environment (utils/setup-frontends.sh); lit
runs this file with its python (test/python/frontends-jax.test).
"""

from __future__ import annotations

import os

import pytest

# JAX's CPU backend as 4 devices, so that its meshes match the ranks'.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
jax = pytest.importorskip("jax")
pytest.importorskip("iree.compiler")
numpy = pytest.importorskip("numpy")

import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from dist_mlir import Layout, Mesh  # noqa: E402
from dist_mlir.frontends.jax import ExportError, export, from_stablehlo  # noqa: E402

RNG = numpy.random.default_rng(0)


def _mesh(shape, names):
    return jax.make_mesh(shape, names,
                         axis_types=(jax.sharding.AxisType.Auto,) * len(names))


def _put(mesh, shape, spec, scale=0.2, dtype=numpy.float32):
    value = (RNG.standard_normal(shape) * scale).astype(dtype)
    return jax.device_put(value, NamedSharding(mesh, spec))


def _close(got, want, tol=2e-5) -> None:
    want = numpy.asarray(want)
    scale = max(float(numpy.abs(want).max()), 1e-30)
    assert got.shape == want.shape
    assert float(numpy.abs(got - want).max()) / scale < tol


def test_mlp_with_a_constraint_on_dp_tp() -> None:
    mesh = _mesh((2, 2), ("dp", "tp"))

    def mlp(x, w1, w2):
        h = jax.nn.gelu(x @ w1)
        h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("dp", "tp")))
        return jax.nn.softmax(h @ w2, axis=-1)

    x = _put(mesh, (8, 16), P("dp", None), 1.0)
    w1 = _put(mesh, (16, 32), P(None, "tp"))
    w2 = _put(mesh, (32, 16), P("tp", None))
    fn = jax.jit(mlp, out_shardings=NamedSharding(mesh, P("dp", None)))
    program = export(fn, x, w1, w2)
    dist_mesh = Mesh({"dp": 2, "tp": 2})
    assert program.mesh == dist_mesh
    assert program.names == ["args[0]", "args[1]", "args[2]"]
    layouts = program.layouts
    assert layouts["args[0]"] == Layout(dist_mesh, '[{"dp"}, {}]')
    assert layouts["args[1]"] == Layout(dist_mesh, '[{}, {"tp"}]')
    assert layouts["args[2]"] == Layout(dist_mesh, '[{"tp"}, {}]')
    assert layouts["result[0]"] == Layout(dist_mesh, '[{"dp"}, {}]')
    # The constraint: a copy with the layout, binding there.
    assert ('linalg.copy {dist.sharding = #dist.sharding<@mesh, '
            '[{"dp"}, {"tp"}]>}') in program.mlir
    [y] = program.run()
    _close(y, fn(x, w1, w2))
    # Other inputs, as the same positional arguments.
    x2 = _put(mesh, (8, 16), P("dp", None), 1.0)
    [y2] = program.run(inputs=(x2, w1, w2))
    _close(y2, fn(x2, w1, w2))


B, S, D, H, F, L, V = 2, 16, 32, 4, 64, 3, 50


def _decoder(x, p):
    def rms(v, w):
        return v * jax.lax.rsqrt(jnp.mean(v * v, -1, keepdims=True) + 1e-6) * w

    h = rms(x, p["n1"])
    q, k, v = (
        (h @ p[w]).reshape(B, S, H, D // H) for w in ("wq", "wk", "wv"))
    s = jnp.einsum("bshd,bthd->bhst", q, k) / numpy.sqrt(D // H)
    s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, -1e9)
    a = jnp.einsum("bhst,bthd->bshd", jax.nn.softmax(s, -1), v).reshape(B, S, D)
    x = x + a @ p["wo"]
    h = rms(x, p["n2"])
    return x + (jax.nn.silu(h @ p["wg"]) * (h @ p["wu"])) @ p["wd"]


def _language_model(ids, emb, params):
    x = emb[ids]
    x, _ = jax.lax.scan(lambda c, p: (_decoder(c, p), None), x, params)
    return x @ emb.T


def _params(mesh, tp):
    col, row = P(None, None, tp), P(None, tp, None)
    shapes = {"n1": ((L, D), P()), "n2": ((L, D), P()),
              "wq": ((L, D, D), col), "wk": ((L, D, D), col),
              "wv": ((L, D, D), col), "wo": ((L, D, D), row),
              "wg": ((L, D, F), col), "wu": ((L, D, F), col),
              "wd": ((L, F, D), row)}
    return {name: _put(mesh, shape, spec) for name, (shape, spec) in shapes.items()}


@pytest.mark.parametrize("shape,names,batch", [
    ((2, 2), ("dp", "tp"), "dp"),
    ((4,), ("tp",), None),
])
def test_language_model_scan_over_layers(shape, names, batch) -> None:
    # An embedding lookup (a gather), three decoder layers under lax.scan
    # (an scf.for over the stacked weights), a causal mask, tied lm_head.
    mesh = _mesh(shape, names)
    ids = jax.device_put(RNG.integers(0, V, (B, S)).astype(numpy.int32),
                         NamedSharding(mesh, P(batch, None)))
    emb = _put(mesh, (V, D), P())
    params = _params(mesh, "tp")
    fn = jax.jit(_language_model)
    program = export(fn, ids, emb, params)
    assert program.names[:3] == ["args[0]", "args[1]", "args[2]['n1']"]
    assert "scf.for" in program.mlir
    layouts = program.layouts
    assert str(layouts["args[2]['wq']"]) == '[{}, {}, {"tp"}]'
    assert str(layouts["args[2]['wo']"]) == '[{}, {"tp"}, {}]'
    [y] = program.run()
    _close(y, fn(ids, emb, params))


def test_gather_from_a_vocabulary_split_table() -> None:
    """`table[ids]` (a stablehlo.gather, clamped by IREE) from a 32000 x 256
    table split by rows is looked up vocabulary-parallel: each rank finds the
    ids in its rows and the partial sums are reduced; the table never
    moves."""
    mesh = _mesh((4,), ("tp",))
    table = _put(mesh, (32000, 256), P("tp", None), 1.0)
    ids = jax.device_put(RNG.integers(0, 32000, (2, 8)).astype(numpy.int32),
                         NamedSharding(mesh, P()))
    fn = jax.jit(lambda t, i: t[i])
    program = export(fn, table, ids)
    partitioned = program._partition()
    assert "dist.reshard %arg0 " not in partitioned
    assert 'partial = sum {"tp"}' in partitioned
    got = program.run()[0]
    assert numpy.array_equal(got, numpy.asarray(fn(table, ids)))


def test_no_sharding_takes_a_mesh_and_chooses_everything() -> None:
    def f(a, b):
        return jnp.tanh(a @ b).sum(0)

    a = RNG.standard_normal((16, 8)).astype(numpy.float32)
    b = RNG.standard_normal((8, 12)).astype(numpy.float32)
    with pytest.raises(ExportError, match="names no mesh: pass mesh="):
        export(jax.jit(f), a, b)
    program = export(jax.jit(f), a, b, mesh=Mesh({"x": 4}))
    [signature] = [line for line in program.mlir.splitlines() if "@main(" in line]
    assert "dist.sharding" not in signature and "dist.auto = @mesh" in signature
    [y] = program.run()
    _close(y, f(a, b))


def test_pytrees_unused_arguments_and_shape_only_export() -> None:
    mesh = _mesh((4,), ("x",))
    spec = jax.ShapeDtypeStruct((8, 4), jnp.float32,
                                sharding=NamedSharding(mesh, P("x")))

    def f(params, unused, k):
        return params["a"] * k + params["b"]

    program = export(jax.jit(f), {"a": spec, "b": spec}, spec,
                     jax.ShapeDtypeStruct((), jnp.float32))
    # jit drops the unused argument; the scalar is a 0-d tensor.
    assert program.names == ["args[0]['a']", "args[0]['b']", "args[2]"]
    with pytest.raises(ValueError, match="no values"):
        program.run()
    a = numpy.arange(32, dtype=numpy.float32).reshape(8, 4)
    [y] = program.run(inputs=({"a": a, "b": a}, a, numpy.float32(2)))
    numpy.testing.assert_array_equal(y, 3 * a)


SUB_AXES = """
module @sub_axes {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(
      %a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>},
      %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>})
      -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {?}]>}) {
    %0 = stablehlo.add %a, %b : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {"x":(2)2}]> : tensor<8x8xf32>
    %2 = stablehlo.multiply %1, %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}
"""


def test_shardy_sub_axes_unreduced_and_open_dims() -> None:
    # A sub-axis factors its mesh axis ("x"=4 -> "x.0"=2, "x.1"=2, the same
    # devices in the same order); unreduced axes are partial sums; a sharding
    # with an open dim ("?") leaves the tensor to dist.
    program = from_stablehlo(SUB_AXES)
    assert str(program.mesh) == '<["x.0"=2, "x.1"=2, "y"=2]>'
    mlir = program.mlir
    assert '#dist.sharding<@mesh, [{"x.0"}, {"x.1"}]>' in mlir
    assert ('#dist.sharding<@mesh, [{}, {"y"}], partial = sum '
            '{"x.0", "x.1"}>') in mlir
    assert '{dist.sharding = #dist.sharding<@mesh, [{"y"}, {"x.1"}]>}' in mlir
    layouts = program.layouts
    assert str(layouts["args[0]"]) == '[{"x.0"}, {"x.1"}]'
    a = RNG.standard_normal((8, 8)).astype(numpy.float32)
    b = RNG.standard_normal((8, 8)).astype(numpy.float32)
    # A partial-sum argument: each device holds a part; dist-run gives the
    # whole value to one device of each group.
    [y] = program.run(inputs=(a, b))
    _close(y, (a + b) ** 2)


def test_cumulative_sums_on_dp_tp() -> None:
    """jnp.cumsum (a reduce_window over the whole axis, which IREE would make
    an iree_linalg_ext.scan) forwards, reversed, and on integers (position
    ids from an attention mask, as language models build them), on inputs
    split over both mesh axes: products with a triangular matrix, split like
    any other product, equal to JAX's."""
    mesh = _mesh((2, 2), ("dp", "tp"))

    def sums(x, mask):
        positions = jnp.cumsum(mask, axis=1) - 1
        forward = jnp.cumsum(x, axis=1)
        backward = jax.lax.cumsum(x, axis=0, reverse=True)
        return forward * 2 + backward, positions

    x = _put(mesh, (8, 12), P("dp", "tp"), 1.0)
    mask = jax.device_put((RNG.random((4, 10)) < 0.8).astype(numpy.int32),
                          NamedSharding(mesh, P("dp", None)))
    fn = jax.jit(sums)
    program = export(fn, x, mask)
    assert "iree_linalg_ext" not in program.mlir
    got_sums, got_positions = program.run()
    want_sums, want_positions = fn(x, mask)
    _close(got_sums, want_sums, tol=1e-5)
    assert numpy.array_equal(got_positions, numpy.asarray(want_positions))
    # A cumulative max stays refused, at its line.
    with pytest.raises(ExportError, match=r"test_frontends_jax\.py:\d+: IREE made"):
        export(jax.jit(lambda a: jax.lax.cummax(a, axis=1)), x)


def test_refusals_are_located() -> None:
    mesh = _mesh((4,), ("x",))
    x = jax.ShapeDtypeStruct((8, 16), jnp.float32,
                             sharding=NamedSharding(mesh, P("x")))

    def sort_rows(a):
        return jnp.sort(a, axis=1)

    with pytest.raises(ExportError,
                       match=r"test_frontends_jax\.py:\d+: IREE made "
                             r"iree_linalg_ext\.sort, which dist does not read"):
        export(jax.jit(sort_rows), x)

    def manual(a):
        return jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"),
                             out_specs=P("x"))(a)

    with pytest.raises(ExportError, match="shard_map"):
        export(jax.jit(manual), x)

    # What dist-partition refuses (a while loop whose trip count is data)
    # is reported at the line of the JAX function, with the source shown.
    from dist_mlir import CompileError

    def doubling(a):
        return jax.lax.while_loop(lambda c: c.sum() < 1000.0, lambda c: c * 2, a)

    program = export(jax.jit(doubling), x)
    with pytest.raises(CompileError, match=r"test_frontends_jax\.py:\d+:\d+: error: "
                                           r"'scf\.while' op cannot be partitioned"):
        program.layouts


def test_large_constants_become_arguments() -> None:
    # A closed-over array of 256 KiB becomes a (free) argument named
    # const[0] with its value; a small one stays a replicated constant.
    mesh = _mesh((4,), ("x",))
    x = _put(mesh, (8, 256), P("x", None), 1.0)
    big = RNG.standard_normal((256, 256)).astype(numpy.float32)
    small = numpy.arange(256, dtype=numpy.float32)
    fn = jax.jit(lambda a: a @ big + small)
    program = export(fn, x)
    assert program.names == ["const[0]", "args[0]"]
    assert "%dist_const0: tensor<256x256xf32>" in program.mlir
    assert program.mlir.count("arith.constant dense<") == 1   # the small one
    [y] = program.run()
    _close(y, fn(x))
    [y2] = program.run(inputs=(2 * x,))
    _close(y2, fn(2 * x))

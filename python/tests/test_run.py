"""run() wraps dist-run (semantics §5): per-rank results as NumPy arrays."""

from __future__ import annotations

import shutil

import pytest

import dist_mlir
from dist_mlir import RunError

numpy = pytest.importorskip("numpy")


def _have_dist_run() -> bool:
    try:
        dist_mlir._tools.find_tool("dist-run")
    except FileNotFoundError:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not _have_dist_run(), reason="dist-run is not built (tools/dist-run)")

# 2 ranks: rank r holds rows [2r, 2r+2) of a 4x3 iota; gather them all.
GATHER = """
dist.mesh @m = <["x"=2]>
func.func @gather(%a: tensor<4x3xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<4x3xf32, #dist.sharding<@m, [{}, {}]>> {
  %b = dist.reshard %a : tensor<4x3xf32, #dist.sharding<@m, [{"x"}, {}]>>
      -> tensor<4x3xf32, #dist.sharding<@m, [{}, {}]>>
  return %b : tensor<4x3xf32, #dist.sharding<@m, [{}, {}]>>
}
"""


def test_gather_on_two_ranks(tmp_path) -> None:
    results = dist_mlir.run(GATHER, 2, timeout=120)
    assert len(results) == 1 and len(results[0]) == 2
    expected = numpy.arange(12, dtype=numpy.float32).reshape(4, 3)
    for rank in range(2):
        assert results[0][rank].dtype == numpy.float32
        numpy.testing.assert_array_equal(results[0][rank], expected)
    # A file path works too, and gives the same result.
    path = tmp_path / "gather.mlir"
    path.write_text(GATHER)
    again = dist_mlir.run(path, 2, entry="gather", timeout=120)
    numpy.testing.assert_array_equal(again[0][1], expected)


def test_reps_print_the_timing_line(capsys) -> None:
    dist_mlir.run(GATHER, 2, options=["--reps", "2"], timeout=120)
    out = capsys.readouterr().out
    assert out.startswith("dist-run: per call: median ") and "over 2 calls" in out


def test_failures_raise() -> None:
    with pytest.raises(RunError, match="nope") as info:
        dist_mlir.run(GATHER, 2, entry="nope", timeout=120)
    assert info.value.returncode != 0
    with pytest.raises(ValueError, match="np: expected a positive int"):
        dist_mlir.run(GATHER, 0)
    with pytest.raises(ValueError, match="inputs: expected"):
        dist_mlir.run(GATHER, 2, inputs="ones")
    with pytest.raises(ValueError, match="inputs: expected"):
        dist_mlir.run(GATHER, 2, inputs=42)
    with pytest.raises(FileNotFoundError):
        dist_mlir.run("/nonexistent/program.mlir", 2)


# 2 ranks: a row-split f32 argument and a partial-sum i8 argument, both
# gathered; the second result is the i8 value (its holder is x = 0).
TWO_ARGS = """
dist.mesh @m = <["x"=2]>
func.func @two(%a: tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>,
               %b: tensor<4xi8, #dist.sharding<@m, [{}], partial = sum {"x"}>>)
    -> (tensor<3x2xf32, #dist.sharding<@m, [{}, {}]>>,
        tensor<4xi8, #dist.sharding<@m, [{}]>>) {
  %ra = dist.reshard %a : tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>
      -> tensor<3x2xf32, #dist.sharding<@m, [{}, {}]>>
  %rb = dist.reshard %b
      : tensor<4xi8, #dist.sharding<@m, [{}], partial = sum {"x"}>>
      -> tensor<4xi8, #dist.sharding<@m, [{}]>>
  return %ra, %rb : tensor<3x2xf32, #dist.sharding<@m, [{}, {}]>>,
                    tensor<4xi8, #dist.sharding<@m, [{}]>>
}
"""


def test_array_inputs() -> None:
    # float64 in Fortran order (run() saves it in C order; dist-run rounds
    # it to f32) and int64 past the i8 range (dist-run wraps it).
    a = numpy.asfortranarray(numpy.linspace(-1.0, 1.0, 6).reshape(3, 2))
    b = numpy.array([1, -2, 130, -129])
    results = dist_mlir.run(TWO_ARGS, 2, inputs=[a, b], timeout=120)
    for rank in range(2):
        numpy.testing.assert_array_equal(results[0][rank],
                                         a.astype(numpy.float32))
        assert results[1][rank].dtype == numpy.int8
        assert results[1][rank].tolist() == [1, -2, -126, 127]
    # A tuple and big-endian arrays work too.
    again = dist_mlir.run(TWO_ARGS, 2, inputs=(a.astype(">f4"), b.astype(">i2")),
                          timeout=120)
    numpy.testing.assert_array_equal(again[0][0], a.astype(numpy.float32))
    assert again[1][1].tolist() == [1, -2, -126, 127]


SCALAR_ARG = """
dist.mesh @m = <["x"=2]>
func.func @scale(%a: tensor<4xf32, #dist.sharding<@m, [{"x"}]>>,
                 %s: tensor<f32, #dist.sharding<@m, []>>)
    -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>,
                                        affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%a, %s : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>, tensor<f32, #dist.sharding<@m, []>>)
      outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  return %r : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}
"""


def test_scalar_input() -> None:
    # A 0-d array stays 0-d (a JAX scalar argument is a tensor<f32>).
    results = dist_mlir.run(SCALAR_ARG, 2,
                            inputs=[numpy.arange(4.0), numpy.float32(3)], timeout=120)
    numpy.testing.assert_array_equal(results[0][0], [0.0, 3.0])
    numpy.testing.assert_array_equal(results[0][1], [6.0, 9.0])


def test_array_input_errors() -> None:
    a = numpy.zeros((3, 2))
    b = numpy.zeros(4, dtype=numpy.int64)
    with pytest.raises(RunError, match=r"arg0\.npy' \(argument #0\): shape "
                       r"\(2, 3\), expected \(3, 2\)") as info:
        dist_mlir.run(TWO_ARGS, 2, inputs=[a.T, b], timeout=120)
    assert info.value.returncode == 1
    with pytest.raises(RunError, match=r"float dtype '<f8' cannot feed an i8 "
                       r"argument"):
        dist_mlir.run(TWO_ARGS, 2, inputs=[a, b.astype(float)], timeout=120)
    with pytest.raises(RunError, match=r"cannot read '.*arg1\.npy' "
                       r"\(argument #1\): No such file"):
        dist_mlir.run(TWO_ARGS, 2, inputs=[a], timeout=120)
    with pytest.raises(ValueError, match=r"inputs\[1\]: dtype complex128"):
        dist_mlir.run(TWO_ARGS, 2, inputs=[a, b.astype(complex)])
    with pytest.raises(ValueError, match=r"inputs\[0\]: expected an array"):
        dist_mlir.run(TWO_ARGS, 2, inputs=["iota"])


def test_partitioned_compute_on_four_ranks() -> None:
    # The global-view Megatron MLP of examples/: run() partitions its
    # compute (dist-run's pipeline starts with dist-partition) and every
    # rank's shard of the result equals NumPy's on the global arrays.
    from conftest import EXAMPLES

    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((16, 24)).astype(numpy.float32)
    w1 = rng.standard_normal((24, 96)).astype(numpy.float32)
    w2 = rng.standard_normal((96, 24)).astype(numpy.float32)
    results = dist_mlir.run(EXAMPLES / "megatron_mlp.mlir", 4,
                            inputs=[x, w1, w2], timeout=300)
    y = numpy.maximum(x.astype(numpy.float64) @ w1, 0) @ w2
    for rank in range(4):
        numpy.testing.assert_allclose(results[0][rank], y[4 * rank:4 * rank + 4],
                                      rtol=1e-4, atol=1e-4 * numpy.abs(y).max())


# A pipeline hand-off: rows over ranks 0-1 to columns over ranks 2-3.
HANDOFF = """
dist.mesh @s0 = <["x"=2], devices = [0, 1]>
dist.mesh @s1 = <["y"=2], devices = [2, 3]>
func.func @handoff(%a: tensor<4x6xf32, #dist.sharding<@s0, [{"x"}, {}]>>)
    -> tensor<4x6xf32, #dist.sharding<@s1, [{}, {"y"}]>> {
  %b = dist.reshard %a : tensor<4x6xf32, #dist.sharding<@s0, [{"x"}, {}]>>
      -> tensor<4x6xf32, #dist.sharding<@s1, [{}, {"y"}]>>
  return %b : tensor<4x6xf32, #dist.sharding<@s1, [{}, {"y"}]>>
}
"""


def test_cross_mesh_handoff() -> None:
    """Ranks outside the result's mesh give None; the others their block."""
    results = dist_mlir.run(HANDOFF, 4, timeout=120)
    whole = numpy.arange(24, dtype=numpy.float32).reshape(4, 6)
    assert results[0][0] is None and results[0][1] is None
    numpy.testing.assert_array_equal(results[0][2], whole[:, :3])
    numpy.testing.assert_array_equal(results[0][3], whole[:, 3:])
    with pytest.raises(RunError, match="--np 3 is too small: mesh @s1 names rank 3"):
        dist_mlir.run(HANDOFF, 3, timeout=120)


# Two stages, one rank each: x (its batch marked) times w on rank 0, the
# result handed to rank 1 and doubled there.
STAGES = """
dist.mesh @s0 = <["x"=1], devices = [0]>
dist.mesh @s1 = <["x"=1], devices = [1]>
func.func @stages(%x: tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>> {dist.batch_dim = 0 : i64},
                  %w: tensor<4x4xf32, #dist.sharding<@s0, [{}, {}]>>)
    -> tensor<8x4xf32, #dist.sharding<@s1, [{}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>>
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>>, tensor<4x4xf32, #dist.sharding<@s0, [{}, {}]>>)
                     outs(%f : tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>>
  %s = dist.reshard %h : tensor<8x4xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<8x4xf32, #dist.sharding<@s1, [{}, {}]>>
  %y = arith.addf %s, %s : tensor<8x4xf32, #dist.sharding<@s1, [{}, {}]>>
  return %y : tensor<8x4xf32, #dist.sharding<@s1, [{}, {}]>>
}
"""


def test_microbatches() -> None:
    """The pipelined program gives the unpipelined one's result."""
    x = numpy.arange(32, dtype=numpy.float32).reshape(8, 4)
    w = numpy.arange(16, dtype=numpy.float32).reshape(4, 4) / 8
    for m in (1, 2, 4):
        results = dist_mlir.run(STAGES, 2, inputs=[x, w], microbatches=m, timeout=120)
        assert results[0][0] is None
        numpy.testing.assert_allclose(results[0][1], 2 * (x @ w), rtol=1e-6)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="microbatches: expected a positive int"):
            dist_mlir.run(STAGES, 2, microbatches=bad)
    with pytest.raises(RunError, match="microbatches=3 does not divide the batch extent 8"):
        dist_mlir.run(STAGES, 2, microbatches=3, timeout=120)

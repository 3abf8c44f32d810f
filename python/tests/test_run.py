"""run() wraps dist-run (SPEC §5): per-rank results as NumPy arrays."""

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


def test_failures_raise() -> None:
    with pytest.raises(RunError, match="nope") as info:
        dist_mlir.run(GATHER, 2, entry="nope", timeout=120)
    assert info.value.returncode != 0
    with pytest.raises(ValueError, match="np: expected a positive int"):
        dist_mlir.run(GATHER, 0)
    with pytest.raises(ValueError, match="inputs: expected"):
        dist_mlir.run(GATHER, 2, inputs="ones")
    with pytest.raises(FileNotFoundError):
        dist_mlir.run("/nonexistent/program.mlir", 2)

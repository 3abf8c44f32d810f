"""compile() runs dist passes in-process, exactly like dist-opt."""

from __future__ import annotations

import pytest

import dist_mlir
from dist_mlir import CompileWarning
from conftest import EXAMPLES, requires_mlir, run_tool

pytestmark = requires_mlir

PARTIAL_TO_SHARDED = """
dist.mesh @mesh = <["x"=4, "y"=2]>
func.func @partial_to_sharded(
    %a: tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}], partial = sum {"x", "y"}>>)
    -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>> {
  %b = dist.reshard %a
      : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}], partial = sum {"x", "y"}>>
     -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>>
}
"""

PROGRAMS = ["transpose_2d.mlir", "tp_sp_block.mlir", "gradient_sync.mlir",
            "tp_sp_roundtrip.mlir"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_lower_reshard_matches_dist_opt(name: str) -> None:
    path = EXAMPLES / name
    lowered = dist_mlir.compile(path.read_text())
    assert "dist.reshard" not in lowered
    reference = run_tool("dist-opt", str(path), "--dist-lower-reshard")
    assert reference.returncode == 0, reference.stderr
    assert lowered == reference.stdout


def test_pipeline_options_and_anchors_match_dist_opt(tmp_path) -> None:
    # Partial sums over both axes of a 4x2 mesh to columns: greedy reduces
    # everything at once, optimal reduce-scatters first
    # (test/Dialect/Dist/lower-reshard-strategy.mlir).
    path = tmp_path / "partial.mlir"
    path.write_text(PARTIAL_TO_SHARDED)
    pipeline = "dist-lower-reshard{strategy=greedy}"
    reference = run_tool("dist-opt", str(path),
                         f"--pass-pipeline=builtin.module({pipeline})")
    assert reference.returncode == 0, reference.stderr
    assert "dist.all_reduce %arg0 axes = [\"x\", \"y\"]" in reference.stdout
    assert dist_mlir.compile(path, pipeline) == reference.stdout
    assert dist_mlir.compile(path, f"builtin.module({pipeline})") == \
        reference.stdout
    assert dist_mlir.compile(path, "canonicalize," + pipeline + ",cse") == \
        run_tool("dist-opt", str(path), "--canonicalize",
                 "--dist-lower-reshard=strategy=greedy", "--cse").stdout
    assert "dist.reduce_scatter" in dist_mlir.compile(path)


def test_paths_and_text_agree() -> None:
    path = EXAMPLES / "transpose_2d.mlir"
    assert dist_mlir.compile(path) == dist_mlir.compile(str(path)) == \
        dist_mlir.compile(path.read_text())


def test_empty_pipeline_round_trips() -> None:
    text = 'dist.mesh @m = <["x"=2]>'
    printed = dist_mlir.compile(text, "")
    # dist-opt's framing: the module, then an empty line.
    assert printed == 'module {\n  dist.mesh @m = <["x"=2]>\n}\n\n'
    assert dist_mlir.compile(printed, "") == printed


def test_partitions_compute_by_default() -> None:
    # The global-view Megatron MLP: compute between the sharded arguments is
    # partitioned, then every reshard planned, as dist-opt does it.
    path = EXAMPLES / "megatron_mlp.mlir"
    lowered = dist_mlir.compile(path)
    assert "dist.reshard" not in lowered
    assert lowered.count("dist.all_gather") == 1
    assert lowered.count("dist.reduce_scatter") == 1
    reference = run_tool("dist-opt", str(path), "--dist-partition",
                         "--dist-lower-reshard")
    assert reference.returncode == 0, reference.stderr
    assert lowered == reference.stdout


def test_lowers_to_llvm() -> None:
    llvm = dist_mlir.compile(EXAMPLES / "transpose_2d.mlir", "dist-to-llvm")
    assert "llvm.func @transpose" in llvm
    assert "dist." not in llvm.replace("llvm.func @distRt", "")


def test_remarks_become_warnings() -> None:
    with pytest.warns(CompileWarning, match="remark: planned") as record:
        dist_mlir.compile(EXAMPLES / "transpose_2d.mlir",
                          "dist-lower-reshard{remarks=true}")
    located = [str(w.message) for w in record if "planned" in str(w.message)]
    assert located[0].startswith(str(EXAMPLES / "transpose_2d.mlir") + ":")


def test_plans_in_ir_match_plan() -> None:
    # The pass and plan() use the same planner: the collectives the pass
    # emits are the steps plan() returns.
    lowered = dist_mlir.compile(EXAMPLES / "transpose_2d.mlir")
    p = dist_mlir.plan(dist_mlir.Mesh({"x": 2, "y": 4}), (1024, 1024), "f32",
                       '[{"x"}, {"y"}]', '[{"y"}, {"x"}]')
    emitted = [line.split("=", 1)[1].split()[0] for line in lowered.splitlines()
               if line.strip().startswith("%") and "dist." in line]
    assert emitted == ["dist." + step.op for step in p]

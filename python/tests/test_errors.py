"""Bad input raises a Python exception naming the problem; nothing crashes."""

from __future__ import annotations

import sys

import pytest

import dist_mlir
from dist_mlir import (CompileError, Layout, Mesh, NoPlanError, Partial,
                       Replicate, Shard)
from conftest import requires_mlir, run_bounded


# -- meshes ---------------------------------------------------------------------

@pytest.mark.parametrize("axes, devices, message", [
    ({}, None, "at least one axis"),
    ({"x": 0}, None, 'mesh axis "x" has size 0'),
    ({"x": -2}, None, 'mesh axis "x" has size -2'),
    ({"": 2}, None, "names must not be empty"),
    ([("x", 2), ("x", 2)], None, 'mesh axis "x" appears more than once'),
    ({f"a{i}": 1 for i in range(9)}, None, "at most 8 axes"),
    ({"x": 2**20, "y": 2**20}, None, "more than 2\\^31 devices"),
    ({"x": 2, "y": 2}, [0, 1, 2], "has 3 entries but the mesh has 4"),
    ({"x": 2, "y": 2}, [0, 1, 1, 2], "appears more than once"),
    ({"x": 2}, [0, -7], "not a rank in 0..2\\^31-1"),
    ({"x": 2}, [], "devices list is empty"),
    ({"x": 2**64}, None, "does not fit in 64 bits"),
])
def test_bad_mesh(axes, devices, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Mesh(axes, devices=devices)


@pytest.mark.parametrize("text, message", [
    ('<["x"=2', "expected"),
    ('<["x"=two]>', "expected"),
    ("<>", "expected"),
    ('<["x"=2], devices = []>', "devices list is empty"),
])
def test_bad_mesh_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Mesh.from_text(text)


def test_mesh_types() -> None:
    with pytest.raises(TypeError, match="Mesh.from_text"):
        Mesh('<["x"=2]>')
    with pytest.raises(TypeError, match="must be an int"):
        Mesh({"x": 2.0})
    with pytest.raises(TypeError, match="must be an int"):
        Mesh({"x": True})
    with pytest.raises(TypeError, match="names must be str"):
        Mesh({1: 2})


def test_bad_topology(tmp_path) -> None:
    with pytest.raises(ValueError, match='"z"'):
        Mesh({"x": 2}, topology={"axes": {"z": {"alpha": 1e-5}}})
    with pytest.raises(ValueError, match="alph"):
        Mesh({"x": 2}, topology={"axes": {"x": {"alph": 1e-5}}})
    with pytest.raises(ValueError):
        Mesh({"x": 2}, topology={"axes": {"x": {"beta": -1.0}}})
    with pytest.raises(ValueError, match="cannot read"):
        Mesh({"x": 2}, topology=tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"axes": ')
    with pytest.raises(ValueError):
        Mesh({"x": 2}, topology=broken)
    with pytest.raises(TypeError, match="topology must be"):
        Mesh({"x": 2}, topology=42)


def test_deeply_nested_topology(tmp_path) -> None:
    # 60k levels of nesting overflowed the JSON parser's stack and
    # killed the interpreter. Run in a child bounded in memory and time, so
    # that a regression fails this test only.
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 60000 + "]" * 60000)
    code = (
        "import sys\n"
        "from dist_mlir import Mesh\n"
        "try:\n"
        f"    Mesh({{'x': 2}}, topology={str(deep)!r})\n"
        "except ValueError as e:\n"
        "    print('ValueError:', e)\n"
    )
    result = run_bounded([sys.executable, "-c", code], seconds=60,
                         mebibytes=2048)
    assert result.returncode == 0, result.stderr
    assert "nested more than 64 levels deep" in result.stdout


def test_bad_coordinates(mesh24: Mesh) -> None:
    with pytest.raises(ValueError, match="not a coordinate"):
        mesh24.rank_of((2, 0))
    with pytest.raises(ValueError, match="not a coordinate"):
        mesh24.rank_of((0,))
    with pytest.raises(ValueError, match="rank 8 is not a device"):
        mesh24.coordinate_of(8)
    with pytest.raises(ValueError, match="'z' is not an axis"):
        mesh24.size("z")
    with pytest.raises(ValueError, match="axis position 2 is out of range"):
        mesh24.size(2)


# -- layouts --------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('[{"z"}]', '"z" is not an axis of mesh'),
    ('[{"x"}, {"x"}]', 'mesh axis "x" appears more than once'),
    ('[{"x"}], partial = sum {"x"}', "appears more than once"),
    ('[{}], partial = mean {"x"}', "unknown reduction kind 'mean'"),
    ("[{}], partial = sum {}", "needs at least one axis"),
    ('[{"x"}', "expected"),
    ('{"x"}', "expected"),
    ('[{"x"}] trailing', "expected"),
    ("", "expected"),
])
def test_bad_layout_text(mesh24: Mesh, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Layout(mesh24, text)


@pytest.mark.parametrize("placements, ndim, message", [
    ([Shard(0)], 1, r"one placement per mesh axis \(2: x, y\), got 1"),
    ([Shard(2), Replicate()], 2, "Shard\\(dim=2\\) is out of range"),
    ([Shard(-3), Replicate()], 2, "out of range for a tensor of rank 2"),
    ([Partial("sum"), Partial("max")], 1, "share one reduction"),
    ([Shard(0, order=0), Shard(0)], 1, "give order= on every Shard"),
    ([Shard(0, order=0), Shard(0, order=0)], 1, "must be 0..1, each once"),
    ([Shard(0, order=1), Shard(1, order=0)], 2, "must be 0..0"),
])
def test_bad_placements(mesh24: Mesh, placements, ndim: int,
                        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Layout.from_placements(mesh24, placements, ndim)


def test_placement_types(mesh24: Mesh) -> None:
    with pytest.raises(ValueError, match="reduce_op 'mean'"):
        Partial("mean")
    with pytest.raises(TypeError, match="Shard dim must be an int"):
        Shard(True)
    with pytest.raises(ValueError, match="order must be >= 0"):
        Shard(0, order=-1)
    with pytest.raises(TypeError, match="expected Shard, Replicate or Partial"):
        Layout.from_placements(mesh24, ["S(0)", Replicate()], 1)
    with pytest.raises(TypeError, match="Layout.from_placements"):
        Layout(mesh24, [Shard(0), Replicate()])


# -- plan() ---------------------------------------------------------------------

def _plan(mesh: Mesh, **overrides):
    args = dict(shape=(64, 64), dtype="f32", src='[{"x"}, {}]',
                dst="[{}, {}]")
    args.update(overrides)
    return dist_mlir.plan(mesh, **args)


@pytest.mark.parametrize("overrides, message", [
    ({"src": '[{"x"}]'}, "src: layout has 1 dims but the tensor has rank 2"),
    ({"dst": [Shard(2), Replicate()]}, "dst: mesh axis 'x': Shard"),
    ({"dst": '[{"q"}, {}]'}, 'dst: .*"q" is not an axis'),
    ({"shape": (64, -1)}, "shape: extents must be non-negative"),
    ({"dtype": "f8"}, "dtype: 'f8' is not one of"),
    ({"strategy": "fastest"}, "strategy: 'fastest' is not one of optimal, greedy"),
    ({"alpha": {"z": 1e-5}}, "alpha: 'z' is not an axis"),
    ({"beta": -1.0}, "beta"),
    ({"alpha": float("nan")}, "alpha"),
    ({"max_peak_bytes": -5}, "max_peak_bytes: expected a non-negative int"),
    ({"cache_dir": ""}, "cache_dir: empty path"),
])
def test_bad_plan_arguments(mesh24: Mesh, overrides, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        _plan(mesh24, **overrides)
    assert not isinstance(info.value, NoPlanError)


def test_layout_of_another_mesh(mesh24: Mesh) -> None:
    other = Layout(Mesh({"x": 4}), '[{"x"}, {}]')
    with pytest.raises(ValueError, match="src: the layout is on mesh"):
        _plan(mesh24, src=other)


def test_unreachable_under_max_peak_bytes(mesh24: Mesh) -> None:
    # Gathering 64x64 f32 needs the whole 16 KiB tensor on every device.
    with pytest.raises(NoPlanError, match="no plan") as info:
        _plan(mesh24, max_peak_bytes=1024)
    assert isinstance(info.value, ValueError)
    cli = dist_mlir._tools.find_tool("dist-plan")
    import subprocess
    result = subprocess.run(
        [cli, "--mesh", str(mesh24), "--shape", "64x64xf32", "--from",
         '[{"x"}, {}]', "--to", "[{}, {}]", "--max-peak-bytes", "1024"],
        capture_output=True, text=True)
    # dist-plan exits 1 for "no plan" with the same reason.
    assert result.returncode == 1
    assert str(info.value) in result.stderr


def test_plan_types(mesh24: Mesh) -> None:
    with pytest.raises(TypeError, match="mesh must be a Mesh"):
        dist_mlir.plan({"x": 2}, (4,), "f32", "[{}]", "[{}]")
    with pytest.raises(TypeError, match="shape must be a sequence"):
        _plan(mesh24, shape="64x64")
    with pytest.raises(TypeError, match="dtype: cannot interpret"):
        _plan(mesh24, dtype=object())


# -- compile() ------------------------------------------------------------------

@requires_mlir
@pytest.mark.parametrize("source, message", [
    ("func.func @f( {", r"<input>:1:\d+: error: "),
    ('dist.mesh @m = <["x"=0]>', 'mesh axis "x" has size 0'),
    # Verifier errors come with the line and column of the op.
    ('dist.mesh @m = <["x"=2]>\n'
     'func.func @f(%a: tensor<8xf32, #dist.sharding<@m, [{"y"}]>>) {\n'
     '  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@m, [{"y"}]>>'
     ' -> tensor<8xf32, #dist.sharding<@m, [{}]>>\n'
     '  return\n}\n', r'<input>:2:14: error: argument 0 of @f: mesh @m has no axis "y"'),
])
def test_malformed_mlir(source: str, message: str) -> None:
    with pytest.raises(CompileError, match=message) as info:
        dist_mlir.compile(source)
    assert isinstance(info.value, ValueError)
    assert not str(info.value).endswith("\n")


@requires_mlir
def test_bad_pipelines() -> None:
    source = 'dist.mesh @m = <["x"=2]>'
    with pytest.raises(CompileError, match="'no-such-pass' does not refer"):
        dist_mlir.compile(source, "no-such-pass")
    with pytest.raises(CompileError, match="missing '\\)'"):
        dist_mlir.compile(source, "builtin.module(cse")
    with pytest.raises(CompileError, match="strategy"):
        dist_mlir.compile(source, "dist-lower-reshard{strategy=fastest}")


@requires_mlir
def test_failing_pass_is_located() -> None:
    source = (
        'dist.mesh @m = <["x"=4]>\n'
        'func.func @f(%a: tensor<64x64xf32, #dist.sharding<@m, [{"x"}, {}]>>)'
        ' -> tensor<64x64xf32, #dist.sharding<@m, [{}, {}]>> {\n'
        '  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m, '
        '[{"x"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@m, [{}, {}]>>\n'
        '  return %b : tensor<64x64xf32, #dist.sharding<@m, [{}, {}]>>\n}\n')
    with pytest.raises(CompileError, match=r"<input>:3:\d+: error: .*plan"):
        dist_mlir.compile(source, "dist-lower-reshard{max-peak-bytes=1024}")


def test_missing_file() -> None:
    with pytest.raises(FileNotFoundError):
        dist_mlir.compile("/nonexistent/program.mlir")

"""plan() against dist-plan: the same request gives the same bytes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import dist_mlir
from dist_mlir import Layout, Mesh, Partial, PlanCacheWarning, Replicate, Shard
from conftest import EXAMPLES, requires_mlir, run_tool

# (mesh text, shape, dtype, from, to, plan() keyword arguments, dist-plan
# flags). Together they cover every move kind, 1-D to 4-D meshes, uneven
# dims, device tables, partial kinds, both strategies and every way of
# giving cost parameters.
CASES = {
    "transpose": ('<["x"=2, "y"=4]>', (1024, 1024), "f32",
                  '[{"x"}, {"y"}]', '[{"y"}, {"x"}]', {}, []),
    "gather": ('<["x"=4]>', (64, 64), "f32", '[{"x"}, {}]', "[{}, {}]", {}, []),
    "slice": ('<["x"=4]>', (64, 64), "f32", "[{}, {}]", '[{}, {"x"}]', {}, []),
    "all_to_all": ('<["x"=4]>', (64, 64), "f32",
                   '[{"x"}, {}]', '[{}, {"x"}]', {}, []),
    "reduce_scatter": ('<["x"=2, "y"=4]>', (4096, 1024), "bf16",
                       '[{"x"}, {}], partial = sum {"y"}', '[{"x", "y"}, {}]',
                       {}, []),
    "all_reduce_max": ('<["x"=8]>', (128,), "f32",
                       "[{}], partial = max {\"x\"}", "[{}]", {}, []),
    "partial_to_shard_avg": ('<["x"=2, "y"=2]>', (16, 16), "f64",
                             '[{}, {}], partial = avg {"x", "y"}',
                             '[{"y"}, {"x"}]', {}, []),
    "replicate_to_partial": ('<["x"=4]>', (32,), "i32",
                             "[{}]", '[{}], partial = sum {"x"}', {}, []),
    "permute_axes": ('<["x"=2, "y"=2]>', (64, 64), "f32",
                     '[{"x", "y"}, {}]', '[{"y", "x"}, {}]', {}, []),
    "permute_dims": ('<["x"=2, "y"=2]>', (64, 64), "f32",
                     '[{"x"}, {"y"}]', '[{"y"}, {"x"}]', {}, []),
    "uneven": ('<["x"=4, "y"=3]>', (10, 7), "i8",
               '[{"x"}, {"y"}]', '[{"y", "x"}, {}]', {}, []),
    "device_table": ('<["x"=2, "y"=2], devices = [3, 2, 1, 0]>', (8, 8), "f16",
                     '[{"x"}, {}]', '[{}, {"y"}]', {}, []),
    "fsdp_3d": ('<["dp"=2, "fsdp"=4, "tp"=2]>', (8192, 4096), "bf16",
                '[{"fsdp"}, {"tp"}]', '[{}, {"tp"}]', {}, []),
    "mesh_4d": ('<["a"=2, "b"=2, "c"=2, "d"=2]>', (256, 256, 16), "f32",
                '[{"a", "b"}, {"c"}, {}]', '[{}, {"d"}, {"a", "c"}]', {}, []),
    "scalar": ('<["x"=2]>', (), "i1", "[], partial = max {\"x\"}", "[]", {}, []),
    "identity": ('<["x"=2]>', (4, 4), "f32", '[{"x"}, {}]', '[{"x"}, {}]', {}, []),
    "greedy": ('<["x"=2, "y"=4]>', (1024, 1024), "f32",
               '[{"x"}, {"y"}]', '[{"y"}, {"x"}]', {"strategy": "greedy"},
               ["--strategy", "greedy"]),
    "alpha_beta": ('<["x"=2, "y"=4]>', (4096, 4096), "bf16",
                   '[{"x"}, {}], partial = sum {"y"}', "[{}, {}]",
                   {"alpha": {"x": 5e-5, "y": 1e-6}, "beta": {"y": 2.7e-12}},
                   ["--alpha", "x=5e-05,y=1e-06", "--beta", "y=2.7e-12"]),
    "alpha_everywhere": ('<["x"=2, "y"=2]>', (512, 512), "f32",
                         '[{"x"}, {"y"}]', "[{}, {}]", {"alpha": 2e-6},
                         ["--alpha", "x=2e-06,y=2e-06"]),
    "max_peak": ('<["x"=2, "y"=4]>', (1024, 1024), "f32",
                 '[{"x"}, {"y"}]', '[{"y"}, {"x"}]',
                 {"max_peak_bytes": 2 * 1024 * 1024},
                 ["--max-peak-bytes", str(2 * 1024 * 1024)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_and_table_match_dist_plan(name: str) -> None:
    mesh_text, shape, dtype, src, dst, kwargs, flags = CASES[name]
    p = dist_mlir.plan(Mesh.from_text(mesh_text), shape, dtype, src, dst,
                       **kwargs)
    spec = "x".join([str(n) for n in shape] + [dtype])
    common = ["--mesh", mesh_text, "--shape", spec, "--from", src,
              "--to", dst, *flags]
    as_json = run_tool("dist-plan", *common, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert p.to_json() + "\n" == as_json.stdout
    as_text = run_tool("dist-plan", *common)
    assert as_text.returncode == 0, as_text.stderr
    assert str(p) == as_text.stdout


def test_topology_file_matches_dist_plan() -> None:
    topology = EXAMPLES / "cluster.json"
    mesh = Mesh({"node": 4, "gpu": 2}, topology=topology)
    src = '[{}, {}], partial = sum {"node", "gpu"}'
    dst = '[{}, {"node"}]'
    p = dist_mlir.plan(mesh, (8192, 8192), "bf16", src, dst)
    cli = run_tool("dist-plan", "--mesh", str(mesh), "--shape",
                   "8192x8192xbf16", "--from", src, "--to", dst,
                   "--topology", str(topology), "--format", "json")
    assert cli.returncode == 0, cli.stderr
    assert p.to_json() + "\n" == cli.stdout
    # The slow "node" axis changes the plan: it differs from the default one.
    uniform = dist_mlir.plan(Mesh({"node": 4, "gpu": 2}), (8192, 8192),
                             "bf16", src, dst)
    assert uniform.cost != p.cost


def test_plan_fields_mirror_the_json(mesh24: Mesh) -> None:
    p = dist_mlir.plan(mesh24, (4096, 1024), "bf16",
                       '[{"x"}, {}], partial = sum {"y"}', "[{}, {}]")
    data = p.to_dict()
    assert p.strategy == data["strategy"] == "optimal"
    assert p.cost == data["cost"]
    assert p.peak_bytes == data["peak_bytes"]
    assert p.lower_bound == data["lower_bound"] <= p.cost
    assert p.cache == data["cache"] == "off"
    assert len(p) == len(data["steps"]) > 0
    for step, entry in zip(p, data["steps"]):
        assert step.op == entry["op"]
        assert list(step.axes) == entry["axes"]
        assert step.dim == entry["dim"]
        assert step.to_dim == entry.get("to_dim")
        assert step.reduction == entry.get("reduction")
        assert step.bytes == entry["bytes"]
        assert step.cost == entry["cost"]
        assert str(step.layout) == entry["layout"]
        assert isinstance(step.layout, Layout)
    assert sum(step.cost for step in p) == pytest.approx(p.cost)
    assert p.steps[-1].layout == p.target
    # Bytes chain: what one step leaves is what the next one starts with.
    for before, after in zip(p.steps, p.steps[1:]):
        assert before.bytes_after == after.bytes
    assert p.peak_bytes == max(s.bytes + s.bytes_after for s in p)


def test_step_views(mesh24: Mesh) -> None:
    p = dist_mlir.plan(mesh24, (64, 64), "f32", '[{"x"}, {"y"}]',
                       '[{}, {"y", "x"}]')
    (step,) = p.steps
    assert (step.op, step.axes, step.dim, step.to_dim) == (
        "all_to_all", ("x",), 0, 1)
    assert step.dims == (0, 1)
    assert str(step) == 'all_to_all {"x"} dim 0 -> 1'
    assert repr(p).startswith('<Plan optimal 64x64xf32 [{"x"}, {"y"}] -> '
                              '[{}, {"y", "x"}]: 1 step, cost ')


def test_layout_forms_are_interchangeable(mesh24: Mesh) -> None:
    by_text = dist_mlir.plan(mesh24, (256, 256), "f32", '[{"x"}, {"y"}]',
                             '[{"y"}, {}], partial = sum {"x"}')
    by_placements = dist_mlir.plan(mesh24, (256, 256), "f32",
                                   [Shard(0), Shard(1)],
                                   [Partial("sum"), Shard(0)])
    by_layouts = dist_mlir.plan(str(mesh24), [256, 256], "float32",
                                by_text.source, by_text.target)
    assert by_text.to_json() == by_placements.to_json() == by_layouts.to_json()


def test_dtype_spellings(mesh24: Mesh) -> None:
    numpy = pytest.importorskip("numpy")
    reference = dist_mlir.plan(mesh24, (64, 64), "bf16", '[{"x"}, {}]', "[{}, {}]")
    for spelling in ("bfloat16", "torch.bfloat16"):
        assert dist_mlir.plan(mesh24, (64, 64), spelling, '[{"x"}, {}]',
                              "[{}, {}]").to_json() == reference.to_json()
    as_numpy = dist_mlir.plan(mesh24, (64, 64), numpy.float32, '[{"x"}, {}]',
                              "[{}, {}]")
    assert as_numpy.dtype == "f32"
    assert as_numpy.steps[0].bytes == 32 * 64 * 4


def test_overrides_change_costs(mesh24: Mesh) -> None:
    base = dist_mlir.plan(mesh24, (64, 64), "f32", '[{"x"}, {}]', "[{}, {}]")
    slow = dist_mlir.plan(mesh24, (64, 64), "f32", '[{"x"}, {}]', "[{}, {}]",
                          alpha=1e-3)
    # One all_gather over x (p = 2): the latency term is (p - 1) * alpha.
    assert slow.cost - base.cost == pytest.approx(1e-3 - 1e-5)
    # Overrides win over the mesh's topology, axis by axis.
    mesh = Mesh({"x": 2, "y": 4}, topology={"axes": {"x": {"alpha": 1.0}}})
    assert dist_mlir.plan(mesh, (64, 64), "f32", '[{"x"}, {}]', "[{}, {}]",
                          alpha={"x": 1e-5}).to_json() == base.to_json()


def test_local_copies_are_priced() -> None:
    # semantics §3b "local": a slice pays for the block it copies out.
    free = Mesh({"x": 2, "y": 4})
    priced = Mesh({"x": 2, "y": 4}, topology={"local": {"beta": 1e-12}})
    args = ((64, 64), "f32", "[{}, {}]", '[{"x"}, {}]')
    assert dist_mlir.plan(free, *args).cost == 0
    assert dist_mlir.plan(priced, *args).cost == pytest.approx(32 * 64 * 4e-12)


def test_cache_miss_then_hit(tmp_path, mesh24: Mesh) -> None:
    args = (mesh24, (512, 512), "f32", '[{"x"}, {"y"}]', '[{"y"}, {"x"}]')
    first = dist_mlir.plan(*args, cache_dir=tmp_path)
    second = dist_mlir.plan(*args, cache_dir=str(tmp_path))
    assert (first.cache, second.cache) == ("miss", "hit")
    assert [f.suffix for f in tmp_path.iterdir()] == [".plan"]
    strip = lambda p: {k: v for k, v in p.to_dict().items() if k != "cache"}
    assert strip(first) == strip(second) == strip(dist_mlir.plan(*args))


def test_cache_is_shared_with_dist_plan(tmp_path) -> None:
    # A fresh directory, first written by dist-plan, then read by plan(): a
    # hit from disk, as the two share one store.
    flags = ["--mesh", '<["x"=2, "y"=2]>', "--shape", "96x32xf32",
             "--from", '[{"x"}, {}]', "--to", '[{}, {"y"}]',
             "--cache", str(tmp_path), "--format", "json"]
    cli = run_tool("dist-plan", *flags)
    assert cli.returncode == 0, cli.stderr
    if json.loads(cli.stdout)["cache"] == "off":
        pytest.skip("this dist-plan accepts --cache but does not use the "
                    "plan cache yet")
    p = dist_mlir.plan(Mesh({"x": 2, "y": 2}), (96, 32), "f32",
                       '[{"x"}, {}]', '[{}, {"y"}]', cache_dir=tmp_path)
    assert p.cache == "hit"
    assert p.to_json() + "\n" == run_tool("dist-plan", *flags).stdout


@requires_mlir
def test_cache_is_shared_with_dist_lower_reshard(tmp_path) -> None:
    # The pass writes the entry (its cache lives in its own MLIRContext);
    # plan() finds it on disk: one store for the compiler and for Python.
    dist_mlir.compile(EXAMPLES / "transpose_2d.mlir",
                      f"dist-lower-reshard{{cache-dir={tmp_path}}}")
    assert len(list(tmp_path.iterdir())) == 1
    p = dist_mlir.plan(Mesh({"x": 2, "y": 4}), (1024, 1024), "f32",
                       '[{"x"}, {"y"}]', '[{"y"}, {"x"}]', cache_dir=tmp_path)
    assert p.cache == "hit"


def test_unusable_cache_dir_warns_and_still_plans(tmp_path,
                                                  mesh24: Mesh) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.warns(PlanCacheWarning, match="cannot create directory"):
        p = dist_mlir.plan(mesh24, (64, 64), "f32", '[{"x"}, {}]', "[{}, {}]",
                           cache_dir=blocker / "plans")
    assert p.cache == "miss" and len(p) == 1


def test_damaged_cache_entry_warns_and_is_repaired(tmp_path) -> None:
    # plan() keeps a process-wide memory level in front of the disk, so the
    # entry is written by a child process: this one then reads it from disk.
    directory = tmp_path / "plans"
    request = ("dist_mlir.Mesh({'x': 4}), (64,), 'f32', '[{\"x\"}]', '[{}]', "
               f"cache_dir={str(directory)!r}")
    subprocess.run([sys.executable, "-c",
                    f"import dist_mlir; dist_mlir.plan({request})"], check=True)
    (entry,) = directory.iterdir()
    entry.write_text(entry.read_text()[:-20])
    with pytest.warns(PlanCacheWarning, match="ignoring entry"):
        p = dist_mlir.plan(Mesh({"x": 4}), (64,), "f32", '[{"x"}]', "[{}]",
                           cache_dir=directory)
    assert p.cache == "miss"
    # Rewritten: a new process finds a valid entry, without a warning.
    check = subprocess.run(
        [sys.executable, "-W", "error", "-c",
         f"import dist_mlir; print(dist_mlir.plan({request}).cache)"],
        check=True, capture_output=True, text=True)
    assert check.stdout == "hit\n"


def test_str_is_the_table(mesh24: Mesh) -> None:
    text = str(dist_mlir.plan(mesh24, (64, 64), "f32", '[{"x"}, {}]',
                              [Replicate(), Replicate()]))
    assert text.splitlines()[0].split() == [
        "step", "op", "axes", "dims", "bytes", "recv", "cost", "(us)",
        "layout", "after"]
    assert "optimal plan: 1 step" in text


def test_redistribute_and_collective_only(mesh24: Mesh) -> None:
    """The transpose of shards is one point-to-point step; collectives only
    need three. recv_bytes is the wire traffic of the busiest device."""
    p = dist_mlir.plan(mesh24, (1024, 1024), "f32", '[{"x"}, {"y"}]',
                       '[{"y"}, {"x"}]')
    assert [s.op for s in p] == ["redistribute"]
    assert p.steps[0].recv_bytes == 512 * 1024
    assert not p.steps[0].cross_mesh
    q = dist_mlir.plan(mesh24, (1024, 1024), "f32", '[{"x"}, {"y"}]',
                       '[{"y"}, {"x"}]', moves="collective")
    assert [s.op for s in q] == ["all_gather", "all_to_all", "all_slice"]
    assert p.cost < q.cost / 2
    with pytest.raises(ValueError, match="moves: 'p2p' is not one of all, collective"):
        dist_mlir.plan(mesh24, (8, 8), "f32", '[{"x"}, {}]', '[{}, {}]',
                       moves="p2p")


def test_cross_mesh_plan() -> None:
    """A pipeline hand-off: stage 0 on ranks 0-3, stage 1 on ranks 4-7;
    steps after the transfer print on the target mesh."""
    s0 = Mesh.from_text('<["tp"=4], devices = [0, 1, 2, 3]>')
    s1 = Mesh.from_text('<["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>')
    p = dist_mlir.plan(s0, (64, 64), "f32", '[{"tp"}, {}]', '[{}, {"tp"}]',
                       to_mesh=s1)
    assert p.to_mesh is s1
    assert p.steps[0].op == "redistribute" and p.steps[0].cross_mesh
    assert str(p.steps[-1].layout) == '[{}, {"tp"}]'
    assert '"cross_mesh": true' in p.to_json()
    slow = dist_mlir.plan(s0, (64, 64), "f32", '[{"tp"}, {}]', '[{}, {"tp"}]',
                          to_mesh=s1, transfer=(1e-4, 1e-9))
    assert slow.cost > p.cost
    with pytest.raises(ValueError, match="transfer: needs to_mesh"):
        dist_mlir.plan(s0, (8, 8), "f32", '[{"tp"}, {}]', '[{}, {}]',
                       transfer=(1e-5, 1e-9))


def test_segmented_layouts() -> None:
    """A fused QKV weight split per segment (semantics §2 segments): the layout
    text carries them, the local shape sums the per-segment blocks, and the
    reshard from a contiguous split is one exchange."""
    mesh = Mesh({"tp": 4})
    qkv = dist_mlir.Layout(mesh, '[{"tp"} segments [256, 64, 64], {}]')
    assert qkv.segments == ((256, 64, 64), ())
    assert qkv.local_shape((384, 64)) == (96, 64)
    p = dist_mlir.plan(mesh, (384, 64), "bf16", '[{"tp"}, {}]', qkv)
    assert [s.op for s in p] == ["redistribute"]
    assert p.steps[0].layout == qkv
    with pytest.raises(ValueError, match="segments sum to 384 but the dim has extent 320"):
        qkv.local_shape((320, 64))
    assert qkv.to_placements() == [
        dist_mlir.StridedShard(0, segments=(256, 64, 64))]


def test_plan_keywords_are_the_request_table() -> None:
    """plan()'s parameters are the Python column of the one table of a
    request's parts (include/dist/Planner/PlanRequestKeys.def), which
    dist-plan's flags and the C API's keys come from too."""
    import inspect

    from dist_mlir import _dist

    params = list(inspect.signature(dist_mlir.plan).parameters)
    assert sorted(params) == sorted(_dist.PLAN_REQUEST_KEYWORDS)

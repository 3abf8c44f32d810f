"""Meshes, layouts and placements: construction, views and round trips."""

from __future__ import annotations

import itertools
import json

import pytest

from dist_mlir import (Layout, Mesh, Partial, Replicate, Shard, StridedShard,
                       REDUCTIONS, plan)


# -- Mesh ---------------------------------------------------------------------

def test_mesh_views(mesh24: Mesh) -> None:
    assert str(mesh24) == '<["x"=2, "y"=4]>'
    assert repr(mesh24) == "Mesh({'x': 2, 'y': 4})"
    assert mesh24.axis_names == ("x", "y")
    assert mesh24.shape == (2, 4)
    assert mesh24.axes == {"x": 2, "y": 4}
    assert mesh24.ndim == 2
    assert mesh24.num_devices == mesh24.size() == 8
    assert mesh24.size("y") == mesh24.size(1) == mesh24.size(-1) == 4
    assert mesh24.devices == tuple(range(8))
    assert mesh24.topology is None


def test_mesh_from_pairs_and_text_agree() -> None:
    a = Mesh([("dp", 2), ("tp", 4)])
    b = Mesh.from_text('<["dp"=2, "tp"=4]>')
    c = Mesh.from_text('["dp"=2, "tp"=4]')  # the brackets are optional
    assert a == b == c
    assert hash(a) == hash(b)
    assert Mesh({"tp": 4, "dp": 2}) != a  # axis order is part of the mesh


def test_mesh_device_table_is_row_major() -> None:
    # semantics §1: rank = devices[L(c)], L row-major with axis 0 most significant.
    mesh = Mesh({"x": 2, "y": 2}, devices=[3, 2, 1, 0])
    assert str(mesh) == '<["x"=2, "y"=2], devices = [3, 2, 1, 0]>'
    assert Mesh.from_text(str(mesh)) == mesh
    assert mesh.devices == (3, 2, 1, 0)
    assert [mesh.rank_of(c) for c in [(0, 0), (0, 1), (1, 0), (1, 1)]] == [
        3, 2, 1, 0]
    assert mesh.coordinate_of(2) == (0, 1)
    assert repr(mesh) == "Mesh({'x': 2, 'y': 2}, devices=[3, 2, 1, 0])"
    identity = Mesh({"x": 2, "y": 4})
    assert [identity.coordinate_of(r) for r in (0, 5, 7)] == [
        (0, 0), (1, 1), (1, 3)]


def test_mesh_topology_dict_and_file(tmp_path) -> None:
    spec = {"axes": {"node": {"alpha": 2e-5, "beta": 4e-11}}}
    mesh = Mesh({"node": 4, "gpu": 2}, topology=spec)
    params = mesh.cost_params()
    assert params["node"] == (2e-5, 4e-11)
    assert params["gpu"] == (1e-5, 1 / 370e9)  # semantics §3 defaults
    assert mesh.topology == spec
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(spec))
    from_file = Mesh({"node": 4, "gpu": 2}, topology=path)
    assert from_file == mesh
    assert repr(from_file).endswith(f"topology={str(path)!r})")
    # Costs are part of equality: they change plans.
    assert mesh != Mesh({"node": 4, "gpu": 2})


# -- Layout text ----------------------------------------------------------------

TEXTS = [
    "[]",
    "[{}]",
    '[{"x"}, {"y"}]',
    '[{"y"}, {"x"}]',
    '[{"x", "y"}, {}]',
    '[{"y", "x"}, {}]',
    '[{}, {"x"}], partial = sum {"y"}',
    '[{}, {}], partial = max {"x", "y"}',
    '[{"y"}], partial = avg {"x"}',
]


@pytest.mark.parametrize("text", TEXTS)
def test_text_round_trip(mesh24: Mesh, text: str) -> None:
    layout = Layout(mesh24, text)
    assert str(layout) == text
    assert Layout.from_text(mesh24, str(layout)) == layout
    assert Layout.from_placements(mesh24, layout.to_placements(),
                                  layout.ndim) == layout


def test_text_is_canonical(mesh24: Mesh) -> None:
    # Partial axes print in mesh order, spacing is normalised.
    layout = Layout(mesh24, '[ {"x"} ,{}],partial=sum{"y"}')
    assert str(layout) == '[{"x"}, {}], partial = sum {"y"}'
    swapped = Layout(Mesh({"a": 2, "b": 2}), '[{}], partial = min {"b", "a"}')
    assert str(swapped) == '[{}], partial = min {"a", "b"}'


def test_layout_views(mesh24: Mesh) -> None:
    layout = Layout(mesh24, '[{"y", "x"}, {}, {}]')
    assert layout.ndim == 3
    assert layout.dims == (("y", "x"), (), ())
    assert layout.partial == ()
    assert layout.reduction is None
    assert layout.mesh is mesh24
    partial = Layout(mesh24, '[{}], partial = prod {"x"}')
    assert partial.partial == ("x",)
    assert partial.reduction == "prod"
    assert repr(partial) == (
        "Layout(Mesh({'x': 2, 'y': 4}), '[{}], partial = prod {\"x\"}')")


def test_local_shape_is_padded(mesh24: Mesh) -> None:
    # semantics §2: B_d = ceil(N_d / P_d); 10 rows over 8 devices -> 2 per device.
    assert Layout(mesh24, '[{"x", "y"}, {}]').local_shape((10, 3)) == (2, 3)
    assert Layout(mesh24, '[{"y"}, {"x"}]').local_shape((6, 5)) == (2, 3)
    assert Layout.replicated(mesh24, 2).local_shape((6, 5)) == (6, 5)


def test_layout_equality_and_hash(mesh24: Mesh) -> None:
    a = Layout(mesh24, '[{"x"}, {}]')
    b = Layout(Mesh.from_text(str(mesh24)), '[{"x"}, {}]')
    assert a == b and hash(a) == hash(b)
    assert a != Layout(mesh24, '[{}, {"x"}]')
    assert a != Layout(Mesh({"x": 2, "y": 2}), '[{"x"}, {}]')
    # Costs do not matter to a layout: the same axes and devices suffice.
    costly = Mesh({"x": 2, "y": 4}, topology={"axes": {"x": {"alpha": 1.0}}})
    assert a == Layout(costly, '[{"x"}, {}]')


# -- Placements -----------------------------------------------------------------

@pytest.mark.parametrize("placements, ndim, text", [
    ([Replicate(), Replicate()], 2, "[{}, {}]"),
    ([Shard(0), Shard(1)], 2, '[{"x"}, {"y"}]'),
    ([Shard(1), Shard(0)], 2, '[{"y"}, {"x"}]'),
    ([Shard(-1), Replicate()], 3, '[{}, {}, {"x"}]'),
    # Two axes on one dim: mesh order by default (DTensor's convention)...
    ([Shard(0), Shard(0)], 1, '[{"x", "y"}]'),
    # ... or the explicit order, 0 = major.
    ([Shard(0, order=0), Shard(0, order=1)], 1, '[{"x", "y"}]'),
    ([Shard(0, order=1), Shard(0, order=0)], 1, '[{"y", "x"}]'),
    ([Partial(), Shard(0)], 1, '[{"y"}], partial = sum {"x"}'),
    ([Partial("max"), Partial("max")], 0, '[], partial = max {"x", "y"}'),
])
def test_placements_to_text(mesh24: Mesh, placements, ndim: int,
                            text: str) -> None:
    layout = Layout.from_placements(mesh24, placements, ndim)
    assert str(layout) == text
    assert layout == Layout(mesh24, text)


def test_to_placements_marks_order_only_when_needed(mesh24: Mesh) -> None:
    assert Layout(mesh24, '[{"x", "y"}]').to_placements() == [Shard(0), Shard(0)]
    assert Layout(mesh24, '[{"y", "x"}]').to_placements() == [
        Shard(0, order=1), Shard(0, order=0)]
    assert Layout(mesh24, '[{}], partial = avg {"y"}').to_placements() == [
        Replicate(), Partial("avg")]


def _all_layouts(mesh: Mesh, ndim: int):
    """Every layout of rank `ndim` on `mesh` (each axis: replicated,
    partial, or on some dim at some position), each partial kind."""
    names = mesh.axis_names
    for roles in itertools.product(["R", "P", *range(ndim)], repeat=len(names)):
        per_dim = [[n for n, r in zip(names, roles) if r == d]
                   for d in range(ndim)]
        partial = [n for n, r in zip(names, roles) if r == "P"]
        kinds = REDUCTIONS if partial else ("sum",)
        for orders in itertools.product(
                *[itertools.permutations(axes) for axes in per_dim]):
            for kind in kinds:
                text = "[" + ", ".join(
                    "{" + ", ".join(json.dumps(a) for a in axes) + "}"
                    for axes in orders) + "]"
                if partial:
                    text += f", partial = {kind} {{" + ", ".join(
                        json.dumps(a) for a in partial) + "}"
                yield text


def test_every_layout_round_trips() -> None:
    mesh = Mesh({"a": 2, "b": 3, "c": 2})
    texts = list(_all_layouts(mesh, 2))
    assert len(texts) > 200
    for text in texts:
        layout = Layout(mesh, text)
        assert str(layout) == text
        placements = layout.to_placements()
        assert len(placements) == mesh.ndim
        back = Layout.from_placements(mesh, placements, 2)
        assert back == layout and str(back) == text, (text, placements)


def test_placement_values() -> None:
    assert Shard(0) == Shard(0) and Shard(0) != Shard(0, order=0)
    assert Shard(1).is_shard() and Shard(1).is_shard(1)
    assert not Shard(1).is_shard(0)
    assert Replicate().is_replicate() and not Replicate().is_partial()
    assert Partial().reduce_op == "sum" and Partial().is_partial()
    assert repr(Partial("max")) == "Partial('max')"
    assert len({Shard(0), Shard(0), Replicate(), Replicate()}) == 2


# -- Strided placements (DTensor's _StridedShard, semantics §2 segments) -----------

def test_strided_shard_alone_is_a_segmented_dim() -> None:
    mesh = Mesh({"dp": 2, "tp": 4})
    qkv = Layout.from_placements(
        mesh, [Replicate(), StridedShard(0, split_factor=3)], ndim=2,
        shape=(96, 8))
    assert str(qkv) == '[{"tp"} segments [32, 32, 32], {}]'
    assert qkv.segments == ((32, 32, 32), ())
    gqa = Layout.from_placements(
        mesh, [Replicate(), StridedShard(0, segments=(64, 16, 16))], ndim=2)
    assert str(gqa) == '[{"tp"} segments [64, 16, 16], {}]'
    # Back to placements: equal segments as a split factor, unequal as a
    # list; both invert.
    assert qkv.to_placements() == [Replicate(), StridedShard(0, split_factor=3)]
    assert gqa.to_placements() == [
        Replicate(), StridedShard(0, segments=(64, 16, 16))]
    assert Layout.from_placements(mesh, qkv.to_placements(), ndim=2,
                                  shape=(96, 8)) == qkv
    assert Layout.from_placements(mesh, gqa.to_placements(), ndim=2) == gqa
    # Two axes on one interleaved dim keep their order.
    two = Layout(mesh, '[{"tp", "dp"} segments [64, 16, 16], {}]')
    assert Layout.from_placements(mesh, two.to_placements(), ndim=2) == two


def test_strided_shard_next_to_shard_is_dtensor_right_to_left_order() -> None:
    # FSDP2 + TP: tp shards first (major), dp within each tp shard (minor).
    mesh = Mesh({"dp": 2, "tp": 4})
    layout = Layout.from_placements(
        mesh, [StridedShard(0, split_factor=4), Shard(0)], ndim=1)
    assert str(layout) == '[{"tp", "dp"}]'
    with pytest.raises(ValueError, match="DTensor's split_factor would be 4"):
        Layout.from_placements(
            mesh, [StridedShard(0, split_factor=2), Shard(0)], ndim=1)


def test_strided_shard_errors_say_why() -> None:
    mesh = Mesh({"tp": 4})
    with pytest.raises(ValueError, match="exactly one of split_factor"):
        StridedShard(0)
    with pytest.raises(ValueError, match=">= 1"):
        StridedShard(0, segments=(4, 0))
    with pytest.raises(TypeError, match="must be an int"):
        StridedShard(0, split_factor=True)
    with pytest.raises(ValueError, match="needs the global shape"):
        Layout.from_placements(mesh, [StridedShard(0, split_factor=3)], ndim=1)
    with pytest.raises(ValueError, match="not 5 equal sub-tensors"):
        Layout.from_placements(mesh, [StridedShard(0, split_factor=5)], ndim=1,
                               shape=(96,))
    with pytest.raises(ValueError, match="sum to 10, not the extent 12"):
        Layout.from_placements(mesh, [StridedShard(0, segments=(5, 5))],
                               ndim=1, shape=(12,))


def test_plan_takes_strided_placements() -> None:
    # A GQA weight split per segment, gathered whole: one all_gather, priced
    # as the plain one on the same bytes.
    mesh = Mesh({"tp": 4})
    p = plan(mesh, (96, 8), "f32", [StridedShard(0, split_factor=3)],
             "[{}, {}]")
    assert [s.op for s in p.steps] == ["all_gather"]
    contiguous = plan(mesh, (96, 8), "f32", "[{\"tp\"}, {}]", "[{}, {}]")
    assert p.cost == pytest.approx(contiguous.cost)

#!/usr/bin/env python3
"""dist's reshard plans beside JAX/XLA's and PyTorch DTensor's, all priced in
dist's cost model (semantics §3, the default parameters).

    PEERS=$(utils/bench/peers/setup.sh)
    $PEERS utils/bench/peers/plan_peers.py BUILD [--random 100] [--seed 1]
          [--json FILE] [--cases named|random|all]

For every reshard (a mesh, a global shape, a source and a target layout):

- dist: `dist-plan --format json`, with all moves and with `--moves
  collective`;
- XLA: `jax.jit(lambda a: a, in_shardings=src, out_shardings=dst)` on host
  devices (as many as the mesh has, out of 32 forced ones), compiled; the
  collectives of its optimized HLO (all-gather, all-to-all, reduce-scatter,
  all-reduce, collective-permute; slices and copies are local), each priced
  by §3's formula for its kind over its replica group;
- DTensor: the steps `redistribute` takes (its greedy planner,
  `_gen_transform_infos`, under a fake process group), each a collective on
  one mesh dim, priced the same way.

The formulas are §3's table: all_gather (p-1)α + (p-1)nβ; all_to_all and
reduce_scatter (p-1)α + (p-1)/p·nβ; all_reduce 2(p-1)α + 2(p-1)/p·nβ; a
permute α + nβ; n the local bytes before the step, p the group size, α =
1e-5 s and β = 1/370e9 s/B on every axis. They are this file's own copy of
the model, so every dist plan is priced by them too and must equal what
dist-plan reports (checked on every case: the copy cannot drift).

Unfairness, said once: XLA and DTensor are priced in dist's model, not their
own (XLA's own cost model and DTensor's are not what they run on); XLA:CPU's
SPMD partitioner is XLA:GPU's in all that matters here, but XLA:CPU forms no
reduce-scatter (an all-reduce plus a slice); JAX cannot take partial inputs
(`unreduced`) in jit's in_shardings here, so cases with partial sources have
no XLA plan; JAX refuses shardings that do not divide a dim on some versions;
DTensor's layouts order a dim's mesh axes by mesh order only, so a layout
with another order has no DTensor plan, and DTensor chunks a dim split by
several axes one axis at a time, so where that is uneven its layout is not
dist's (no DTensor plan either). Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=32")

ALPHA, BETA = 1e-5, 1.0 / 370e9
BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8}

# name, mesh axes, shape, from, to: the plan-quality suite (utils/bench/
# plan_quality.py) on its own meshes, the cases issue 47 names, the
# redistribute cases of docs/benchmarks.md.
NAMED = [
    ("Megatron SP->TP gather", [("dp", 2), ("tp", 4)], "4096x1024xf32",
     '[{"dp", "tp"}, {}]', '[{"dp"}, {}]'),
    ("Megatron TP->SP reduce-scatter", [("dp", 2), ("tp", 4)], "4096x1024xf32",
     '[{"dp"}, {}], partial = sum {"tp"}', '[{"dp", "tp"}, {}]'),
    ("TP all-reduce", [("dp", 2), ("tp", 4)], "4096x1024xf32",
     '[{"dp"}, {}], partial = sum {"tp"}', '[{"dp"}, {}]'),
    ("FSDP weight gather, 3-D mesh", [("dp", 4), ("tp", 2), ("cp", 2)], "8192x8192xf32",
     '[{"dp", "tp"}, {}]', '[{"tp"}, {}]'),
    ("context parallel seq->heads", [("dp", 2), ("tp", 2), ("cp", 4)], "8192x4096xf32",
     '[{"dp", "cp"}, {"tp"}]', '[{"dp"}, {"tp", "cp"}]'),
    ("2-D layout transpose 2x4", [("x", 2), ("y", 4)], "1024x1024xf32",
     '[{"x"}, {"y"}]', '[{"y"}, {"x"}]'),
    ("8x2 column->row shards", [("x", 8), ("y", 2)], "4096x4096xf32",
     '[{}, {"y"}]', '[{"x", "y"}, {}]'),
    ("2x2x2 rotate three dims", [("x", 2), ("y", 2), ("z", 2)], "256x256x256xf32",
     '[{"x"}, {"y"}, {"z"}]', '[{"y"}, {"z"}, {"x"}]'),
    ("4-D mesh swap dim pairs", [("a", 2), ("b", 2), ("c", 2), ("d", 2)], "4096x4096xf32",
     '[{"a", "b"}, {"c", "d"}]', '[{"c", "d"}, {"a", "b"}]'),
    ("uneven 1000 rows on 4x2", [("x", 4), ("y", 2)], "1000x1000xf32",
     '[{"x", "y"}, {}]', '[{"y"}, {"x"}]'),
    ("uneven 6 rows, 2x2x2 (issue 47)", [("x", 2), ("y", 2), ("z", 2)], "6x4096xf32",
     '[{"x", "y"}, {"z"}]', '[{"x"}, {"z", "y"}]'),
    ("transpose on unequal axes 2x4", [("x", 2), ("y", 4)], "4096x4096xf32",
     '[{"x"}, {"y"}]', '[{"y"}, {"x"}]'),
    ("4x8 expert all-to-all", [("node", 4), ("gpu", 8)], "16384x4096xf32",
     '[{"node", "gpu"}, {}]', '[{}, {"node", "gpu"}]'),
    ("4x8 gradient sync to columns", [("node", 4), ("gpu", 8)], "8192x8192xf32",
     '[{}, {}], partial = sum {"node", "gpu"}', '[{}, {"node"}]'),
]

MESHES = [[8], [2, 4], [4, 2], [2, 2, 2], [32], [4, 8], [8, 4], [2, 4, 4], [2, 2, 8]]
AXES = ["x", "y", "z"]


# --------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------

def parse_layout(text: str):
    """'[{"x"}, {}], partial = sum {"y"}' -> ([["x"], []], ["y"])."""
    body, _, partial = text.partition("], partial")
    dims = [re.findall(r'"([^"]+)"', d) for d in re.findall(r"\{([^}]*)\}", body + "]")]
    return dims, re.findall(r'"([^"]+)"', partial)


def layout_text(dims, partial) -> str:
    text = "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims) + "]"
    if partial:
        text += ", partial = sum {" + ", ".join(f'"{a}"' for a in partial) + "}"
    return text


def parse_shape(text: str):
    *dims, dtype = text.split("x")
    return [int(d) for d in dims], dtype


def local_bytes(shape, dims, sizes, dtype) -> int:
    n = BYTES[dtype]
    for extent, axes in zip(shape, dims):
        n *= -(-extent // math.prod(sizes[a] for a in axes))
    return n


# --------------------------------------------------------------------------
# §3's costs
# --------------------------------------------------------------------------

def cost(kind: str, p: int, n: float) -> float:
    if p <= 1 or kind in ("all_slice", "replicate_to_partial", "local"):
        return 0.0
    if kind == "all_gather":
        return (p - 1) * ALPHA + (p - 1) * n * BETA
    if kind in ("all_to_all", "reduce_scatter"):
        return (p - 1) * ALPHA + (p - 1) / p * n * BETA
    if kind == "all_reduce":
        return 2 * (p - 1) * ALPHA + 2 * (p - 1) / p * n * BETA
    if kind == "permute":
        return ALPHA + n * BETA
    raise ValueError(kind)


# --------------------------------------------------------------------------
# dist
# --------------------------------------------------------------------------

def mesh_text(axes) -> str:
    return "<[" + ", ".join(f'"{a}"={s}' for a, s in axes) + "]>"


def dist_plan(build, axes, shape, src, dst, moves="all"):
    cmd = [os.path.join(build, "bin", "dist-plan"), "--mesh", mesh_text(axes),
           "--shape", shape, "--from", src, "--to", dst, "--moves", moves,
           "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)


def priced_here(plan, axes) -> float | None:
    """dist's plan priced by this file's copy of §3 (None: a redistribute,
    whose price depends on the exchange)."""
    sizes = dict(axes)
    total = 0.0
    for step in plan["steps"]:
        if step["op"] == "redistribute":
            return None
        p = math.prod(sizes[a] for a in step["axes"])
        total += cost(step["op"], p, step["bytes"])
    return total


# --------------------------------------------------------------------------
# XLA
# --------------------------------------------------------------------------

_SHAPE = re.compile(r"\b(f32|bf16|f16|f64|s32|u32|s8|u8|pred)\[([\d,]*)\]")
_ELEMENT = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "s32": 4, "u32": 4, "s8": 1,
            "u8": 1, "pred": 1}
_KIND = {"all-gather": "all_gather", "all-to-all": "all_to_all",
         "reduce-scatter": "reduce_scatter", "all-reduce": "all_reduce",
         "collective-permute": "permute"}


def _groups(text: str, n: int):
    """The replica groups of an HLO collective (explicit or iota form)."""
    m = re.search(r"replica_groups=\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
    if m:
        import numpy as np
        shape = [int(v) for v in m.group(1).split(",")]
        dims = [int(v) for v in m.group(2).split(",")]
        ids = np.arange(math.prod(dims)).reshape(dims)
        if m.group(3):
            ids = ids.transpose([int(v) for v in m.group(3).split(",")])
        return ids.reshape(shape).tolist()
    m = re.search(r"replica_groups=\{((?:\{[\d,]*\},?)*)\}", text)
    if m and m.group(1).strip():
        return [[int(v) for v in g.split(",")] for g in re.findall(r"\{([\d,]+)\}", m.group(1))]
    return [list(range(n))]


def _result_bytes(text: str) -> int:
    """The bytes of an HLO result type (an array or a tuple of arrays)."""
    total = 0
    for dtype, dims in _SHAPE.findall(text):
        total += _ELEMENT[dtype] * math.prod(int(d) for d in dims.split(",") if d)
    return total


# The local bytes before a collective, from its result's (n in §3).
_INPUT_BYTES = {"all_gather": lambda r, p: r / p, "reduce_scatter": lambda r, p: r * p,
                "all_to_all": lambda r, p: r, "all_reduce": lambda r, p: r,
                "permute": lambda r, p: r}


def xla_plan(axes, shape_text, src, dst):
    """(cost, collectives) of XLA's plan, or (None, why)."""
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    shape, dtype = parse_shape(shape_text)
    sdims, spartial = parse_layout(src)
    ddims, dpartial = parse_layout(dst)
    if spartial or dpartial:
        return None, "partial values"
    n = math.prod(s for _, s in axes)
    mesh = Mesh(np.array(jax.devices()[:n]).reshape([s for _, s in axes]),
                tuple(a for a, _ in axes))

    def spec(dims):
        return P(*[tuple(d) if len(d) > 1 else (d[0] if d else None) for d in dims])
    try:
        fn = jax.jit(lambda a: a, in_shardings=NamedSharding(mesh, spec(sdims)),
                     out_shardings=NamedSharding(mesh, spec(ddims)))
        jdtype = {"f32": np.float32, "bf16": jax.numpy.bfloat16, "f16": np.float16,
                  "f64": np.float64}[dtype]
        hlo = fn.lower(jax.ShapeDtypeStruct(tuple(shape), jdtype)).compile().as_text()
    except Exception as e:  # noqa: BLE001 - a refusal is a result here
        return None, f"refused: {str(e).splitlines()[0][:80]}"
    total, steps = 0.0, []
    for line in hlo.splitlines():
        m = re.search(r" = (.*?) (all-gather|all-to-all|reduce-scatter|all-reduce|"
                      r"collective-permute)(?:-start)?\(", line)
        if not m:
            continue
        kind = _KIND[m.group(2)]
        if kind == "permute":
            pairs = re.findall(r"\{(\d+),(\d+)\}", line[line.index("source_target_pairs"):])
            p = 2 if any(a != b for a, b in pairs) else 1
        else:
            p = len(_groups(line, n)[0])
        c = cost(kind, p, _INPUT_BYTES[kind](_result_bytes(m.group(1)), p))
        total += c
        steps.append(f"{kind}(p={p})")
    return total, steps


# --------------------------------------------------------------------------
# DTensor
# --------------------------------------------------------------------------

_DTENSOR = {}


def dtensor_plan(axes, shape_text, src, dst):
    """(cost, steps) of DTensor's greedy redistribute, or (None, why)."""
    import torch
    import torch.distributed as dist
    if not _DTENSOR:
        from torch.testing._internal.distributed.fake_pg import FakeStore
        dist.init_process_group("fake", rank=0, world_size=32, store=FakeStore())
        _DTENSOR["ready"] = True
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor import _redistribute as R
    from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta

    shape, dtype = parse_shape(shape_text)
    names = [a for a, _ in axes]
    sizes = dict(axes)

    def placements(dims, partial):
        out = []
        for axis in names:
            where = [d for d, ax in enumerate(dims) if axis in ax]
            out.append(Shard(where[0]) if where else Partial() if axis in partial else Replicate())
        # DTensor orders a dim's axes by mesh order only.
        for ax in dims:
            if ax != sorted(ax, key=names.index):
                return None
        return tuple(out)
    sp, dp = placements(*parse_layout(src)), placements(*parse_layout(dst))
    if sp is None or dp is None:
        return None, "a dim's axes out of mesh order"
    # A dim split unevenly by several axes is chunked axis by axis in
    # DTensor (torch.chunk of the chunk), which is not dist's one block per
    # device of ceil(N / P): not the same layout.
    for dims in (parse_layout(src)[0], parse_layout(dst)[0]):
        for extent, ax in zip(shape, dims):
            if len(ax) > 1 and extent % math.prod(sizes[a] for a in ax):
                return None, "nested uneven shards"
    mesh = DeviceMesh("cpu", torch.arange(math.prod(sizes.values())).reshape(
        [s for _, s in axes]), mesh_dim_names=tuple(names))
    stride = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    meta = TensorMeta(torch.Size(shape), tuple(stride), torch.float32)
    infos = R._gen_transform_infos(DTensorSpec(mesh, sp, tensor_meta=meta),
                                   DTensorSpec(mesh, dp, tensor_meta=meta))

    def short(pl):
        return f"S{pl.dim}" if isinstance(pl, Shard) else "P" if isinstance(pl, Partial) else "R"
    steps = [(info.mesh_dim, short(info.src_dst_placements[0]),
              short(info.src_dst_placements[1])) for info in infos]
    return price_dtensor_steps(axes, shape, dtype, [short(pl) for pl in sp], steps)


# DTensor's step, by its placements before and after on one mesh dim.
_DTENSOR_KIND = {("S", "R"): "all_gather", ("S", "S"): "all_to_all",
                 ("P", "R"): "all_reduce", ("P", "S"): "reduce_scatter"}


def price_dtensor_steps(axes, shape, dtype, placements, steps):
    """(cost, names) of DTensor's steps: (mesh dim, before, after), each
    placement "S<d>", "R" or "P"; the placements start at `placements`."""
    names = [a for a, _ in axes]
    sizes = dict(axes)
    current = list(placements)
    total, out = 0.0, []
    for i, before, after in steps:
        dims = [[] for _ in shape]
        for k, pl in enumerate(current):
            if pl.startswith("S"):
                dims[int(pl[1:])].append(names[k])
        n = local_bytes(shape, dims, sizes, dtype)
        kind = _DTENSOR_KIND.get((before[0], after[0]), "local")
        total += cost(kind, sizes[names[i]], n)
        out.append(f"{kind}({names[i]})")
        current[i] = after
    return total, out


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

def random_cases(count: int, seed: int):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        sizes = rng.choice(MESHES)
        axes = list(zip(AXES if len(sizes) <= 3 else AXES, sizes))
        rank = rng.choice([1, 2, 2, 3])
        extents = [rng.choice([256, 512, 1024, 2048, 4096, 1000, 6, 24, 96]) for _ in range(rank)]
        while math.prod(extents) > 1 << 24:
            extents[extents.index(max(extents))] //= 4
        layouts = []
        for _ in range(2):
            dims, partial = [[] for _ in extents], []
            for axis, _ in axes:
                r = rng.random()
                if r < 0.6:
                    dims[rng.randrange(rank)].append(axis)
                elif r < 0.7 and not layouts:
                    partial.append(axis)
            layouts.append(layout_text(dims, partial))
        if layouts[0] == layouts[1]:
            continue
        shape = "x".join(map(str, extents)) + "xf32"
        out.append((f"random {len(out) + 1}", axes, shape, layouts[0], layouts[1]))
    return out


def selfcheck(path: str) -> None:
    """Prices the checked-in samples (utils/bench/peers/testdata): HLO
    collective lines after `hlo N:` (N the device count) and DTensor step
    lists after `dtensor MESH SHAPE PLACEMENTS:`, one result line each."""
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("hlo "):
            head, _, text = line.partition(": ")
            n = int(head.split()[1])
            m = re.search(r" = (.*?) (all-gather|all-to-all|reduce-scatter|all-reduce|"
                          r"collective-permute)(?:-start)?\(", text)
            kind = _KIND[m.group(2)]
            if kind == "permute":
                pairs = re.findall(r"\{(\d+),(\d+)\}", text[text.index("source_target_pairs"):])
                p = 2 if any(a != b for a, b in pairs) else 1
                groups = [sorted({int(a) for a, _ in pairs})]
            else:
                groups = _groups(text, n)
                p = len(groups[0])
            nbytes = _INPUT_BYTES[kind](_result_bytes(m.group(1)), p)
            listed = " ".join(",".join(map(str, g)) for g in groups)
            print(f"{kind} groups {listed}: p={p} n={nbytes:g} cost={cost(kind, p, nbytes):.6e}")
        elif line.startswith("dtensor "):
            head, _, text = line.partition(": ")
            _, mesh, shape_text, placements = head.split()
            axes = [(a, int(s)) for a, s in (x.split("=") for x in mesh.split(","))]
            shape, dtype = parse_shape(shape_text)
            steps = [(int(i), b, a) for i, b, a in
                     (step.split(":") for step in text.split())]
            total, names = price_dtensor_steps(axes, shape, dtype, placements.split(","), steps)
            print(f"dtensor {' '.join(names)} cost={total:.6e}")


def fmt(seconds):
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--random", type=int, default=120)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", choices=["named", "random", "all", "smoke"], default="all")
    ap.add_argument("--json")
    ap.add_argument("--selfcheck", metavar="SAMPLES",
                    help="price the checked-in samples instead (no peers needed)")
    args = ap.parse_args()
    if args.selfcheck:
        return selfcheck(args.selfcheck)
    cases = (NAMED if args.cases in ("named", "all") else NAMED[:3] + NAMED[5:6]
             if args.cases == "smoke" else []) + \
        (random_cases(args.random, args.seed) if args.cases in ("random", "all") else [])
    rows, records = [], []
    for name, axes, shape, src, dst in cases:
        best = dist_plan(args.build, axes, shape, src, dst)
        coll = dist_plan(args.build, axes, shape, src, dst, "collective")
        if best is None:
            continue
        for plan in (best, coll):
            here = plan and priced_here(plan, axes)
            if here is not None and not math.isclose(here, plan["cost"], rel_tol=1e-6):
                sys.exit(f"plan_peers: this file's §3 prices {name} at {here}, "
                         f"dist-plan at {plan['cost']}: the copy drifted")
        xla, xla_steps = xla_plan(axes, shape, src, dst)
        dt, dt_steps = dtensor_plan(axes, shape, src, dst)
        record = {"name": name, "mesh": mesh_text(axes), "shape": shape, "from": src,
                  "to": dst, "dist": best["cost"], "dist_collective": coll and coll["cost"],
                  "xla": xla, "xla_steps": xla_steps, "dtensor": dt, "dtensor_steps": dt_steps}
        records.append(record)
        rows.append(record)
    print("| case | mesh | shape | from -> to | dist µs | dist collective µs | XLA µs | "
          "DTensor µs |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["name"].startswith("random") and args.cases == "all":
            continue
        xla = fmt(r["xla"]) if r["xla"] is not None else f"- ({r['xla_steps']})"
        dt = fmt(r["dtensor"]) if r["dtensor"] is not None else f"- ({r['dtensor_steps']})"
        print(f"| {r['name']} | `{r['mesh']}` | {r['shape']} | `{r['from']}` -> `{r['to']}` | "
              f"{fmt(r['dist'])} | {fmt(r['dist_collective'])} | {xla} | {dt} |")
    print()
    print(summary(records))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


def summary(records) -> str:
    lines = ["| peer | dist's moves | cases priced | dist cheaper | equal (1%) | dist dearer "
             "| geomean peer / dist | worst peer / dist |", "|---|---|---|---|---|---|---|---|"]
    for peer in ("xla", "dtensor"):
        for moves, key in (("all", "dist"), ("collective", "dist_collective")):
            ratios = [r[peer] / r[key] for r in records
                      if r[peer] is not None and r[key] and r[key] > 0 and r[peer] > 0]
            zero = sum(1 for r in records if r[peer] is not None and r[key] == 0 == r[peer])
            cheaper = sum(1 for x in ratios if x > 1.01)
            dearer = sum(1 for x in ratios if x < 0.99)
            equal = len(ratios) - cheaper - dearer + zero
            geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
            worst = min(ratios) if ratios else float("nan")
            lines.append(f"| {'XLA' if peer == 'xla' else 'DTensor'} | {moves} | "
                         f"{len(ratios) + zero} | {cheaper} | {equal} | {dearer} | "
                         f"{geo:.2f} | {worst:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""Delta debugging of a failing program.

minimize(prog, still_fails) greedily applies shrinking steps to the program
description, keeping each one after which `still_fails(candidate)` holds
(the runner's check that the same failure class, and for compiler errors
the same message, persists). The steps, coarse to fine:

  results   drop a result
  ops       cut chunks of ops (halves, quarters, ... single ops): each cut
            op's value is replaced by one of its operands of the same shape
            or by a new argument, then dead code goes
  op        simpler variants of one op (body subtrees, no index masks, a
            zero-fill init, an add combiner)
  mesh      no topology (the `device` feature), no `devices`, fewer axes,
            smaller axes
  layouts   no partial, no segments, one axis fewer, free intermediates
  dims      smaller extents (1, half, one less) for every free dim
"""

import math

from .program import Layout


def _bypass(prog, op):
    """Replace op's value with an operand of the same shape if it has one,
    else with a new argument; None when neither applies."""
    v = prog.values[op.result]
    for x in op.inputs():
        if prog.values[x].shape == v.shape:
            prog.replace_uses(op.result, x)
            return True
    layout = v.layout or Layout([[] for _ in v.shape])
    arg = prog.new_value(v.shape, Layout(layout.dims, layout.segments, layout.partial))
    prog.args.append(arg)
    prog.replace_uses(op.result, arg)
    return True


def cut_ops(prog, indices):
    p = prog.clone()
    ops = [p.ops[i] for i in indices]
    for op in ops:
        _bypass(p, op)
    p.dce()
    return p


def candidates_results(prog):
    for i in range(len(prog.results)):
        if len(prog.results) > 1:
            p = prog.clone()
            del p.results[i]
            p.dce()
            yield p


def candidates_ops(prog):
    n = len(prog.ops)
    sizes, size = [], n
    while size >= 1:
        sizes.append(size)
        size //= 2
    for size in sizes:
        for start in range(0, n, size):
            idx = list(range(start, min(n, start + size)))
            yield cut_ops(prog, idx)


def candidates_op_variants(prog):
    for i, op in enumerate(prog.ops):
        for variant in op.simpler(prog):
            p = prog.clone()
            p.ops[i] = variant
            p.dce()
            yield p


def _all_layouts(prog):
    """(owner, layout) for every layout in the program: ("value", vid) or
    ("result", k)."""
    out = []
    for vid, v in prog.values.items():
        if v.layout is not None:
            out.append((("value", vid), v.layout))
    for k, (_, lay) in enumerate(prog.results):
        out.append((("result", k), lay))
    return out


def _set_layout(prog, owner, layout):
    if owner[0] == "value":
        prog.values[owner[1]].layout = layout
    else:
        vid, _ = prog.results[owner[1]]
        prog.results[owner[1]] = (vid, layout)


def candidates_mesh(prog):
    mesh = prog.mesh
    if getattr(prog, "topology", None):
        p = prog.clone()
        p.topology = None
        yield p
    if mesh.devices:
        p = prog.clone()
        p.mesh.devices = None
        yield p
    if len(mesh.axes) > 1:
        for name, _ in mesh.axes:
            p = prog.clone()
            p.mesh.axes = [a for a in p.mesh.axes if a[0] != name]
            p.mesh.devices = None
            if getattr(p, "topology", None):
                p.topology["axes"].pop(name, None)
            for _, lay in _all_layouts(p):
                lay.drop_axis(name)
            yield p
    for i, (name, size) in enumerate(mesh.axes):
        for smaller in sorted({1, 2, size // 2}):
            if 1 <= smaller < size and (smaller > 1 or len(mesh.axes) > 1 or size > 2):
                p = prog.clone()
                p.mesh.axes[i] = (name, smaller)
                p.mesh.devices = None
                yield p


def candidates_layouts(prog):
    for owner, lay in _all_layouts(prog):
        if owner[0] == "value" and owner[1] not in prog.args:
            p = prog.clone()
            _set_layout(p, owner, None)
            yield p
        if lay.partial:
            p = prog.clone()
            _set_layout(p, owner, Layout(lay.dims, lay.segments, None))
            yield p
        if any(lay.segments):
            p = prog.clone()
            _set_layout(p, owner, Layout(lay.dims, None, lay.partial))
            yield p
        for axis in lay.axes():
            p = prog.clone()
            new = Layout(lay.dims, lay.segments, lay.partial)
            new.drop_axis(axis)
            _set_layout(p, owner, new)
            yield p


def candidates_dims(prog):
    live = set()
    for v in prog.values.values():
        for d in v.shape:
            live.update(prog.leaves(d))
    for op in prog.ops:
        for d in getattr(op, "loops", []):
            live.update(prog.leaves(d))
    for d in sorted(live):
        n = prog.dims[d]
        for smaller in sorted({1, n // 2, n - 1}):
            if 1 <= smaller < n:
                p = prog.clone()
                p.dims[d] = smaller
                yield p


STEPS = [("results", candidates_results), ("ops", candidates_ops),
         ("op", candidates_op_variants), ("mesh", candidates_mesh),
         ("layouts", candidates_layouts), ("dims", candidates_dims)]


def size_of(prog):
    """A rough measure of a program, for the log."""
    numel = sum(math.prod(prog.sizes(v)) for v in prog.values)
    return f"{len(prog.ops)} ops, {len(prog.args)} args, mesh {prog.mesh.size}, {numel} elements"


def minimize(prog, still_fails, budget=150, log=print):
    best = prog
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        for name, step in STEPS:
            restart = True
            while restart and tries < budget:
                restart = False
                for cand in step(best):
                    if tries >= budget:
                        break
                    tries += 1
                    try:
                        ok = still_fails(cand)
                    except Exception as e:  # an unusable candidate
                        log(f"minimize: {name}: candidate skipped ({type(e).__name__}: {e})")
                        ok = False
                    if ok:
                        best = cand
                        progress = restart = True
                        log(f"minimize: {name}: {size_of(best)}")
                        break
    log(f"minimize: done after {tries} runs: {size_of(best)}")
    return best

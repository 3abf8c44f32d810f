"""dist_mlir.solve_layouts: the layout solver dist-partition uses, from Python."""

from __future__ import annotations

import itertools
import json
import random

import pytest

import dist_mlir
from dist_mlir import NoPlanError, solve_layouts


def brute_force(problem):
    """The cheapest choice by enumeration (compute + table entries)."""
    nodes, edges = problem["nodes"], problem.get("edges", [])
    best = None
    for choice in itertools.product(*[range(len(n["work"])) for n in nodes]):
        time = sum(n.get("seconds", [0] * len(n["work"]))[s]
                   for n, s in zip(nodes, choice))
        for e in edges:
            columns = len(nodes[e["to"]]["work"])
            entry = e["table"][choice[e["from"]] * columns + choice[e["to"]]]
            time = float("inf") if entry is None else time + entry
        if best is None or time < best:
            best = time
    return best


def test_random_problems_are_solved_exactly() -> None:
    rng = random.Random(48)
    for _ in range(60):
        n = rng.randint(2, 5)
        sizes = [rng.randint(1, 3) for _ in range(n)]
        nodes = [{"work": [1] * s,
                  "seconds": [rng.randint(0, 9) * 1e-3 for _ in range(s)]}
                 for s in sizes]
        edges = []
        for to in range(1, n):
            frm = rng.randrange(to)
            edges.append({"from": frm, "to": to, "table": [
                rng.randint(0, 9) * 1e-3 for _ in range(sizes[frm] * sizes[to])]})
        problem = {"nodes": nodes, "edges": edges}
        answer = solve_layouts(problem)
        assert answer["optimal"]
        assert answer["time"] == pytest.approx(brute_force(problem), abs=1e-12)
        # The JSON text is taken as well.
        assert solve_layouts(json.dumps(problem))["choice"] == answer["choice"]


def test_greedy_and_budget() -> None:
    problem = {"nodes": [{"work": [1, 1], "seconds": [1, 3], "bytes": [100, 50]}]}
    assert solve_layouts(problem)["choice"] == [0]
    problem["options"] = {"memory_budget": 60}
    assert solve_layouts(problem)["choice"] == [1]
    # The greedy baseline takes the cheapest strategy, budget or not.
    problem["options"] = {"chooser": "greedy"}
    assert solve_layouts(problem)["choice"] == [0]
    problem["options"] = {"memory_budget": 10}
    with pytest.raises(NoPlanError, match="no choice of layouts fits 10 bytes"):
        solve_layouts(problem)


@pytest.mark.parametrize("problem, message", [
    ({}, '"nodes": must be a non-empty array'),
    ({"nodes": [{"work": [1]}], "edges": [{"from": 0, "to": 0, "table": [0]}]},
     "must go from a lower node to a higher one"),
    ({"nodes": [{"work": [1]}], "options": {"chooser": "fast"}},
     "'fast' is not one of optimal, greedy, keep-larger"),
    ("{", "not JSON"),
])
def test_bad_problems_name_their_fault(problem, message) -> None:
    with pytest.raises(ValueError, match=message):
        solve_layouts(problem)
    assert "solve_layouts" in dist_mlir.__all__

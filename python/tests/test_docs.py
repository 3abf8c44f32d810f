"""The examples in the docstrings run, and help(dist_mlir) teaches."""

from __future__ import annotations

import doctest
import pydoc

import pytest

import dist_mlir
from dist_mlir import layout, layouts, mesh, placement, planning


@pytest.mark.parametrize("module", [dist_mlir, mesh, layout, layouts,
                                    placement, planning])
def test_docstring_examples(module) -> None:
    failures, tried = doctest.testmod(
        module, extraglobs=vars(dist_mlir), optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0


def test_help_covers_the_api() -> None:
    text = pydoc.render_doc(dist_mlir, renderer=pydoc.plaintext)
    for name in dist_mlir.__all__:
        assert name in text, name
    for name in ("Mesh", "Layout", "plan", "compile", "run", "Shard"):
        assert getattr(dist_mlir, name).__doc__, name

"""Pictures of the tape."""

import shutil

import pytest

import tapeflow as tp


def test_to_dot():
    w = tp.randn(3, 2, requires_grad=True)
    x = tp.randn(4, 3)
    loss = (x @ w).tanh().sum()
    dot = tp.autograd.graph.to_dot(loss, params={"weight": w})
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    for name in ("SumBackward0", "TanhBackward0", "MmBackward0", "weight\\n(3, 2)", "result"):
        assert name in dot
    assert "saved" not in tp.autograd.graph.to_dot(loss, show_saved=False)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed")
def test_render(tmp_path):
    pytest.importorskip("graphviz")
    x = tp.ones(2, requires_grad=True)
    out = tp.autograd.graph.render((x * 2).sum(), str(tmp_path / "tape"))
    assert open(out).read().lstrip().startswith("<?xml")

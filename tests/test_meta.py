"""The meta device: tensors with a shape and a dtype but no data, as PyTorch's `device="meta"`."""

from __future__ import annotations

import copy

import pytest

import tapeflow as tp

try:
    import torch
except ImportError:  # the oracle test skips
    torch = None


def test_meta_tensors_have_shapes_and_no_data():
    m = tp.empty(2, 3, device="meta")
    assert m.is_meta and m.device == tp.device("meta") and m.shape == (2, 3)
    assert repr(m) == "tensor(..., device='meta', size=(2, 3))"
    y = (m @ m.T + 1).relu().sum(0)
    assert y.is_meta and y.shape == (2,)
    assert tp.ones(3).to("meta").is_meta and not tp.ones(3).is_meta
    assert tp.zeros_like(m).is_meta and m.new_zeros(4).shape == (4,) and m.new_zeros(4).is_meta
    assert tp.ones_like(m, device="cpu").tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        m @ m


def test_a_module_skeleton_for_functional_call():
    model = tp.nn.Sequential(tp.nn.Linear(2, 4), tp.nn.ReLU(), tp.nn.Linear(4, 1))
    skeleton = copy.deepcopy(model).to("meta")
    assert all(p.is_meta for p in skeleton.parameters())
    x = tp.randn(5, 2)
    out = tp.func.functional_call(skeleton, dict(model.named_parameters()), (x,))
    tp.testing.assert_close(out, model(x))
    assert skeleton(tp.ones(1, 2, device="meta")).shape == (1, 1)


BAD = [
    lambda m: m.empty(2, 3, device="meta").numpy(),
    lambda m: m.empty(2, 3, device="meta").item(),
    lambda m: float(m.empty(2, 3, device="meta").sum()),
    lambda m: m.empty(2, 3, device="meta").tolist(),
    lambda m: m.empty(2, device="meta").to("cpu"),
    lambda m: m.ones(2, device="meta") + m.ones(2),
    lambda m: m.nn.Linear(2, 3).to("meta")(m.ones(1, 2)),
]


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("i", range(len(BAD)))
def test_reading_a_meta_tensor_fails_as_in_pytorch(i):
    def error(m):
        with pytest.raises(Exception) as info:
            BAD[i](m)
        return type(info.value), str(info.value)

    assert error(tp) == error(torch)

"""Pooling in 1-3 dimensions (MaxPool3d, AvgPool1d/3d, AdaptiveAvgPool1d/3d, AdaptiveMaxPool1d/2d) and
interpolate's area mode: outputs, indices and input gradients equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

CASES = {
    "MaxPool3d ceil dilation indices": (lambda lib: lib.nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                                                     dilation=(1, 1, 2), ceil_mode=True,
                                                                     return_indices=True), (2, 2, 4, 5, 6)),
    "AvgPool1d padding ceil no pad count": (lambda lib: lib.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True,
                                                                         count_include_pad=False), (2, 3, 8)),
    "AvgPool3d divisor": (lambda lib: lib.nn.AvgPool3d(2, stride=(2, 1, 2), divisor_override=3), (1, 2, 4, 3, 4)),
    "AdaptiveAvgPool1d": (lambda lib: lib.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    "AdaptiveAvgPool3d with None": (lambda lib: lib.nn.AdaptiveAvgPool3d((2, None, 3)), (2, 3, 5, 4, 7)),
    "AdaptiveMaxPool1d unbatched": (lambda lib: lib.nn.AdaptiveMaxPool1d(3), (3, 7)),
    "AdaptiveMaxPool2d": (lambda lib: lib.nn.AdaptiveMaxPool2d((2, 3)), (2, 3, 5, 7)),
    "interpolate area 2-d": (lambda lib: lambda x: lib.nn.functional.interpolate(x, scale_factor=0.5, mode="area"),
                             (2, 3, 6, 5)),
    "interpolate area 1-d": (lambda lib: lambda x: lib.nn.functional.interpolate(x, size=4, mode="area"), (2, 3, 7)),
}


def _run(lib, ctor, shape):
    x = lib.tensor(np.random.default_rng(0).normal(size=shape), requires_grad=True)
    out = ctor(lib)(x)
    y, extra = (out[0], [out[1].numpy()]) if isinstance(out, tuple) else (out, [])
    (y * lib.tensor(np.random.default_rng(1).normal(size=tuple(y.shape)))).sum().backward()
    return [y.detach().numpy(), x.grad.numpy(), *extra]


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_pytorch(name):
    ctor, shape = CASES[name]
    mine, theirs = _run(tp, ctor, shape), _run(torch, ctor, shape)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)


def test_bad_inputs():
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size"):
        tp.nn.functional.avg_pool1d(tp.ones(1, 1, 5), 2, padding=2)
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        tp.nn.functional.interpolate(tp.ones(1, 1, 4), size=2, mode="area", align_corners=True)

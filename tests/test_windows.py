"""Window functions, `asarray` and the top-level in-place functions against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_pytorch(name, n, periodic):
    mine, theirs = getattr(tp, name)(n, periodic), getattr(torch, name)(n, periodic)
    assert mine.dtype == tp.float32 and tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def test_window_parameters_dtypes_and_errors():
    np.testing.assert_allclose(tp.kaiser_window(6, True, 5.0).numpy(), torch.kaiser_window(6, True, 5.0).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(tp.hamming_window(5, False, 0.5, 0.5).numpy(),
                               torch.hamming_window(5, False, 0.5, 0.5).numpy(), rtol=1e-6, atol=1e-7)
    assert tp.hann_window(4, dtype=tp.float64).dtype == tp.float64
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
        tp.hann_window(4, dtype=tp.int64)


def test_asarray_and_inplace_functions():
    x = tp.ones(2)
    assert tp.asarray(x) is x and tp.asarray(x, copy=True) is not x
    assert tp.asarray([1, 2]).dtype == tp.int64 and tp.asarray([1.0, 2]).dtype == tp.float32
    y = tp.tensor([0.5, 2.0, -1.0])
    assert tp.clamp_(y, 0, 1) is y
    np.testing.assert_array_equal(y.numpy(), torch.clamp_(torch.tensor([0.5, 2.0, -1.0]), 0, 1).numpy())


def test_deprecated_upsampling_and_nllloss2d_names_match_pytorch():
    import warnings

    x = np.arange(4.0, dtype=np.float32).reshape(1, 1, 2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, kwargs in (("upsample_bilinear", {"scale_factor": 2}), ("upsample_nearest", {"size": 3}),
                             ("upsample", {"scale_factor": 2, "mode": "bilinear", "align_corners": False})):
            mine = getattr(tp.nn.functional, name)(tp.tensor(x), **kwargs)
            theirs = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs)
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
        loss = tp.nn.NLLLoss2d()
    assert any("upsample_bilinear` is deprecated" in str(w.message) for w in caught)
    assert any(w.category is FutureWarning and "NLLLoss2d" in str(w.message) for w in caught)
    assert float(loss(tp.tensor([[-1.0, -2.0]]), tp.tensor([1]))) == 2.0

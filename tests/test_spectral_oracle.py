"""`stft` / `istft` against PyTorch: values, gradients (through the frames, windows, padding and overlap-add),
shapes, and the refusals with PyTorch's messages."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

STFT = {
    "hann, hop 2": dict(n_fft=8, hop_length=2, window=8),
    "defaults": dict(n_fft=8),
    "short window, normalized": dict(n_fft=8, hop_length=3, win_length=6, window=6, normalized=True),
    "not centered": dict(n_fft=8, hop_length=4, center=False, window=8),
    "constant padding, real output": dict(n_fft=8, hop_length=4, pad_mode="constant", return_complex=False, window=8),
    "odd n_fft, two-sided": dict(n_fft=7, hop_length=2, onesided=False, window=7),
}
ISTFT = {
    "hann, hop 2": dict(n_fft=8, hop_length=2, window=8),
    "cut to a length": dict(n_fft=8, hop_length=2, window=8, length=30),
    "padded to a length, normalized": dict(n_fft=8, hop_length=4, window=8, normalized=True, length=45),
    "short window": dict(n_fft=8, hop_length=2, win_length=6, window=6),
    "two-sided, complex output": dict(n_fft=7, hop_length=2, window=7, onesided=False, return_complex=True),
}


def _window(L, length):
    return None if length is None else L.hann_window(length, dtype=L.float64)


def _weights(L, t):
    return L.tensor(np.cos(np.arange(t.numel()) * 0.7).reshape(tuple(t.shape)))


def _stft(L, x, case):
    kw = dict(case)
    kw.setdefault("return_complex", True)
    t = L.tensor(x, requires_grad=True)
    s = L.stft(t, window=_window(L, kw.pop("window", None)), **kw)
    s = L.view_as_real(s) if s.is_complex() else s
    (s * _weights(L, s)).sum().backward()
    return s.detach().numpy(), t.grad.numpy()


def _istft(L, x, case):
    kw = dict(case)
    w = _window(L, kw.pop("window", None))
    spec = {k: kw[k] for k in ("n_fft", "hop_length", "win_length", "normalized", "onesided") if k in kw}
    s = L.stft(L.tensor(x), window=w, return_complex=True, **spec).detach().requires_grad_()
    y = L.istft(s, window=w, **kw)
    y = L.view_as_real(y) if y.is_complex() else y
    (y * _weights(L, y)).sum().backward()
    return y.detach().numpy(), L.view_as_real(s.grad).numpy()


def _same_as_pytorchs(run, x, case):
    for mine, theirs in zip(run(tp, x, case), run(torch, x, case), strict=True):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", [(40,), (3, 33)])
@pytest.mark.parametrize("name", sorted(STFT))
def test_stft_values_and_gradients_are_pytorchs(name, shape):
    _same_as_pytorchs(_stft, np.random.default_rng(0).standard_normal(shape), STFT[name])


@pytest.mark.parametrize("shape", [(40,), (2, 36)])
@pytest.mark.parametrize("name", sorted(ISTFT))
def test_istft_values_and_gradients_are_pytorchs(name, shape):
    _same_as_pytorchs(_istft, np.random.default_rng(1).standard_normal(shape), ISTFT[name])


def test_round_trip_and_the_tensor_methods():
    x = tp.randn(2, 100)
    w = tp.hann_window(32)
    s = x.stft(32, 8, window=w, return_complex=True)
    assert s.shape == (2, 17, 13) and s.dtype == tp.complex64
    np.testing.assert_allclose(s.istft(32, 8, window=w, length=100).numpy(), x.numpy(), atol=1e-5)


REFUSALS = {
    "no return_complex for a real input": lambda L: L.stft(L.ones(20), 8),
    "n_fft longer than the signal": lambda L: L.stft(L.ones(5), 16, return_complex=True, center=False),
    "hop 0": lambda L: L.stft(L.ones(20), 8, hop_length=0, return_complex=True),
    "win_length past n_fft": lambda L: L.stft(L.ones(20), 8, win_length=9, return_complex=True),
    "window of the wrong size": lambda L: L.stft(L.ones(20), 8, window=L.ones(7), return_complex=True),
    "3-D input": lambda L: L.stft(L.ones(2, 2, 20), 8, return_complex=True),
    "align_to_window with center": lambda L: L.stft(L.ones(20), 8, return_complex=True, align_to_window=True),
    "istft of a real input": lambda L: L.istft(L.ones(5, 3), 8),
    "istft frequencies": lambda L: L.istft(L.ones(4, 3, dtype=L.complex64), 8),
    "istft window overlap-add vanishes": lambda L: L.istft(L.ones(5, 3, dtype=L.complex64), 8, hop_length=4,
                                                           window=L.zeros(8)),
    "istft hann without centering": lambda L: L.istft(L.ones(5, 17, dtype=L.complex128), 8, hop_length=2,
                                                      window=L.hann_window(8, dtype=L.float64), center=False),
}


def _refusal(L, f):
    with pytest.raises(Exception) as info:
        f(L)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_are_pytorchs(name):
    assert _refusal(tp, REFUSALS[name]) == _refusal(torch, REFUSALS[name])

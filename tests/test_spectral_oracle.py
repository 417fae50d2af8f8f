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


def _spectral_loss(x, window):
    s = tp.stft(x, 16, hop_length=4, window=window, return_complex=True)
    y = tp.istft(s * 0.5, 16, hop_length=4, window=window, length=x.shape[-1])
    return (s.abs() ** 2).sum() + (y ** 2).sum()


def test_every_path_gives_the_tapes_numbers():
    """stft + istft on the tape, under tp.compile, jax.jit(jax.grad(to_jax)), tp.func.grad and forward mode."""
    import jax
    import jax.numpy as jnp

    import tapeflow.autograd.forward_ad as fwAD

    x_np = np.random.default_rng(3).standard_normal((2, 64))
    window = tp.hann_window(16, dtype=tp.float64)
    loss = lambda x: _spectral_loss(x, window)  # noqa: E731
    x = tp.tensor(x_np, requires_grad=True)
    value = loss(x)
    value.backward()
    grad = x.grad.numpy()
    compiled = tp.compile(loss, fullgraph=True)
    for _ in range(2):  # (the first call traces, the second runs the program)
        xc = tp.tensor(x_np, requires_grad=True)
        vc = compiled(xc)
        vc.backward()
        np.testing.assert_allclose(vc.item(), value.item(), rtol=1e-12)
        np.testing.assert_allclose(xc.grad.numpy(), grad, rtol=1e-10, atol=1e-10)
    vj, gj = jax.jit(jax.value_and_grad(tp.interop.to_jax(loss)))(jnp.asarray(x_np))
    np.testing.assert_allclose(float(vj), value.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gj), grad, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(tp.func.grad(loss)(tp.tensor(x_np)).numpy(), grad, rtol=1e-10, atol=1e-10)
    v = np.random.default_rng(4).standard_normal(x_np.shape)
    _, jvp = tp.func.jvp(loss, (tp.tensor(x_np),), (tp.tensor(v),))
    np.testing.assert_allclose(jvp.item(), (grad * v).sum(), rtol=1e-10)
    with fwAD.dual_level():
        out = loss(fwAD.make_dual(tp.tensor(x_np), tp.tensor(v)))
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.item(), (grad * v).sum(), rtol=1e-10)


def test_istft_window_check_is_staged_under_checked():
    """A window whose overlap-add has gaps: PyTorch's NOLA error eagerly and from a checked program."""
    spec = tp.stft(tp.randn(64), 16, hop_length=4, window=tp.ones(16), return_complex=True)

    def inverse(s, window):
        return tp.istft(s, 16, hop_length=4, window=window)

    bad = tp.zeros(16)
    with pytest.raises(RuntimeError) as eager:
        inverse(spec, bad)
    assert "window overlap add min" in str(eager.value)
    with pytest.raises(RuntimeError) as staged:
        tp.interop.checked(inverse)(spec, bad)
    assert str(staged.value) == str(eager.value)
    np.testing.assert_allclose(tp.interop.checked(inverse)(spec, tp.ones(16)).numpy(),
                               inverse(spec, tp.ones(16)).numpy(), rtol=1e-6, atol=1e-6)

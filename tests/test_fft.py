"""`tp.fft` against `torch.fft`: values, dtypes, shapes, gradients (real and complex inputs, PyTorch's conjugate
convention), node names, errors; the same gradients through `tp.func`; gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

_rng = np.random.default_rng(0)
REAL = _rng.standard_normal((4, 6))
CPLX = _rng.standard_normal((4, 6)) + 1j * _rng.standard_normal((4, 6))

CASES = {
    "fft": (lambda L, x: L.fft.fft(x), REAL),
    "fft complex": (lambda L, x: L.fft.fft(x), CPLX),
    "ifft padded ortho": (lambda L, x: L.fft.ifft(x, n=8, norm="ortho"), REAL),
    "ifft complex dim0": (lambda L, x: L.fft.ifft(x, dim=0), CPLX),
    "rfft trimmed": (lambda L, x: L.fft.rfft(x, n=5), REAL),
    "irfft": (lambda L, x: L.fft.irfft(x), CPLX),
    "irfft n forward": (lambda L, x: L.fft.irfft(x, n=7, norm="forward"), CPLX),
    "irfft of a real tensor": (lambda L, x: L.fft.irfft(x), REAL),
    "fft2": (lambda L, x: L.fft.fft2(x), REAL),
    "ifft2 complex s": (lambda L, x: L.fft.ifft2(x, s=(3, 8)), CPLX),
    "fftn dim": (lambda L, x: L.fft.fftn(x, dim=(0,)), CPLX),
    "fftn all, s": (lambda L, x: L.fft.fftn(x, s=(5, 5)), REAL),
    "rfft2": (lambda L, x: L.fft.rfft2(x), REAL),
    "irfft2 s": (lambda L, x: L.fft.irfft2(x, s=(4, 6)), CPLX),
    "rfftn ortho": (lambda L, x: L.fft.rfftn(x, norm="ortho"), REAL),
    "irfftn": (lambda L, x: L.fft.irfftn(x), CPLX),
    "hfft": (lambda L, x: L.fft.hfft(x), CPLX),
    "hfft n ortho": (lambda L, x: L.fft.hfft(x, n=9, norm="ortho"), CPLX),
    "ihfft": (lambda L, x: L.fft.ihfft(x), REAL),
    "ihfft forward": (lambda L, x: L.fft.ihfft(x, norm="forward"), REAL),
    "fftshift": (lambda L, x: L.fft.fftshift(x), REAL),
    "ifftshift dim": (lambda L, x: L.fft.ifftshift(x, dim=1), CPLX),
    "power spectrum": (lambda L, x: L.fft.rfft(x).abs() ** 2, REAL),
}


def _np(t):
    t = t.detach()
    return (t.resolve_conj() if hasattr(t, "resolve_conj") else t).numpy()


def _run(L, name):
    fn, data = CASES[name]
    x = L.tensor(data, requires_grad=True)
    y = fn(L, x)
    r = np.random.default_rng(1)
    w = r.standard_normal(tuple(y.shape)) + (1j * r.standard_normal(tuple(y.shape)) if y.is_complex() else 0)
    loss = (y * L.tensor(w)).real.sum() if y.is_complex() else (y * L.tensor(np.real(w))).sum()
    loss.backward()
    return y, x.grad


@pytest.mark.parametrize("name", list(CASES))
def test_fft_matches_pytorch(name):
    (y, g), (ty, tg) = _run(tp, name), _run(torch, name)
    assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(_np(y), _np(ty), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(g), _np(tg), rtol=1e-10, atol=1e-12)
    assert y.grad_fn.name() == ty.grad_fn.name()


def test_float32_gives_complex64_and_integers_are_transformed_as_floats():
    for L in (tp, torch):
        assert str(L.fft.fft(L.ones(3)).dtype).endswith("complex64")
        assert str(L.fft.fft(L.arange(4)).dtype).endswith("complex64")
        assert str(L.fft.rfft(L.ones(4, dtype=L.float64)).dtype).endswith("complex128")
        assert str(L.fft.irfft(L.ones(3, dtype=L.complex64)).dtype).endswith("float32")
    np.testing.assert_allclose(tp.fft.fftfreq(5, 0.5).numpy(), torch.fft.fftfreq(5, 0.5).numpy())
    np.testing.assert_allclose(tp.fft.rfftfreq(6).numpy(), torch.fft.rfftfreq(6).numpy())


@pytest.mark.parametrize("call", [lambda L: L.fft.fft(L.ones(4), norm="xx"), lambda L: L.fft.fft(L.ones(4), n=0),
                                  lambda L: L.fft.rfft(L.ones(4, dtype=L.complex64)),
                                  lambda L: L.fft.fft(L.ones(2, 3), dim=3),
                                  lambda L: L.fft.fftn(L.ones(2, 3), s=(2,), dim=(0, 1))])
def test_fft_errors_match_pytorch(call):
    errors = []
    for L in (tp, torch):
        with pytest.raises((RuntimeError, IndexError)) as e:
            call(L)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_fft_gradients_agree_across_paths():
    """The tape, `tp.func.grad` and gradcheck give the same (PyTorch's) gradient of a spectral loss."""
    x0 = _rng.standard_normal(8)

    def loss(x):
        return (tp.fft.rfft(x).abs() ** 2 * tp.arange(5.0, dtype=tp.float64)).sum()

    x = tp.tensor(x0, requires_grad=True)
    loss(x).backward()
    functional = tp.func.grad(loss)(tp.tensor(x0))
    np.testing.assert_allclose(functional.numpy(), x.grad.numpy(), rtol=1e-12)
    tx = torch.tensor(x0, requires_grad=True)
    (torch.fft.rfft(tx).abs() ** 2 * torch.arange(5.0, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    assert tp.autograd.gradcheck(lambda z: tp.fft.fft(z).real, (tp.tensor(x0, requires_grad=True),))
    assert tp.autograd.gradcheck(lambda z: tp.fft.irfft(z),
                                 (tp.tensor(_rng.standard_normal(5) + 1j * _rng.standard_normal(5), requires_grad=True),))

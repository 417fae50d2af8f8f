"""Discrete Fourier transforms under PyTorch's `torch.fft` names and signatures, differentiable.

`fft`, `ifft`, `fft2`, `ifft2`, `fftn`, `ifftn` (complex spectra), `rfft`, `irfft`, `rfft2`, `irfft2`,
`rfftn`, `irfftn` (real signals, one-sided spectra), `hfft`, `ihfft` (Hermitian signals), the sample
frequencies `fftfreq`, `rfftfreq` and `fftshift`, `ifftshift`. `n` / `s` zero-pad or trim the signal along
`dim` first; `norm` is "backward" (the default: the inverse divides by n), "ortho" or "forward". Integer
inputs are transformed as the default float dtype; float32 gives complex64 and float64 complex128. The
gradients follow PyTorch's (the conjugate Wirtinger convention for complex tensors).

Example:
    >>> import tapeflow as tp
    >>> tp.fft.fft(tp.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    >>> tp.fft.irfft(tp.fft.rfft(tp.tensor([1.0, 2.0, 3.0, 4.0])))
    tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

import numpy as np

import xla_ops as X

from . import _dtype
from ._dispatch import dispatch
from ._ops import roll
from ._ops._args import _dim, _to_float
from ._tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm) -> str:
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm]


def _plan(input: Tensor, s, dim) -> tuple:
    """`(sizes or None, axes)`: `dim` normalised (all dimensions, or the last `len(s)`, when None) and `s`
    checked."""
    if isinstance(s, int):
        s = (s,)
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = tuple(range(input.ndim)) if s is None else tuple(range(input.ndim - len(s), input.ndim))
    axes = tuple(_dim(d, input.ndim) for d in dim)
    if len(set(axes)) != len(axes):
        raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = tuple(int(input.shape[a]) if n == -1 else int(n) for n, a in zip(s, axes))
        for n in s:
            if n <= 0:
                raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return s, axes


def _as_float_or_complex(input: Tensor) -> Tensor:
    return input if input.dtype.is_complex else _to_float(input)


def _transform(input: Tensor, s, dim, norm, forward: bool) -> Tensor:
    norm = _norm(norm)
    s, axes = _plan(input, s, dim)
    x = _as_float_or_complex(input)
    if x.dtype.is_complex:
        return dispatch(X.fft.fft_c2c, (x,), (("s", s), ("axes", axes), ("norm", norm), ("forward", forward)))
    if not forward:  # (the inverse of a real signal: the conjugate of its forward transform, as PyTorch)
        return _real_full(x, s, axes, _DUAL[norm]).conj()
    return _real_full(x, s, axes, norm)


def _real_full(x: Tensor, s, axes, norm) -> Tensor:
    """The full spectrum of a real signal, as PyTorch computes it: real-to-complex along the last of `axes`,
    then complex along the others."""
    y = dispatch(X.fft.fft_r2c, (x,), (("s", None if s is None else s[-1:]), ("axes", axes[-1:]), ("norm", norm),
                                        ("onesided", False), ("forward", True)))
    if len(axes) == 1:
        return y
    return dispatch(X.fft.fft_c2c, (y,), (("s", None if s is None else s[:-1]), ("axes", axes[:-1]), ("norm", norm),
                                          ("forward", True)))


def _real_forward(name: str, input: Tensor, s, dim, norm) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype.SCALAR_NAMES[input.dtype.name]}")
    norm = _norm(norm)
    s, axes = _plan(input, s, dim)
    return dispatch(X.fft.fft_r2c, (_to_float(input),), (("s", s), ("axes", axes), ("norm", norm),
                                                          ("onesided", True), ("forward", True)))


def _real_inverse(input: Tensor, s, dim, norm) -> Tensor:
    norm = _norm(norm)
    s, axes = _plan(input, s, dim)
    x = _as_float_or_complex(input)
    if not x.dtype.is_complex:
        x = x.to(_dtype.complex128 if x.dtype is _dtype.float64 else _dtype.complex64)
    last = axes[-1]
    sizes = tuple(int(x.shape[a]) for a in axes[:-1]) if s is None else s[:-1]
    n = 2 * (int(x.shape[last]) - 1) if s is None else s[-1]
    if n <= 0:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dispatch(X.fft.fft_c2r, (x,), (("s", (*sizes, n)), ("axes", axes), ("norm", norm)))


def fft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The one-dimensional discrete Fourier transform along `dim` (complex output)."""
    return _transform(input, None if n is None else (n,), (dim,), norm, True)


def ifft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of `fft`."""
    return _transform(input, None if n is None else (n,), (dim,), norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The two-dimensional transform over `dim` (the last two dimensions by default)."""
    return _transform(input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The inverse of `fft2`."""
    return _transform(input, s, dim, norm, False)


def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The transform over `dim` (every dimension by default, or the last `len(s)`)."""
    return _transform(input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of `fftn`."""
    return _transform(input, s, dim, norm, False)


def rfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The transform of a real signal along `dim`: the `n // 2 + 1` non-negative frequencies."""
    return _real_forward("rfft", input, None if n is None else (n,), (dim,), norm)


def irfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of `rfft`: a real signal of length `n` (by default `2 * (m - 1)` for `m` frequencies)."""
    return _real_inverse(input, None if n is None else (n,), (dim,), norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """`rfftn` over two dimensions."""
    return _real_forward("rfftn", input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """The inverse of `rfft2`."""
    return _real_inverse(input, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The transform of a real signal over `dim`, one-sided along the last of them."""
    return _real_forward("rfftn", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of `rfftn`."""
    return _real_inverse(input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The transform of a signal with a Hermitian-symmetric half given (a real spectrum of length `n`)."""
    return _real_inverse(input.conj() if input.dtype.is_complex else input, None if n is None else (n,), (dim,),
                         _DUAL[_norm(norm)])


def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of `hfft`: the half-spectrum of a real signal, conjugated."""
    return _real_forward("ihfft", input, None if n is None else (n,), (dim,), _DUAL[_norm(norm)]).conj()


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of an `n`-point transform with sample spacing `d` (`[0, 1, ..., -1] / (d * n)`)."""
    return _freq(np.fft.fftfreq(int(n), d), dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The non-negative sample frequencies of an `n`-point real transform."""
    return _freq(np.fft.rfftfreq(int(n), d), dtype, device, requires_grad)


def _freq(values, dtype, device, requires_grad) -> Tensor:
    from ._factories import tensor

    return tensor(values, dtype=dtype if dtype is not None else _dtype.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def fftshift(input, dim=None) -> Tensor:
    """The zero frequency moved to the middle of `dim` (every dimension by default)."""
    dims = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return roll(input, tuple(int(input.shape[d]) // 2 for d in dims), dims)


def ifftshift(input, dim=None) -> Tensor:
    """The inverse of `fftshift`."""
    dims = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return roll(input, tuple(-(int(input.shape[d]) // 2) for d in dims), dims)


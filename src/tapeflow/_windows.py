"""Window functions for spectral analysis under PyTorch's names (`hann_window`, `hamming_window`,
`blackman_window`, `bartlett_window`, `kaiser_window`), and `asarray`.

A periodic window (the default) of length N is the symmetric window of length N + 1 without its last
sample, as PyTorch (and `scipy.signal.get_window`) define it.
"""

from __future__ import annotations

import numpy as np

from . import _dtype
from ._tensor import Tensor

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "asarray"]


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad, shape) -> Tensor:
    from ._factories import tensor

    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = dtype if dtype is not None else _dtype.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        values = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        values = shape(np.arange(n, dtype=np.float64), n)[:window_length]
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """`0.5 - 0.5 cos(2 pi n / (N - 1))`.

    Example:
        >>> import tapeflow as tp
        >>> tp.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.5 - 0.5 * np.cos(2 * np.pi * k / (n - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """`alpha - beta cos(2 pi n / (N - 1))`.

    Example:
        >>> import tapeflow as tp
        >>> tp.hamming_window(4)
        tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: alpha - beta * np.cos(2 * np.pi * k / (n - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """`0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))`.

    Example:
        >>> import tapeflow as tp
        >>> tp.blackman_window(3, periodic=False)[1]
        tensor(1.)
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.42 - 0.5 * np.cos(2 * np.pi * k / (n - 1)) + 0.08 * np.cos(4 * np.pi * k / (n - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window `1 - |2 n / (N - 1) - 1|`.

    Example:
        >>> import tapeflow as tp
        >>> tp.bartlett_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """`I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.kaiser_window(3, periodic=False)[1]
        tensor(1.)
    """
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (n - 1) - 1) ** 2, 0, None))) / np.i0(beta))


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """`obj` as a tensor: the tensor itself when it already has that dtype (and `copy` is not True), else a
    new one (with `requires_grad`, a new leaf).

    Example:
        >>> import tapeflow as tp
        >>> tp.asarray([1, 2]).dtype
        tapeflow.int64
    """
    from ._factories import tensor

    if isinstance(obj, Tensor):
        if copy:
            out = obj.clone()
        elif copy is False and dtype is not None and obj.dtype != _dtype.to_dtype(dtype):
            raise ValueError("can't alias tensor from a different dtype without copying (copy=False)")
        else:
            out = obj
        out = out if dtype is None else out.to(dtype)
        return out.requires_grad_(True) if requires_grad and not out.requires_grad else out
    return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)

"""Utilities of `tapeflow.nn.functional`: one-hot, padding, normalisation."""

from __future__ import annotations

import jax.numpy as jnp

import xla_ops as X

from .. import _ops
from .._dispatch import dispatch
from .._ops._checks import index_bounds, staged_check, staging_checks
from .._tensor import Tensor

__all__ = ["one_hot", "pad", "normalize"]


def _tuple(v, n: int, name: str) -> tuple:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v}")
    return v


def _check(x, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}; convert with tapeflow.tensor(...)")


def one_hot(tensor, num_classes=-1) -> Tensor:
    """Integer class indices to one-hot rows (int64).

    Arguments:
        tensor: integer tensor.
        num_classes: `-1` infers `max + 1`.

    Returns:
        `(*tensor.shape, num_classes)` int64.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.one_hot(tp.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor._raw.dtype != jnp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1
    if staging_checks(tensor):  # under tp.interop.checked
        a = tensor._raw
        staged_check(jnp.all(a >= 0), lambda: RuntimeError("Class values must be non-negative."))
        staged_check(jnp.all(a < num_classes), lambda: RuntimeError("Class values must be smaller than num_classes."))
    b = index_bounds(tensor)
    if b is not None and b[0] < 0:
        raise RuntimeError("Class values must be non-negative.")
    if b is not None and b[1] >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return dispatch(X.nn.one_hot, (tensor,), (("num_classes", int(num_classes)),))


def pad(input, pad, mode="constant", value=None) -> Tensor:
    """Pad the last `len(pad) // 2` dimensions: `pad = (left, right, top, bottom, ...)`.

    Negative amounts crop. Modes: "constant", "reflect", "replicate", "circular".

    Arguments:
        input: any tensor.
        pad: even-length sequence of ints, last dimension first.
        mode: padding mode.
        value: fill value for "constant" (default 0).

    Returns:
        The padded tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.pad(tp.ones(2), (1, 2))
        tensor([0., 1., 1., 0., 0.])
    """
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
    if mode not in modes:
        raise NotImplementedError(f"padding mode {mode!r} is not one of {sorted(modes)}")
    if mode != "constant":
        _check_non_constant_pad(input, pad, mode)
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        if lo < 0 or hi < 0:
            length = input.shape[d] - max(-lo, 0) - max(-hi, 0)
            if length < 0:  # (PyTorch crops first, with narrow)
                raise RuntimeError("narrow(): length must be non-negative.")
            input = input.narrow(d, max(-lo, 0), length)
        widths[d] = (max(lo, 0), max(hi, 0))
    params = (("widths", tuple(widths)), ("mode", modes[mode]))
    if mode == "constant":
        params += (("value", 0.0 if value is None else value),)
    return dispatch(X.pad, (input,), params)


def _check_non_constant_pad(input, pad, mode) -> None:
    """PyTorch's limits on reflect / replicate / circular padding: which input ranks, and how wide."""
    k = len(pad) // 2
    if input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    shape = list(input.shape)
    for i in range(k):
        d = input.ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        if mode == "reflect" and (lo >= shape[d] or hi >= shape[d]):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input {shape}")
        if mode == "circular" and (lo > shape[d] or hi > shape[d]):
            raise RuntimeError("Padding value causes wrapping around more than once.")


def normalize(input, p=2.0, dim=1, eps=1e-12) -> Tensor:
    """`input / max(||input||_p, eps)` along `dim`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.normalize(tp.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    return input / _ops.norm(input, p, dim, keepdim=True).clamp_min(eps)

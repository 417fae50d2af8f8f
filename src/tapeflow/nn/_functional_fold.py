"""Sliding blocks of `tapeflow.nn.functional`: `unfold` (im2col), `fold` (col2im) and `local_response_norm`.

`unfold` is a grouped convolution with one-hot kernels (one output channel per channel and kernel cell, in
PyTorch's `(C, kh, kw)` order) and `fold`, its adjoint, the transposed convolution with the same kernels: each
one XLA op with the convolution's gradient, exact because every product is with 0 or 1.
"""

from __future__ import annotations

import numpy as np

from .._dtype import SCALAR_NAMES
from .._factories import tensor
from ._functional_utils import _check, _tuple

__all__ = ["unfold", "fold", "local_response_norm"]


def _one_hot_kernels(channels: int, k: tuple, dtype):
    eye = np.eye(k[0] * k[1]).reshape(k[0] * k[1], 1, *k)
    return tensor(np.tile(eye, (channels, 1, 1, 1)), dtype=dtype)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks: `(N, C, H, W)` -> `(N, C * kh * kw, L)`, L the number of block positions.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.unfold(tp.arange(16.0).reshape(1, 1, 4, 4), 2, stride=2)[0, :, 0]
        tensor([0., 1., 4., 5.])
    """
    from .functional import _convnd

    _check(input, "unfold")
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    k = _tuple(kernel_size, 2, "kernel_size")
    cols = _convnd(2, x, _one_hot_kernels(x.shape[1], k, x.dtype), None, stride, padding, dilation, x.shape[1],
                   kernels=False)
    cols = cols.reshape(x.shape[0], cols.shape[1], -1)
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding blocks back into an image: `(N, C * kh * kw, L)` -> `(N, C, H, W)` (the adjoint of `unfold`;
    overlapping cells add up).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.fold(tp.ones(1, 4, 4), (3, 3), 2).squeeze()
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """
    from .functional import _conv_transposend

    _check(input, "fold")
    if input.ndim not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.ndim}D)")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    size, k = _tuple(output_size, 2, "output_size"), _tuple(kernel_size, 2, "kernel_size")
    d, p, s = _tuple(dilation, 2, "dilation"), _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    if x.shape[1] % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={x.shape[1]} and kernel_size={k}")
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={x.shape[2]}.")
    if x._raw.dtype.kind in "iu":  # (PyTorch's col2im kernel has floating, complex and bool versions)
        raise NotImplementedError(f'"col2im_out_cpu" not implemented for \'{SCALAR_NAMES[x.dtype.name]}\'')
    channels = x.shape[1] // (k[0] * k[1])
    reached = [(blocks[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1 for i in range(2)]
    out = _conv_transposend(2, x.reshape(x.shape[0], x.shape[1], *blocks), _one_hot_kernels(channels, k, x.dtype),
                            None, s, p, tuple(size[i] - reached[i] for i in range(2)), channels, d, kernels=False)
    return out.squeeze(0) if unbatched else out


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """Normalise each channel by its neighbours: `x / (k + alpha * mean of x^2 over size channels) ** beta`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.local_response_norm(tp.ones(1, 3, 2), 2).shape
        tapeflow.Size([1, 3, 2])
    """
    from .functional import pad

    _check(input, "local_response_norm")
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = (input * input).movedim(1, -1)
    sq = pad(sq, (size // 2, (size - 1) // 2))  # the window is centred, its extra cell before
    C = input.shape[1]
    total = sq[..., 0:C]
    for i in range(1, size):
        total = total + sq[..., i:i + C]
    div = (total.movedim(-1, 1) / size * alpha + k) ** beta
    return input / div

"""Pooling functions of `tapeflow.nn.functional`: max (with indices), max-unpooling, average, adaptive average and
adaptive max, in 1, 2 and 3 dimensions.

The 1-d max-pooling forms run the 2-d op on a unit-height plane, as PyTorch does (so
their `grad_fn` is the final squeeze, `SqueezeBackward1`).
"""

from __future__ import annotations

import xla_ops as X

from .. import _dtype, _ops
from .._dispatch import dispatch
from .._tensor import Tensor
from ._functional_utils import _check, _tuple

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d"]


def _batched(input, n, name):
    _check(input, name)
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    if input.ndim != n + 2:
        raise RuntimeError(f"{name}: expected a {n + 1}D or {n + 2}D input, got shape {list(input.shape)}")
    return input, False


def _max_pool(x, k, s, p, dilation, ceil_mode, return_indices):
    """Max pooling of a batched `(N, C, H, W)` input with normalised 2-tuples."""
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p} and "
                           f"kernel_size={k}")
    params = (("kernel", k), ("stride", s), ("padding", p), ("dilation", dilation), ("ceil_mode", bool(ceil_mode)))
    if return_indices:
        # One op gives both; its backward is `max_pool`'s and the int64 indices record no graph.
        return dispatch(X.nn.max_pool_with_indices, (x,), params)
    return dispatch(X.nn.max_pool, (x,), params)


def _stride(stride, kernel, n):
    return kernel if stride is None or stride == [] else _tuple(stride, n, "stride")


def _unbatch(res, dim, unbatched):
    """Squeeze `dim` (and the batch dimension added for an unbatched input) off one tensor or a pair."""
    def f(t):
        t = t.squeeze(dim) if dim is not None else t
        return t.squeeze(0) if unbatched else t
    return tuple(f(t) for t in res) if isinstance(res, tuple) else f(res)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """1-d max pooling over `(N, C, L)`.

    Arguments:
        input: `(N, C, L)` or `(C, L)`.
        kernel_size, stride (default: kernel_size), padding, dilation, ceil_mode: as in PyTorch.
        return_indices: also return the int64 position of each maximum along `L`.

    Returns:
        The pooled tensor, or `(output, indices)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.max_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
        (tensor([[[3., 2.]]]), tensor([[[1, 2]]]))
    """
    x, unbatched = _batched(input, 1, "max_pool1d")
    k = _tuple(kernel_size, 1, "kernel_size")
    s = _stride(stride, k, 1)
    res = _max_pool(x.unsqueeze(-2), (1, *k), (1, *s), (0, *_tuple(padding, 1, "padding")),
                    (1, *_tuple(dilation, 1, "dilation")), ceil_mode, return_indices)
    return _unbatch(res, -2, unbatched)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """2-d max pooling.

    Arguments:
        input: `(N, C, H, W)` or `(C, H, W)`.
        kernel_size, stride (default: kernel_size), padding, dilation, ceil_mode: as in PyTorch.
        return_indices: also return, for each output, the int64 flat position `h * W + w` of its
            maximum in the input plane (what `max_unpool2d` takes). The indices need no gradient;
            the output's gradient is the same either way.

    Returns:
        The pooled tensor, or `(output, indices)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.max_pool2d(tp.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    x, unbatched = _batched(input, 2, "max_pool2d")
    k = _tuple(kernel_size, 2, "kernel_size")
    res = _max_pool(x, k, _stride(stride, k, 2), _tuple(padding, 2, "padding"), _tuple(dilation, 2, "dilation"),
                    ceil_mode, return_indices)
    return _unbatch(res, None, unbatched)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """3-d max pooling over `(N, C, D, H, W)`; arguments as `max_pool2d` (indices are flat over `D * H * W`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.max_pool3d(tp.ones(1, 2, 4, 4, 4), 2).shape
        tapeflow.Size([1, 2, 2, 2, 2])
    """
    x, unbatched = _batched(input, 3, "max_pool3d")
    k = _tuple(kernel_size, 3, "kernel_size")
    res = _max_pool(x, k, _stride(stride, k, 3), _tuple(padding, 3, "padding"), _tuple(dilation, 3, "dilation"),
                    ceil_mode, return_indices)
    return _unbatch(res, None, unbatched)


def _unpool_size(x, k, s, p, output_size, n):
    """The spatial output size: the inverse of pooling's size formula, or `output_size` within a stride of it."""
    default = [(x.shape[x.ndim - n + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n)]
    if output_size is None:
        return tuple(default)
    size = [int(v) for v in output_size]
    if len(size) == n + 2:
        size = size[2:]
    if len(size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                         f"length of '{len(size)}'")
    for i in range(n):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < size[i] < hi:
            raise ValueError(f'invalid output_size "{size}" (dim {i} must be between {lo} and {hi})')
    return tuple(size)


def _max_unpool(x, indices, size, name):
    if tuple(indices.shape) != tuple(x.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(x.shape)}) but "
                           f"got indices tensor with shape: {list(indices.shape)}")
    if indices.dtype != _dtype.int64:
        raise RuntimeError(f"{name}: elements in indices should be type int64 but got: {indices.dtype}; "
                           "pass the indices that max_pool returned (or call .long())")
    return dispatch(X.nn.max_unpool, (x, indices), (("output_size", size),))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of `max_pool1d`: each value goes back to the position its index names; zeros elsewhere.

    Arguments:
        input: `(N, C, L_in)` or `(C, L_in)`.
        indices: int64, as returned by `max_pool1d(..., return_indices=True)`.
        kernel_size, stride (default: kernel_size), padding: those of the pooling.
        output_size: the length to restore (pooling may have dropped a remainder).

    Returns:
        `(N, C, L_out)` with `L_out = (L_in - 1) * stride - 2 * padding + kernel_size` unless `output_size` is given.

    Example:
        >>> import tapeflow as tp
        >>> y, i = tp.nn.functional.max_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
        >>> tp.nn.functional.max_unpool1d(y, i, 2)
        tensor([[[0., 3., 2., 0.]]])
    """
    x, unbatched = _batched(input, 1, "max_unpool1d")
    k = _tuple(kernel_size, 1, "kernel_size")
    s = _stride(stride, k, 1)
    size = _unpool_size(x, k, s, _tuple(padding, 1, "padding"), output_size, 1)
    idx = indices.unsqueeze(0) if unbatched else indices
    out = _max_unpool(x.unsqueeze(-1), idx.unsqueeze(-1), (*size, 1), "max_unpool1d")
    return _unbatch(out, -1, unbatched)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of `max_pool2d`: each value goes to flat position `indices` of its output plane.

    Positions that no index names are zero. Indices outside the output plane are dropped
    (PyTorch raises; checking would cost a host sync).

    Arguments:
        input: `(N, C, H_in, W_in)` or `(C, H_in, W_in)`.
        indices: int64, as returned by `max_pool2d(..., return_indices=True)`.
        kernel_size, stride (default: kernel_size), padding: those of the pooling.
        output_size: `(H, W)` (or `(N, C, H, W)`) to restore; each within one stride of the default.

    Returns:
        `(N, C, H_out, W_out)` with `H_out = (H_in - 1) * stride - 2 * padding + kernel_size` by default.

    Example:
        >>> import tapeflow as tp
        >>> F = tp.nn.functional
        >>> y, i = F.max_pool2d(tp.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> F.max_unpool2d(y, i, 2)
        tensor([[[[ 0.,  0.,  0.,  0.],
                  [ 0.,  5.,  0.,  7.],
                  [ 0.,  0.,  0.,  0.],
                  [ 0., 13.,  0., 15.]]]])
    """
    x, unbatched = _batched(input, 2, "max_unpool2d")
    k = _tuple(kernel_size, 2, "kernel_size")
    s = _stride(stride, k, 2)
    size = _unpool_size(x, k, s, _tuple(padding, 2, "padding"), output_size, 2)
    out = _max_unpool(x, indices.unsqueeze(0) if unbatched else indices, size, "max_unpool2d")
    return _unbatch(out, None, unbatched)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """2-d average pooling.

    Arguments:
        input: `(N, C, H, W)` or `(C, H, W)`.
        kernel_size, stride (default: kernel_size), padding, ceil_mode, count_include_pad, divisor_override:
            as in PyTorch.

    Returns:
        The pooled tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.avg_pool2d(tp.ones(1, 1, 4, 4), 2).shape
        tapeflow.Size([1, 1, 2, 2])
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    """1-d average pooling over `(N, C, L)`; arguments as `avg_pool2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.avg_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[2., 1.]]])
    """
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """3-d average pooling over `(N, C, D, H, W)`; arguments as `avg_pool2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.avg_pool3d(tp.ones(1, 2, 4, 4, 4), 2).shape
        tapeflow.Size([1, 2, 2, 2, 2])
    """
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _avg_pool(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x, unbatched = _batched(input, n, f"avg_pool{n}d")
    k = _tuple(kernel_size, n, "kernel_size")
    s = _stride(stride, k, n)
    p = _tuple(padding, n, "padding")
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise RuntimeError(f"pad should be at most half of kernel size, but got pad={p} and kernel_size={k}")
    out = dispatch(X.nn.avg_pool, (x,), (("kernel", k), ("stride", s), ("padding", p), ("ceil_mode", bool(ceil_mode)),
                                         ("count_include_pad", bool(count_include_pad)),
                                         ("divisor_override", divisor_override)))
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """2-d average pooling to a fixed output size (bins as in PyTorch).

    Arguments:
        input: `(N, C, H, W)` or `(C, H, W)`.
        output_size: int or `(H_out, W_out)`; `None` keeps that size.

    Returns:
        `(N, C, H_out, W_out)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_avg_pool2d(tp.ones(2, 3, 5, 7), 1).shape
        tapeflow.Size([2, 3, 1, 1])
    """
    return _adaptive_avg_pool(2, input, output_size)


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """1-d adaptive average pooling to `output_size` positions.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_avg_pool1d(tp.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    return _adaptive_avg_pool(1, input, output_size)


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """3-d adaptive average pooling to `output_size` `(D, H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_avg_pool3d(tp.ones(1, 2, 5, 4, 3), 1).shape
        tapeflow.Size([1, 2, 1, 1, 1])
    """
    return _adaptive_avg_pool(3, input, output_size)


def _output_size(x, n, output_size) -> tuple:
    size = (output_size,) * n if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(size) != n:
        raise ValueError(f"adaptive pool: output_size must be an int or {n} values, got {output_size}")
    return tuple(x.shape[x.ndim - n + i] if v is None else int(v) for i, v in enumerate(size))


def _adaptive_avg_pool(n, input, output_size):
    x, unbatched = _batched(input, n, f"adaptive_avg_pool{n}d")
    out = dispatch(X.nn.adaptive_avg_pool, (x,), (("output_size", _output_size(x, n, output_size)),))
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool1d(input, output_size, return_indices: bool = False) -> Tensor:
    """1-d adaptive max pooling: the maximum of each of `output_size` bins (PyTorch's bin edges).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_max_pool1d(tp.tensor([[[1.0, 5.0, 3.0, 4.0, 2.0]]]), 2)
        tensor([[[5., 4.]]])
    """
    return _adaptive_max_pool(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False) -> Tensor:
    """2-d adaptive max pooling to `output_size` `(H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_max_pool2d(tp.arange(16.0).reshape(1, 1, 4, 4), 1)
        tensor([[[[15.]]]])
    """
    return _adaptive_max_pool(2, input, output_size, return_indices)


def _adaptive_max_pool(n, input, output_size, return_indices):
    if return_indices:
        raise NotImplementedError(f"adaptive_max_pool{n}d: return_indices=True is not supported yet")
    x, unbatched = _batched(input, n, f"adaptive_max_pool{n}d")
    # A maximum over a box is the maximum over each axis in turn: per axis, one max per bin.
    # NOTE: tied maxima share the gradient (amax's rule); PyTorch gives it to one of them.
    for axis, out in enumerate(_output_size(x, n, output_size)):
        dim, size = x.ndim - n + axis, x.shape[x.ndim - n + axis]
        bins = [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]
        x = _ops.cat([x.narrow(dim, lo, hi - lo).amax(dim, keepdim=True) for lo, hi in bins], dim)
    return x.squeeze(0) if unbatched else x

"""Pooling functions of `tapeflow.nn.functional`: max (with indices), max-unpooling, average, adaptive average,
adaptive max (with indices), power-average (`lp_pool*`) and fractional max, in 1, 2 and 3 dimensions.

The 1-d max-pooling forms run the 2-d op on a unit-height plane, as PyTorch does (so
their `grad_fn` is the final squeeze, `SqueezeBackward1`).
"""

from __future__ import annotations

import numpy as np

import xla_ops as X

from .. import _dtype, _factories, _ops
from .._dispatch import dispatch
from .._ops._checks import check_indices
from .._tensor import Tensor
from ._functional_utils import _check, _tuple

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d",
           "fractional_max_pool3d"]


def _batched(input, n, name):
    _check(input, name)
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    if input.ndim != n + 2:
        raise RuntimeError(_rank_message(name, n, input))
    return input, False


def _rank_message(name: str, n: int, input) -> str:
    """PyTorch's words for a pooling input of the wrong rank (they differ from kernel to kernel)."""
    shape = list(input.shape)
    if name.startswith("adaptive"):
        return f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got{':' if 'max' in name else ''} {shape}"
    if name == "max_pool1d":
        return f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{shape}"
    if name == "avg_pool1d":
        return (f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 'self' (while "
                "checking arguments for avg_pool1d)")
    return f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input"


def _pooled_size(x, k, s, p, dilation, ceil_mode, one_d: str = "") -> None:
    """Refuse a window that leaves no output (PyTorch's messages); `one_d` names a 1-d max pooling."""
    outs = []
    for size, kk, ss, pp, dd in zip(x.shape[2:], k, s, p, dilation):
        span = size + 2 * pp - dd * (kk - 1) - 1
        out = (-(-span // ss) if ceil_mode else span // ss) + 1
        if ceil_mode and (out - 1) * ss >= size + pp:
            out -= 1
        outs.append(out)
    if min(outs) > 0:
        return
    if one_d:
        raise RuntimeError(f"{one_d}() Invalid computed output size: {outs[-1]}")
    given = "x".join(map(str, x.shape[1:]))
    raise RuntimeError(f"Given input size: ({given}). Calculated output size: "
                       f"({'x'.join(map(str, (x.shape[1], *outs)))}). Output size is too small")


def _max_pool(x, k, s, p, dilation, ceil_mode, return_indices, one_d: str = ""):
    """Max pooling of a batched `(N, C, H, W)` input with normalised 2-tuples."""
    for pp, kk, dd in zip(p, k, dilation):
        if pp * 2 > kk:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    _pooled_size(x, k, s, p, dilation, ceil_mode, one_d)
    params = (("kernel", k), ("stride", s), ("padding", p), ("dilation", dilation), ("ceil_mode", bool(ceil_mode)))
    if return_indices:
        # One op gives both; its backward is `max_pool`'s and the int64 indices record no graph.
        return dispatch(X.nn.max_pool_with_indices, (x,), params)
    return dispatch(X.nn.max_pool, (x,), params)


def _stride(stride, kernel, n, one_d: str = ""):
    s = kernel if stride is None or stride == [] else _tuple(stride, n, "stride")
    if any(v == 0 for v in s):  # (a zero kernel size is a zero stride by default)
        if one_d == "max_pool1d" and not any(v == 0 for v in kernel):
            raise RuntimeError("max_pool1d() stride must be greater than zero, but got 0")
        raise RuntimeError("stride should not be zero")
    return s


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
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for \'{_dtype_name(input.dtype)}\'')
    x, unbatched = _batched(input, 1, "max_pool1d")
    k = _tuple(kernel_size, 1, "kernel_size")
    s = _stride(stride, k, 1, "max_pool1d")
    res = _max_pool(x.unsqueeze(-2), (1, *k), (1, *s), (0, *_tuple(padding, 1, "padding")),
                    (1, *_tuple(dilation, 1, "dilation")), ceil_mode, return_indices, "max_pool1d")
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
    check_indices(indices, int(np.prod(size)), lambda v: RuntimeError(
        f"Found an invalid max index: {v} (output volumes are of size {'x'.join(map(str, size))})"), negative=False)
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

    Positions that no index names are zero; an index outside the output plane raises (as in PyTorch).

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


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of `max_pool3d`: each value goes to flat position `indices` of its output volume.

    Arguments:
        input: `(N, C, D_in, H_in, W_in)` or `(C, D_in, H_in, W_in)`.
        indices: int64, as returned by `max_pool3d(..., return_indices=True)`.
        kernel_size, stride (default: kernel_size), padding: those of the pooling.
        output_size: `(D, H, W)` (or with `N, C` in front) to restore; each within one stride of the default.

    Returns:
        `(N, C, D_out, H_out, W_out)`, each size `(size_in - 1) * stride - 2 * padding + kernel_size` by default.

    Example:
        >>> import tapeflow as tp
        >>> F = tp.nn.functional
        >>> y, i = F.max_pool3d(tp.arange(8.).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> F.max_unpool3d(y, i, 2).flatten().tolist()
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """
    x, unbatched = _batched(input, 3, "max_unpool3d")
    k = _tuple(kernel_size, 3, "kernel_size")
    s = _stride(stride, k, 3)
    size = _unpool_size(x, k, s, _tuple(padding, 3, "padding"), output_size, 3)
    out = _max_unpool(x, indices.unsqueeze(0) if unbatched else indices, size, "max_unpool3d")
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
    _pooled_size(x.unsqueeze(2) if n == 1 else x, (1, *k) if n == 1 else k, (1, *s) if n == 1 else s,
                 (0, *p) if n == 1 else p, (1,) * (n + (n == 1)), ceil_mode)
    out = dispatch(X.nn.avg_pool, (x,), (("kernel", k), ("stride", s), ("padding", p), ("ceil_mode", bool(ceil_mode)),
                                         ("count_include_pad", bool(count_include_pad)),
                                         ("divisor_override", divisor_override)))
    if not (x.dtype.is_floating_point or x.dtype.is_complex):  # (PyTorch divides integers, truncating)
        out = out.trunc().to(x.dtype)
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
    _check_sizes_fit(input, output_size)
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
    _check_sizes_fit(input, output_size)
    return _adaptive_avg_pool(3, input, output_size)


def _check_sizes_fit(input, output_size) -> None:
    """PyTorch's first check of a 2-d/3-d adaptive pooling's sizes given as a sequence (its `None`s are read from
    the input's trailing dimensions, which must exist)."""
    if not isinstance(output_size, int) and output_size is not None and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _output_size(x, n, output_size) -> tuple:
    size = (output_size,) * n if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(size) != n:
        raise ValueError(f"adaptive pool: output_size must be an int or {n} values, got {output_size}")
    return tuple(x.shape[x.ndim - n + i] if v is None else int(v) for i, v in enumerate(size))


def _adaptive_avg_pool(n, input, output_size):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        name = f"adaptive_avg_pool{max(n, 2)}d"  # (PyTorch's 1-d pooling runs its 2-d kernel)
        raise NotImplementedError(f'"{name}" not implemented for \'{_dtype_name(input.dtype)}\'')
    x, unbatched = _batched(input, n, f"adaptive_avg_pool{n}d")
    out = dispatch(X.nn.adaptive_avg_pool, (x,), (("output_size", _output_size(x, n, output_size)),))
    return out.squeeze(0) if unbatched else out


def _window_max(x, cand, valid):
    """The maximum of each window of a batched `(N, C, *plane)` input, and its flat index in the plane.

    `cand` (int64, `(N or 1, C or 1, O, K)`) lists each of the `O` windows' `K` flat positions in PyTorch's scan
    order; `valid` (bool, broadcastable to it, or None) masks padding positions. The pick is PyTorch's: the last
    NaN of a window if it has one, else its first maximum (a window of all `-inf` picks its first position).
    The values are a `gather` at the picked indices, so the gradient goes to that one cell (added up where
    windows overlap), as in PyTorch.

    Returns:
        `(values, indices)`, both `(N, C, O)`.
    """
    n, c, plane = x.shape[0], x.shape[1], x.shape[2:]
    o, k = cand.shape[-2:]
    flat = x.reshape(n, c, int(np.prod(plane, dtype=np.int64)))
    cand = cand.expand(n, c, o, k)
    if o * k == 0:
        idx = cand.sum(-1)
        return flat.gather(2, idx), idx
    v = flat.detach().gather(2, cand.reshape(n, c, o * k)).reshape(n, c, o, k)
    pos = _factories.arange(k)
    inf = float("inf")
    nan = _ops.isnan(v)
    if valid is not None:
        nan = nan & valid
        v = _ops.where(valid, v, -inf)
    v = _ops.where(nan, -inf, v)
    top = v == v.amax(-1, keepdim=True)
    if valid is not None:
        top = top & valid
    first = _ops.where(top, pos, k).amin(-1)
    last_nan = _ops.where(nan, pos, -1).amax(-1)
    pick = _ops.where(last_nan >= 0, last_nan, first)
    idx = cand.gather(3, pick.unsqueeze(-1)).squeeze(-1)
    return flat.gather(2, idx), idx


def _plane_positions(positions, plane):
    """Flat positions from per-axis ones: `positions[a]` is `(..., out_a, K_a)`; the result `(..., O, K)` lists
    the windows in row-major order of their output cells and each window's cells in row-major (scan) order."""
    n = len(positions)
    strides = [int(np.prod(plane[a + 1:], dtype=np.int64)) for a in range(n)]
    total = 0
    for a, p in enumerate(positions):
        lead = p.shape[:-2]
        shape = [1] * (2 * n)
        shape[a], shape[n + a] = p.shape[-2], p.shape[-1]
        total = total + p.reshape(*lead, *shape) * strides[a]
    lead = tuple(total.shape[:-2 * n])
    dims = tuple(total.shape[-2 * n:])
    return total.reshape(*lead, int(np.prod(dims[:n], dtype=np.int64)), int(np.prod(dims[n:], dtype=np.int64)))


def _adaptive_max_checks(n, input, output_size):
    name = f"adaptive_max_pool{n}d"
    _check(input, name)
    if input.ndim not in (n + 1, n + 2):
        if n == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                               "'self' (while checking arguments for adaptive_max_pool1d)")
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    for d in range(input.ndim - n - 1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {d} being empty")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{_dtype_name(input.dtype)}\'')
    if not (isinstance(output_size, int) or output_size is None) and len(output_size) != n:
        if n == 1:
            raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one int "
                               f"(got {len(output_size)})")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")


def _dtype_name(dtype) -> str:
    names = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    key = str(dtype).rsplit(".", 1)[-1]
    return names.get(key, key)


def _adaptive_max_pool(n, input, output_size, return_indices):
    _adaptive_max_checks(n, input, output_size)
    x, unbatched = _batched(input, n, f"adaptive_max_pool{n}d")
    plane = tuple(x.shape[2:])
    out_size = _output_size(x, n, output_size)
    if any(o < 0 for o in out_size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out_size)}: "
                           f"{[*x.shape[:2], *out_size]}")
    # PyTorch's bins: [floor(i * size / out), ceil((i + 1) * size / out)); each window is padded to the
    # longest bin of its axis (positions past its end are masked off).
    positions, masks = [], []
    for size, out in zip(plane, out_size):
        start = np.array([(i * size) // out for i in range(out)], np.int64)
        end = np.array([-((-(i + 1) * size) // out) for i in range(out)], np.int64)
        k = int((end - start).max()) if out else 1
        pos = start[:, None] + np.arange(k)[None, :]
        masks.append(pos < end[:, None])
        positions.append(np.minimum(pos, size - 1))
    cand = _plane_positions([_factories.tensor(p) for p in positions], plane)
    valid = None
    if not all(m.all() for m in masks):
        valid = _factories.tensor(np.asarray(_masks_product(masks)))
    out, idx = _window_max(x, cand.reshape(1, 1, *cand.shape), valid)
    shape = (*x.shape[:2], *out_size)
    return _unbatch((out.reshape(shape), idx.reshape(shape)) if return_indices else out.reshape(shape), None,
                    unbatched)


def _masks_product(masks):
    """The `(O, K)` validity of each window cell: valid on every axis (the layout of `_plane_positions`)."""
    n = len(masks)
    total = np.ones((), bool)
    for a, m in enumerate(masks):
        shape = [1] * (2 * n)
        shape[a], shape[n + a] = m.shape
        total = total & m.reshape(shape)
    o = int(np.prod(total.shape[:n], dtype=np.int64))
    return total.reshape(o, -1)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """1-d adaptive max pooling: the maximum of each of `output_size` bins (PyTorch's bin edges).

    Arguments:
        input: `(N, C, L)` or `(C, L)`, floating point.
        output_size: the number of bins.
        return_indices: also return the int64 position of each maximum along `L` (what `max_unpool1d` takes).

    Returns:
        The pooled tensor, or `(output, indices)`. With ties the first maximum is picked (a NaN wins), and it
        alone gets the gradient, as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_max_pool1d(tp.tensor([[[1.0, 5.0, 3.0, 4.0, 2.0]]]), 2)
        tensor([[[5., 4.]]])
        >>> tp.nn.functional.adaptive_max_pool1d(tp.tensor([[[1.0, 5.0, 3.0, 4.0, 2.0]]]), 2, return_indices=True)
        (tensor([[[5., 4.]]]), tensor([[[1, 3]]]))
    """
    return _adaptive_max_pool(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-d adaptive max pooling to `output_size` `(H, W)` (an int for both; `None` keeps that size).

    With `return_indices=True` also returns the int64 flat position `h * W + w` of each maximum in its input
    plane (what `max_unpool2d` takes).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.adaptive_max_pool2d(tp.arange(16.0).reshape(1, 1, 4, 4), 1)
        tensor([[[[15.]]]])
        >>> tp.nn.functional.adaptive_max_pool2d(tp.arange(16.0).reshape(1, 4, 4), (1, 2), return_indices=True)
        (tensor([[[13., 15.]]]), tensor([[[13, 15]]]))
    """
    _check_sizes_fit(input, output_size)
    return _adaptive_max_pool(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-d adaptive max pooling to `output_size` `(D, H, W)` over `(N, C, D, H, W)` or `(C, D, H, W)`.

    With `return_indices=True` also returns the int64 flat position `(d * H + h) * W + w` of each maximum.

    Example:
        >>> import tapeflow as tp
        >>> y, i = tp.nn.functional.adaptive_max_pool3d(tp.arange(27.0).reshape(1, 1, 3, 3, 3), 1,
        ...                                             return_indices=True)
        >>> y, i
        (tensor([[[[[26.]]]]]), tensor([[[[[26]]]]]))
    """
    _check_sizes_fit(input, output_size)
    return _adaptive_max_pool(3, input, output_size, return_indices)


def _lp_pool(n, input, norm_type, kernel_size, stride, ceil_mode):
    max_pool, avg_pool = ((max_pool1d, avg_pool1d), (max_pool2d, avg_pool2d), (max_pool3d, avg_pool3d))[n - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    size = int(np.prod(_tuple(kernel_size, n, "kernel_size")))
    return (out.sign() * out.abs().relu()).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """1-d power-average pooling: `(sum over the window of x ** p) ** (1 / p)`, as PyTorch computes it.

    That is `avg_pool1d(x ** p)` times the window size, with negative sums clamped to zero (`sign(s) * relu(|s|)`),
    to the power `1 / p`; `p = inf` is max pooling of `|x|` (and `-inf` the minimum).

    Arguments:
        input: `(N, C, L)` or `(C, L)`.
        norm_type: `p`.
        kernel_size, stride (default: kernel_size), ceil_mode: as in `avg_pool1d` (no padding).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.lp_pool1d(tp.tensor([[[3.0, 4.0, 1.0, 0.0]]]), 2, 2)
        tensor([[[5., 1.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """2-d power-average pooling over `(N, C, H, W)` or `(C, H, W)`; arguments as `lp_pool1d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.lp_pool2d(tp.ones(1, 1, 4, 4), 2, 2)
        tensor([[[[2., 2.],
                  [2., 2.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """3-d power-average pooling over `(N, C, D, H, W)` or `(C, D, H, W)`; arguments as `lp_pool1d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.lp_pool3d(tp.ones(1, 1, 2, 2, 2), 1, 2)
        tensor([[[[[8.]]]]])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_sizes(n, input, kernel_size, output_size, output_ratio):
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = (output_ratio,) * n if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        if len(ratio) == 1:
            ratio = ratio * n
        output_size = [int(input.shape[input.ndim - n + i] * ratio[i]) for i in range(n)]
    many = "Ints" if n == 2 else "three Ints"

    def sizes(v, what):
        v = (v,) * n if isinstance(v, int) else tuple(int(a) for a in v)
        if len(v) == 1:
            v = v * n
        if len(v) != n:
            raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of {many}")
        return v
    return sizes(kernel_size, "kernel_size"), sizes(output_size, "output_size")


def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    name = f"fractional_max_pool{n}d"
    _check(input, name)
    k, out_size = _fractional_sizes(n, input, kernel_size, output_size, output_ratio)
    where = name + ("()" if n == 2 else "_out()")
    if input.ndim < n + 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {-n - 1})")
    if input.ndim > n + 2:
        raise RuntimeError(f"{where}: Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    for d in range(input.ndim - n - 1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d} being empty.")
    x, unbatched = _batched(input, n, name)
    plane = tuple(x.shape[2:])
    samples = _random_samples
    if samples is None:
        samples = _factories.drawn_for(input, _factories.rand, x.shape[0], x.shape[1], n, dtype=input.dtype)
    else:
        if samples.ndim != 3:
            raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
        if samples.shape[1] != x.shape[1]:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if samples.shape[0] < x.shape[0]:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if samples.shape[2] != n:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {samples.shape[2]}.")
        if samples.dtype != input.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        samples = samples.detach()[:x.shape[0]]
    for axis, size, kk, out in zip(_AXES[n], plane, k, out_size):
        if out + kk - 1 > size:
            raise RuntimeError(f"{where}: pool {axis} {kk} too large relative to input {axis} {size}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}_out_frame" not implemented for \'{_dtype_name(input.dtype)}\'')
    # PyTorch's interval starts, per plane: with u the plane's sample for the axis and
    # alpha = (size - k) / (out - 1) (in the input's dtype), start_i = int((i + u) * alpha) - int(u * alpha)
    # and the last window ends at the last cell. The samples' columns are (W, H) in 2-d, (T, H, W) in 3-d.
    columns = (1, 0) if n == 2 else (0, 1, 2)
    positions = []
    for col, size, kk, out in zip(columns, plane, k, out_size):
        u = samples[:, :, col:col + 1]
        last = _factories.full((*u.shape[:2], 1), size - kk, dtype=_dtype.int64)
        if out > 1:
            alpha = _factories.tensor((size - kk) / (out - 1), dtype=input.dtype)
            i = _factories.arange(out - 1, dtype=input.dtype)
            start = ((i + u) * alpha).long() - (u * alpha).long()
            start = _ops.cat([start, last], -1)
        else:
            start = last[..., :out]
        positions.append(start.unsqueeze(-1) + _factories.arange(kk))
    cand = _plane_positions(positions, plane)
    out, idx = _window_max(x, cand, None)
    shape = (*x.shape[:2], *out_size)
    return _unbatch((out.reshape(shape), idx.reshape(shape)) if return_indices else out.reshape(shape), None,
                    unbatched)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None) -> Tensor | tuple[Tensor, Tensor]:
    """2-d fractional max pooling (Graham, 2014): `kernel_size` windows at pseudo-random steps that give
    `output_size` (or `output_ratio` times the input size).

    Arguments:
        input: `(N, C, H, W)` or `(C, H, W)`.
        kernel_size: int or `(kH, kW)`.
        output_size: int or `(H_out, W_out)`; or give
        output_ratio: a number or pair in (0, 1).
        return_indices: also return the int64 flat positions `h * W + w` of the maxima.
        _random_samples: `(N, C, 2)` uniform samples in [0, 1) of the input's dtype, as PyTorch takes them
            (column 0 places the windows along `W`, column 1 along `H`); drawn from tapeflow's global
            generator when not given. With the same samples the result equals PyTorch's.

    Returns:
        The pooled tensor, or `(output, indices)`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.arange(25.0).reshape(1, 1, 5, 5)
        >>> tp.nn.functional.fractional_max_pool2d(x, 2, output_size=3, _random_samples=tp.tensor([[[0.5, 0.5]]]))
        tensor([[[[ 6.,  8.,  9.],
                  [16., 18., 19.],
                  [21., 23., 24.]]]])
    """
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None) -> Tensor | tuple[Tensor, Tensor]:
    """3-d fractional max pooling over `(N, C, T, H, W)` or `(C, T, H, W)`; arguments as `fractional_max_pool2d`
    (`_random_samples` is `(N, C, 3)`, columns for `T`, `H`, `W`; indices are flat over `T * H * W`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.fractional_max_pool3d(tp.ones(2, 3, 6, 6, 6), 2, output_ratio=0.5).shape
        tapeflow.Size([2, 3, 3, 3, 3])
    """
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def _with_indices(pool, call: str):
    """`pool` (a max pooling) that always returns `(output, indices)`: PyTorch's `*_with_indices` spellings.
    `call` is the arguments of its docstring's example."""
    def pooled(*args, **kwargs):
        kwargs.pop("return_indices", None)
        return pool(*args, **kwargs, return_indices=True)
    name = pool.__name__ + "_with_indices"
    pooled.__name__ = pooled.__qualname__ = name
    pooled.__doc__ = (f"`{pool.__name__}` with `return_indices=True`: `(output, indices)`.\n\n    Example:\n"
                      f"        >>> import tapeflow as tp\n        >>> out, idx = tp.nn.functional.{name}({call})\n"
                      f"        >>> idx.dtype\n        tapeflow.int64\n    ")
    return pooled


_EXAMPLES = {max_pool1d: "tp.randn(1, 2, 8), 2", max_pool2d: "tp.randn(1, 2, 8, 8), 2",
             max_pool3d: "tp.randn(1, 2, 4, 4, 4), 2", adaptive_max_pool1d: "tp.randn(1, 2, 8), 3",
             adaptive_max_pool2d: "tp.randn(1, 2, 8, 8), 3", adaptive_max_pool3d: "tp.randn(1, 2, 4, 4, 4), 3",
             fractional_max_pool2d: "tp.randn(1, 2, 8, 8), 2, output_size=5",
             fractional_max_pool3d: "tp.randn(1, 2, 8, 8, 8), 2, output_size=5"}
max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices, adaptive_max_pool1d_with_indices, \
    adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices, fractional_max_pool2d_with_indices, \
    fractional_max_pool3d_with_indices = (_with_indices(pool, call) for pool, call in _EXAMPLES.items())
__all__ += [pool.__name__ + "_with_indices" for pool in _EXAMPLES]

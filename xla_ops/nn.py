"""Neural-network ops: linear, convolution, pooling, normalisation, embedding,
activations and losses, in pure JAX.

Conventions: tensors are channels-first (`NC...`) as in PyTorch; `stride`,
`padding` and `dilation` are static tuples; optional inputs (`bias`,
`weight`) may be `None`. Losses take `reduction` in `"none" | "mean" | "sum"`.
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import special as _special
from ._op import op, unbroadcast
from .elementwise import _sign

__all__ = [
    "linear", "linear_nobias", "conv", "conv_transpose", "max_pool", "max_pool_with_indices", "max_unpool",
    "avg_pool", "adaptive_avg_pool", "batch_norm", "batch_norm_eval", "batch_norm_stats_update", "layer_norm",
    "group_norm", "embedding", "embedding_renorm",
    "gelu", "silu", "elu", "leaky_relu", "softplus", "one_hot",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "celu", "hardtanh",
    "hardsigmoid", "hardswish", "softshrink", "hardshrink", "threshold",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "rnn_layer",
]


def _reduce(loss, reduction):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


# -- linear ------------------------------------------------------------------------------
def _weight_grad(g, x, w):
    """`g`ᵀ x over every leading dimension: the weight's gradient (explicit row counts: a layer may have no
    inputs or no outputs)."""
    rows = math.prod(g.shape[:-1])
    return (g.reshape(rows, g.shape[-1]).T @ x.reshape(rows, x.shape[-1])).astype(w.dtype)


def _linear_vjp(g, ans, x, w, b):
    return (g @ w).astype(x.dtype), _weight_grad(g, x, w), unbroadcast(g, b)


linear = op("linear", lambda x, w, b: x @ w.T + b, _linear_vjp, saves=("x", "w"), node="AddmmBackward0",
            saved_for={"x": "w", "w": "x"})
linear_nobias = op("linear_nobias", lambda x, w: x @ w.T,
                   lambda g, ans, x, w: ((g @ w).astype(x.dtype), _weight_grad(g, x, w)),
                   saves=("x", "w"), node="MmBackward0", saved_for={"x": "w", "w": "x"})


# -- convolution ---------------------------------------------------------------------------
def _dims(n):
    sp = "DHW"[-n:] if n <= 3 else None
    return ("NC" + sp, "OI" + sp, "NC" + sp)


def _conv(x, w, b, stride, padding, dilation, groups):
    n = x.ndim - 2
    out = jax.lax.conv_general_dilated(
        x, w, window_strides=stride, padding=padding, rhs_dilation=dilation,
        dimension_numbers=_dims(n), feature_group_count=groups,
        precision=jax.lax.Precision.HIGHEST)
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * n)
    return out


def _conv_transpose(x, w, b, stride, padding, output_padding, dilation, groups):
    # A transposed convolution is the gradient of a convolution: dilate the
    # input by `stride`, pad by dilation*(k-1)-padding, and convolve with the
    # spatially flipped kernel whose in/out channels are swapped per group.
    n = x.ndim - 2
    cin, cout_g = w.shape[0], w.shape[1]
    k = w.shape[2:]
    wt = w.reshape((groups, cin // groups, cout_g) + k)
    wt = jnp.swapaxes(wt, 1, 2).reshape((groups * cout_g, cin // groups) + k)
    wt = jnp.flip(wt, axis=tuple(range(2, 2 + n)))
    pads = tuple((dilation[i] * (k[i] - 1) - padding[i], dilation[i] * (k[i] - 1) - padding[i] + output_padding[i])
                 for i in range(n))
    out = jax.lax.conv_general_dilated(
        x, wt, window_strides=(1,) * n, padding=pads, lhs_dilation=stride, rhs_dilation=dilation,
        dimension_numbers=_dims(n), feature_group_count=groups, precision=jax.lax.Precision.HIGHEST)
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * n)
    return out


conv = op("conv", _conv, node="ConvolutionBackward0")
conv_transpose = op("conv_transpose", _conv_transpose, node="ConvolutionBackward0")


# -- pooling --------------------------------------------------------------------------------
def _pool_pads(shape, kernel, stride, padding, ceil_mode):
    """Per spatial dim (low, high) padding; `ceil_mode` adds room for a last partial window."""
    pads = []
    for size, k, s, p in zip(shape, kernel, stride, padding):
        hi = p
        if ceil_mode:
            out = -(-(size + 2 * p - k) // s) + 1
            if (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
                out -= 1
            hi = max(p, (out - 1) * s + k - size - p)
        pads.append((p, hi))
    return pads


def _window_views(x, kernel, stride, padding, dilation, ceil_mode, fill):
    """One strided view of the padded input per kernel offset (in PyTorch's scan order), the offsets,
    and the output size."""
    eff = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    pads = _pool_pads(x.shape[2:], eff, stride, padding, ceil_mode)
    xp = jnp.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=fill)
    size = [(xp.shape[2 + i] - e) // s + 1 for i, (e, s) in enumerate(zip(eff, stride))]
    offs = list(itertools.product(*(range(k) for k in kernel)))
    views = [xp[(slice(None), slice(None)) + tuple(
        slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in zip(off, dilation, stride, size))]
        for off in offs]
    return views, offs, size


def _beats(v, best):
    """Where `v` replaces the running maximum: strictly greater, or a NaN (which then propagates)."""
    take = v > best
    return take | jnp.isnan(v) if jnp.issubdtype(v.dtype, jnp.floating) else take


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3, 4, 5))
def _max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    init = -float("inf") if jnp.issubdtype(x.dtype, jnp.floating) else int(jnp.iinfo(x.dtype).min)
    if any(d != 1 for d in dilation):
        # JAX has no VJP for dilated max windows: scan the window offsets instead, keeping the first
        # maximum, so that (as in PyTorch) one cell per window gets the gradient, even with ties.
        views, _, _ = _window_views(x, kernel, stride, padding, dilation, ceil_mode, init)
        best = views[0]
        for v in views[1:]:
            best = jnp.where(_beats(v, best), v, best)
        return best
    pads = _pool_pads(x.shape[2:], kernel, stride, padding, ceil_mode)
    return jax.lax.reduce_window(x, init, jax.lax.max, (1, 1) + kernel, (1, 1) + stride,
                                 ((0, 0), (0, 0)) + tuple(pads))


@_max_pool.defjvp
def _max_pool_jvp(kernel, stride, padding, dilation, ceil_mode, primals, tangents):
    """The tangent of each window's maximum is the tangent of the cell PyTorch picks (`_picked_offsets`), read
    at its index, as PyTorch's forward-mode and backward formulas read it. (JAX's own max-pool rule takes the
    last cell `>=` the running maximum, so a NaN followed by a number sent the gradient to the number.) The
    VJP, the transpose of this gather, is a scatter-add: on the CPU 3-4x faster than JAX's select-and-scatter."""
    (x,), (dx,) = primals, tangents
    args = (kernel, stride, padding, dilation, ceil_mode)
    idx = _max_pool_indices(x, *args)
    n, c = idx.shape[:2]
    dy = jnp.take_along_axis(dx.reshape(n, c, -1), idx.reshape(n, c, -1), axis=2, mode="promise_in_bounds")
    return _max_pool(x, *args), dy.reshape(idx.shape)


def _picked_offsets(x, kernel, stride, padding, dilation, ceil_mode):
    """Per window, the number (in PyTorch's scan order) of the kernel offset whose cell PyTorch's kernels pick:
    the first maximum, or the last NaN; in a window of `-inf` only, its first cell inside the input."""
    low = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    views, _, size = _window_views(x, kernel, stride, padding, dilation, ceil_mode, low)
    # the first offset inside the input, per dimension and window start, then numbered as the scan counts
    firsts = [np.where(q < 0, -(q // d), 0) for q, d in zip(_window_starts(size, stride, padding), dilation)]
    grids = np.meshgrid(*firsts, indexing="ij")
    first = sum(g * math.prod(kernel[i + 1:]) for i, g in enumerate(grids)).astype(np.int32)
    best = jnp.full(x.shape[:2] + tuple(size), low, x.dtype)
    picked = jnp.broadcast_to(first, best.shape)
    for j, v in enumerate(views):
        take = _beats(v, best)
        best = jnp.where(take, v, best)
        picked = jnp.where(take, np.int32(j), picked)
    return picked


def _window_starts(size, stride, padding) -> list:
    """Per spatial dimension, where each window starts in the input (negative in the left padding)."""
    return [np.arange(n) * s - p for n, s, p in zip(size, stride, padding)]


def _max_pool_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """The flat position (into each input plane, int64) of every window's maximum, as PyTorch picks it (see
    `_picked_offsets`)."""
    picked = _picked_offsets(x, kernel, stride, padding, dilation, ceil_mode)
    size = picked.shape[2:]
    plane = x.shape[2:]
    flat_stride = [math.prod(plane[i + 1:]) for i in range(len(plane))]
    idx = jnp.zeros(picked.shape, jnp.int64)
    for j, off in enumerate(itertools.product(*(range(k) for k in kernel))):
        pos = [q + o * d for q, o, d in zip(_window_starts(size, stride, padding), off, dilation)]
        grids = np.meshgrid(*[q * f for q, f in zip(pos, flat_stride)], indexing="ij")
        idx = jnp.where(picked == j, sum(grids).astype(np.int64), idx)
    return idx


def _max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode):
    # The values (and so the gradient) are exactly `max_pool`'s; the indices carry no gradient.
    out = _max_pool(x, kernel, stride, padding, dilation, ceil_mode)
    return out, jax.lax.stop_gradient(_max_pool_indices(x, kernel, stride, padding, dilation, ceil_mode))


def _max_unpool(x, indices, output_size):
    n, c = x.shape[:2]
    flat = jnp.zeros((n, c, math.prod(output_size)), x.dtype)
    rows = (jnp.arange(n)[:, None, None], jnp.arange(c)[None, :, None], indices.reshape(n, c, -1))
    # Out-of-range indices are dropped (PyTorch raises; checking would need a host sync).
    return flat.at[rows].set(x.reshape(n, c, -1), mode="drop").reshape((n, c) + tuple(output_size))


def _max_unpool_vjp(g, ans, x, indices, output_size):
    n, c = x.shape[:2]
    gx = jnp.take_along_axis(g.reshape(n, c, -1), indices.reshape(n, c, -1), axis=2, mode="fill", fill_value=0)
    return gx.reshape(x.shape).astype(x.dtype), None


def _avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    pads = ((0, 0), (0, 0)) + tuple(_pool_pads(x.shape[2:], kernel, stride, padding, ceil_mode))
    window, strides = (1, 1) + kernel, (1, 1) + stride
    total = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, pads)
    if divisor_override:
        return total / divisor_override
    # The divisor counts the window positions inside the input, plus the
    # explicit (not the ceil-mode) padding when `count_include_pad`.
    ones = jnp.ones((1, 1) + x.shape[2:], x.dtype)
    if count_include_pad:
        ones = jnp.pad(ones, ((0, 0), (0, 0)) + tuple((p, p) for p in padding), constant_values=1)
        pads = ((0, 0), (0, 0)) + tuple((0, hi - p) for (lo, hi), p in zip(pads[2:], padding))
    count = jax.lax.reduce_window(ones, 0.0, jax.lax.add, window, strides, pads)
    return total / count


def _adaptive_matrix(size, out, dtype):
    i = jnp.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    pos = jnp.arange(size)
    m = ((pos[None, :] >= start[:, None]) & (pos[None, :] < end[:, None])).astype(dtype)
    return m / (end - start)[:, None].astype(dtype)


def _adaptive_avg_pool(x, output_size):
    # Each output cell averages its bin; as a product with per-axis averaging matrices.
    for axis, out in enumerate(output_size):
        ax = x.ndim - len(output_size) + axis
        m = _adaptive_matrix(x.shape[ax], out, x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, m, axes=((ax,), (1,)), precision=jax.lax.Precision.HIGHEST), -1, ax)
    return x


max_pool = op("max_pool", _max_pool, node="MaxPool2DWithIndicesBackward0")
max_pool_with_indices = op("max_pool_with_indices", _max_pool_with_indices, node="MaxPool2DWithIndicesBackward0")
max_unpool = op("max_unpool", _max_unpool, _max_unpool_vjp, saves=("indices",), node="MaxUnpool2DBackward0")
avg_pool = op("avg_pool", _avg_pool, node="AvgPool2DBackward0")
adaptive_avg_pool = op("adaptive_avg_pool", _adaptive_avg_pool, node="AdaptiveAvgPool2DBackward0")


# -- normalisation ----------------------------------------------------------------------------
def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _batch_norm(x, weight, bias, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes)
    var = jnp.mean(jnp.square(x - jnp.expand_dims(mean, axes)), axis=axes)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) * jax.lax.rsqrt(var.reshape(shape) + eps)
    return _affine(y, weight, bias, shape), mean, var


def _batch_norm_eval(x, running_mean, running_var, weight, bias, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - running_mean.reshape(shape)) * jax.lax.rsqrt(running_var.reshape(shape) + eps)
    return _affine(y, weight, bias, shape)


def _layer_norm(x, weight, bias, ndim, eps):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    y = (x - mean) * jax.lax.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _group_norm(x, weight, bias, num_groups, eps):
    n, c = x.shape[:2]
    xg = x.reshape((n, num_groups, -1))
    mean = jnp.mean(xg, axis=2, keepdims=True)
    var = jnp.mean(jnp.square(xg - mean), axis=2, keepdims=True)
    y = ((xg - mean) * jax.lax.rsqrt(var + eps)).reshape(x.shape)
    return _affine(y, weight, bias, (1, c) + (1,) * (x.ndim - 2))


def _stats_update(running_mean, running_var, mean, var, momentum, n):
    # Running variance tracks the unbiased batch variance, as in PyTorch. `momentum` may be
    # a traced scalar (the cumulative average's 1/num_batches_tracked).
    momentum = jnp.asarray(momentum).astype(running_mean.dtype)
    unbiased = var * (n / (n - 1))
    return (running_mean * (1 - momentum) + mean.astype(running_mean.dtype) * momentum,
            running_var * (1 - momentum) + unbiased.astype(running_var.dtype) * momentum)


batch_norm = op("batch_norm", _batch_norm, node="NativeBatchNormBackward0")
batch_norm_stats_update = op("batch_norm_stats_update", _stats_update, differentiable=False)
batch_norm_eval = op("batch_norm_eval", _batch_norm_eval, node="NativeBatchNormBackward0")
layer_norm = op("layer_norm", _layer_norm, node="NativeLayerNormBackward0")
group_norm = op("group_norm", _group_norm, node="NativeGroupNormBackward0")


# -- embedding -----------------------------------------------------------------------------------
def _embedding_vjp(g, ans, weight, indices, padding_idx=None, scale_grad_by_freq=False):
    idx = indices.reshape(-1)
    rows = g.reshape(-1, weight.shape[1])
    if scale_grad_by_freq:
        counts = jnp.zeros(weight.shape[0], g.dtype).at[idx].add(1)
        rows = rows / jnp.take(counts, idx)[:, None]
    gw = jnp.zeros(weight.shape, g.dtype).at[idx].add(rows)
    if padding_idx is not None:
        gw = gw.at[padding_idx].set(0)
    return gw.astype(weight.dtype), None


embedding = op("embedding", lambda weight, indices, padding_idx=None, scale_grad_by_freq=False:
               jnp.take(weight, indices, axis=0), _embedding_vjp, saves=("indices",), node="EmbeddingBackward0",
               edges=(0,))


def _row_norms(rows, norm_type):
    a = jnp.abs(rows)
    if norm_type == float("inf"):
        return jnp.max(a, axis=-1)
    if norm_type == 2.0:
        return jnp.sqrt(jnp.sum(a * a, axis=-1))
    if norm_type == 1.0:
        return jnp.sum(a, axis=-1)
    return jnp.sum(a ** norm_type, axis=-1) ** (1.0 / norm_type)


def _embedding_renorm(weight, indices, max_norm, norm_type=2.0):
    """`weight` with every row named in `indices` scaled to norm at most `max_norm` (PyTorch's
    `embedding_renorm_`, without a host sync: a `where` on the norms instead of a branch)."""
    idx = indices.reshape(-1)
    rows = jnp.take(weight, idx, axis=0)
    norms = _row_norms(rows, norm_type)
    # The 1e-7 keeps the scale finite and leaves the new norm a hair under max_norm, as PyTorch does.
    scale = jnp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(weight.dtype)
    # A repeated index writes the same scaled row each time.
    return weight.at[idx].set(rows * scale[:, None])


embedding_renorm = op("embedding_renorm", _embedding_renorm, differentiable=False)


# -- activations ------------------------------------------------------------------------------------
gelu = op("gelu", lambda x, approximate="none": jax.nn.gelu(x, approximate=approximate == "tanh"),
          node="GeluBackward0")
silu = op("silu", jax.nn.silu, node="SiluBackward0")


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return scale * jnp.where(x > 0, x, alpha * jnp.expm1(jnp.minimum(x, 0) * input_scale))


def _elu_vjp(g, ans, x, alpha=1.0, scale=1.0, input_scale=1.0):
    # NOTE: x = 0 takes the exponential side, as PyTorch does: elu'(0) = alpha (celu'(0) = 1).
    return (jnp.where(x <= 0, g * scale * alpha * input_scale * jnp.exp(jnp.minimum(x, 0) * input_scale), g * scale),)


elu = op("elu", _elu, _elu_vjp, saves=("x",), node="EluBackward0")
celu = op("celu", lambda x, alpha=1.0: _elu(x, alpha, 1.0, 1.0 / alpha),
          lambda g, ans, x, alpha=1.0: _elu_vjp(g, ans, x, alpha, 1.0, 1.0 / alpha), saves=("x",), node="CeluBackward0")


# NOTE: at their bounds these pass no gradient (PyTorch's rule; clamp passes it), and a NaN passes it (PyTorch's
# mask names where none passes).
def _outside(x, lo, hi):
    return (x <= lo) | (x >= hi)


def _inside(x, lo, hi):
    return (x > lo) & (x < hi)


hardtanh = op("hardtanh", lambda x, min_val=-1.0, max_val=1.0: jnp.clip(x, min_val, max_val),
              lambda g, ans, x, min_val=-1.0, max_val=1.0: (jnp.where(_outside(x, min_val, max_val), 0, g),),
              saves=("x",), node="HardtanhBackward0")
hardsigmoid = op("hardsigmoid", lambda x: jnp.clip(x + 3, 0, 6) / 6,
                 lambda g, ans, x: (jnp.where(_inside(x, -3, 3), g / 6, 0),), saves=("x",),
                 node="HardsigmoidBackward0")
# NOTE: hardswish'(-3) = 0 and hardswish'(3) = 1: each end belongs to the outer piece, as in PyTorch.
hardswish = op("hardswish", lambda x: x * jnp.clip(x + 3, 0, 6) / 6,
               lambda g, ans, x: (jnp.where(x <= -3, 0, jnp.where(x < 3, g * (x / 3 + 0.5), g)),),
               saves=("x",), node="HardswishBackward0")
# NOTE: the middle is x * 0, which keeps the sign of zero, as PyTorch's kernel does (softshrink(-0.5) is -0.0).
softshrink = op("softshrink",
                lambda x, lambd=0.5: jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, x * 0)),
                lambda g, ans, x, lambd=0.5: (jnp.where(jnp.abs(x) <= lambd, 0, g),), saves=("x",),
                node="SoftshrinkBackward0")
hardshrink = op("hardshrink", lambda x, lambd=0.5: jnp.where(jnp.abs(x) <= lambd, 0, x),
                lambda g, ans, x, lambd=0.5: (jnp.where(jnp.abs(x) <= lambd, 0, g),), saves=("x",),
                node="HardshrinkBackward0")
threshold = op("threshold", lambda x, threshold, value: jnp.where(x <= threshold, value, x).astype(x.dtype),
               lambda g, ans, x, threshold, value: (jnp.where(x <= threshold, 0, g),), saves=("x",),
               node="ThresholdBackward0")
leaky_relu = op("leaky_relu", lambda x, negative_slope=0.01: jnp.where(x > 0, x, x * negative_slope),
                node="LeakyReluBackward0")
softplus = op("softplus", lambda x, beta=1.0, threshold=20.0:
              jnp.where(x * beta > threshold, x, jnp.logaddexp(x * beta, 0) / beta), node="SoftplusBackward0")


one_hot = op("one_hot", lambda x, num_classes: jax.nn.one_hot(x, num_classes, dtype=jnp.int64), differentiable=False)


# -- classification losses -----------------------------------------------------------------------------
def _class_weights(x, target, weight, ignore_index, label_smoothing, probs):
    """`q` with loss = -sum_c q * log_softmax(x), and the denominator of `mean`.

    The class axis is 1 (or 0 for a single sample), as in PyTorch.
    """
    c = x.shape[1] if x.ndim > 1 else x.shape[0]
    cax = 1 if x.ndim > 1 else 0
    wshape = [1] * x.ndim
    wshape[cax] = c
    w = jnp.ones((c,), x.dtype) if weight is None else weight.astype(x.dtype)
    wb = w.reshape(wshape)
    if probs:
        t = target.astype(x.dtype)
        if label_smoothing:
            t = t * (1 - label_smoothing) + label_smoothing / c
        n = x.size // c
        return t * wb, jnp.asarray(n, x.dtype)
    mask = target != ignore_index
    if weight is None and not label_smoothing:  # the common case: one-hot rows, zero where ignored
        q = jnp.moveaxis(jax.nn.one_hot(jnp.where(mask, target, -1), c, dtype=x.dtype), -1, cax)
        return q, jnp.sum(mask, dtype=x.dtype)
    safe = jnp.where(mask, target, 0)
    onehot = jnp.moveaxis(jax.nn.one_hot(safe, c, dtype=x.dtype), -1, cax)
    m = jnp.expand_dims(mask, cax).astype(x.dtype)
    wt = jnp.take(w, safe) * mask
    q = onehot * wb * m
    if label_smoothing:
        q = q * (1 - label_smoothing) + (label_smoothing / c) * wb * m
    return q, jnp.sum(wt)


def _cross_entropy(x, target, weight, ignore_index=-100, reduction="mean", label_smoothing=0.0, probs=False):
    cax = 1 if x.ndim > 1 else 0
    q, denom = _class_weights(x, target, weight, ignore_index, label_smoothing, probs)
    terms = q * jax.nn.log_softmax(x, axis=cax)
    if not probs and not label_smoothing:  # (PyTorch gathers the target's term: the others add nothing, even at -inf)
        c = x.shape[cax]
        target_class = jnp.moveaxis(jax.nn.one_hot(target, c, dtype=jnp.bool_), -1, cax)
        terms = jnp.where(target_class, terms, 0)
    loss = 0.0 - jnp.sum(terms, axis=cax)  # (+0 for an ignored sample, as PyTorch's)
    if reduction == "mean":
        return jnp.sum(loss) / denom
    return jnp.sum(loss) if reduction == "sum" else loss


def _cross_entropy_vjp(g, ans, x, target, weight, ignore_index=-100, reduction="mean", label_smoothing=0.0,
                       probs=False):
    cax = 1 if x.ndim > 1 else 0
    q, denom = _class_weights(x, target, weight, ignore_index, label_smoothing, probs)
    logp = jax.nn.log_softmax(x, axis=cax)
    gs = g / denom if reduction == "mean" else g
    gs = gs if reduction != "none" else jnp.expand_dims(g, cax)
    if not probs:  # (an ignored sample's gradient is 0, also when every sample is ignored and `mean` divides by 0:
        # its scale is 0, not g / 0, so only a row of non-finite logits gives NaN, as through PyTorch's log_softmax)
        gs = jnp.where(jnp.expand_dims(target == ignore_index, cax), jnp.zeros((), x.dtype), gs)
    gx = gs * (jnp.exp(logp) * jnp.sum(q, axis=cax, keepdims=True) - q)
    gt = None
    if probs:
        # d loss / d target: -(1 - smoothing) * w * log_softmax(x).
        c = x.shape[cax]
        w = jnp.ones((c,), x.dtype) if weight is None else weight.astype(x.dtype)
        wshape = [1] * x.ndim
        wshape[cax] = c
        gt = (-gs * (1 - label_smoothing) * w.reshape(wshape) * logp).astype(target.dtype)
        if weight is not None:  # (with probabilities the weights enter PyTorch's formula, which differentiates them)
            smoothed = target.astype(x.dtype) * (1 - label_smoothing) + label_smoothing / c
            axes = tuple(i for i in range(x.ndim) if i != cax)
            gw = jnp.sum(-gs * smoothed * logp, axis=axes).astype(weight.dtype)
            return gx.astype(x.dtype), gt, gw
    return gx.astype(x.dtype), gt, None


# PyTorch keeps log_softmax(x), not x: writing into x after the loss is no error (`snapshot`).
cross_entropy = op("cross_entropy", _cross_entropy, _cross_entropy_vjp, saves=("x", "target", "weight"),
                   node="NllLossBackward0", snapshot=("x",))


def _nll_loss(x, target, weight, ignore_index=-100, reduction="mean"):
    # NOTE: each sample reads its target's entry alone (a gather, as PyTorch's kernel), so its gradient reaches
    # that entry only: a class weight of 0 with a mean over zero weight gives NaN there and 0 elsewhere, an
    # ignored sample gets 0, and a non-finite entry of another class changes nothing.
    cax = 1 if x.ndim > 1 else 0
    mask = target != ignore_index
    safe = jnp.where(mask, target, 0)
    picked = jnp.squeeze(jnp.take_along_axis(x, jnp.expand_dims(safe, cax), axis=cax), cax)
    wt = jnp.where(mask, 1 if weight is None else jnp.take(weight.astype(x.dtype), safe), 0).astype(x.dtype)
    loss = jnp.where(mask, 0.0 - wt * picked, 0.0)  # (+0 for an ignored sample, as PyTorch's)
    denom = jnp.sum(wt)
    if reduction == "mean":
        return jnp.sum(loss) / denom
    return jnp.sum(loss) if reduction == "sum" else loss


nll_loss = op("nll_loss", _nll_loss, node="NllLossBackward0", edges=(0,))


# -- regression and binary losses --------------------------------------------------------------------------
def _abs0(d):
    # NOTE: |d| written as d * sign(d), whose derivative at 0 is sign(0) = 0, PyTorch's (JAX's abs gives 1); at
    # NaN it is 0 too (PyTorch's sign(nan)).
    return d * _sign(d)


def _smooth_l1(x, y, reduction="mean", beta=1.0):
    d = _abs0(x - y)
    loss = d - 0.5 * beta if beta == 0 else jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def _huber(x, y, reduction="mean", delta=1.0):
    d = x - y
    a = _abs0(d)
    return _reduce(jnp.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta)), reduction)


def _bce(x, y, weight, reduction="mean"):
    # PyTorch clamps the logs at -100 so that 0 and 1 give finite losses.
    loss = -(y * jnp.maximum(jnp.log(x), -100) + (1 - y) * jnp.maximum(jnp.log1p(-x), -100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_logits(x, y, weight, pos_weight, reduction="mean"):
    # PyTorch's formula, operation for operation: (1 - y) x - (1 + (pos_weight - 1) y) log_sigmoid(x)
    log_sig = jax.nn.log_sigmoid(x)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * y + 1)
    loss = (1 - y) * x - log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _kl_div(x, target, reduction="mean", log_target=False):
    if log_target:
        loss = jnp.exp(target) * (target - x)
    else:  # PyTorch's: xlogy(target, target) - target * x (NaN where target = 0 meets x = -inf, as there)
        loss = _special.xlogy.rule()(target, target) - target * x  # (xlogy's own derivative: NaN at target 0)
    if reduction == "batchmean":
        return jnp.sum(loss) / x.shape[0] if x.ndim else jnp.sum(loss)
    return _reduce(loss, reduction)


mse_loss = op("mse_loss", lambda x, y, reduction="mean": _reduce(jnp.square(x - y), reduction),
              node="MseLossBackward0")
l1_loss = op("l1_loss", lambda x, y, reduction="mean": _reduce(_abs0(x - y), reduction), node="L1LossBackward0")
smooth_l1_loss = op("smooth_l1_loss", _smooth_l1, node="SmoothL1LossBackward0")
huber_loss = op("huber_loss", _huber, node="HuberLossBackward0")


def _bce_vjp(g, ans, x, y, weight, reduction="mean"):
    # NOTE: PyTorch's rules: the input's gradient divides by max(x (1 - x), 1e-12), so it stays finite where the
    # clamped logs make the loss finite (x at 0 or 1); the target's is -logit(x). (PyTorch does not
    # differentiate the weight; here it gets the unweighted loss.)
    g = jnp.broadcast_to(g / x.size if reduction == "mean" else g, x.shape)
    gw = None if weight is None else unbroadcast(g * _bce(x, y, None, "none"), weight)
    if weight is not None:
        g = g * weight
    gx = g * (x - y) / jnp.maximum(x * (1 - x), jnp.asarray(np.float32(1e-12), x.dtype))  # PyTorch's float epsilon
    gy = -g * (jnp.log(x) - jnp.log1p(-x))
    return gx.astype(x.dtype), gy.astype(y.dtype), gw


binary_cross_entropy = op("binary_cross_entropy", _bce, _bce_vjp, saves=("x", "y", "weight"),
                          node="BinaryCrossEntropyBackward0", edges=(0, 1))
binary_cross_entropy_with_logits = op("binary_cross_entropy_with_logits", _bce_logits,
                                      node="BinaryCrossEntropyWithLogitsBackward0")
kl_div = op("kl_div", _kl_div, node="KlDivBackward0")


# -- module backward hooks -------------------------------------------------------------------------------------
# An identity over several tensors: its one backward node sees all their
# gradients at once, which is where `Module.register_full_backward_hook` hooks in.
backward_hook = op("backward_hook", lambda *xs: tuple(xs),
                   lambda g, ans, *xs: g if isinstance(g, tuple) else (g,), node="BackwardHookFunctionBackward")



# -- recurrent layers ------------------------------------------------------------------------------------
def _rnn_cell(mode, nonlinearity, gi, h, c, w_hh, b_hh, w_hr):
    """One time step: `gi` is the input's projection (`x W_ih^T + b_ih`) for this step."""
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    if mode == "LSTM":
        i, f, g, o = jnp.split(gi + gh, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h if w_hr is None else h @ w_hr.T), c
    if mode == "GRU":
        ir, iz, i_n = jnp.split(gi, 3, axis=-1)
        hr, hz, h_n = jnp.split(gh, 3, axis=-1)
        r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
        n = jnp.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h, c
    return (jnp.tanh if nonlinearity == "tanh" else jax.nn.relu)(gi + gh), c


def _rnn_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mask=None, mode="LSTM", nonlinearity="tanh",
               reverse=False):
    """One layer in one direction over a whole `(T, B, I)` sequence: a single `lax.scan`, so the sequence is
    one XLA program (forward and, derived by JAX, backward) rather than T small ops.

    `mask` (`(T, B)` bool, optional) marks the steps each sequence really has (packed sequences): elsewhere the
    state is carried unchanged and the output is 0, so a reverse pass starts at each sequence's own end.

    Returns `(outputs (T, B, H_out), h_T, c_T)` (`c_T` is a 0-d zero unless `mode == "LSTM"`)."""
    xs = jnp.flip(x, 0) if reverse else x
    gi = xs @ w_ih.T + (0 if b_ih is None else b_ih)  # every step's input projection in one matmul
    ms = jnp.ones(x.shape[:2], bool) if mask is None else (jnp.flip(mask, 0) if reverse else mask)

    def step(carry, inputs):
        g, m = inputs
        h, c = _rnn_cell(mode, nonlinearity, g, carry[0], carry[1], w_hh, b_hh, w_hr)
        if mask is None:
            return (h, c), h
        m = m[:, None]
        c = None if c is None else jnp.where(m, c, carry[1])
        return (jnp.where(m, h, carry[0]), c), jnp.where(m, h, 0)

    (h, c), out = jax.lax.scan(step, (h0, c0), (gi, ms))
    return (jnp.flip(out, 0) if reverse else out), h, (jnp.zeros((), x.dtype) if c is None else c)


rnn_layer = op("rnn_layer", _rnn_layer, nin=9, node="RnnLayerBackward0")


# -- cdist -------------------------------------------------------------------------------------------------------
def _cdist(x1, x2, p):
    diff = jnp.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return jnp.sum(diff != 0, axis=-1).astype(x1.dtype)
    if p == 1:
        return jnp.sum(diff, axis=-1)
    if p == 2:
        return jnp.sqrt(jnp.sum(diff * diff, axis=-1))
    if p == math.inf:
        return jnp.max(diff, axis=-1)
    return jnp.sum(diff ** p, axis=-1) ** (1.0 / p)


def _cdist_vjp(g, ans, x1, x2, p):
    # PyTorch's formula (`_cdist_backward`): every coordinate at a tie of the infinity norm gets the full
    # gradient, and a zero distance (or a zero difference with p < 1) passes none.
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    dist = ans[..., None]
    gg = g[..., None]
    zero = jnp.zeros((), diff.dtype)
    if p == 0:
        terms = jnp.zeros_like(diff)
    elif p == 1:
        terms = gg * jnp.sign(diff)
    elif p == 2:
        terms = jnp.where(dist == 0, zero, gg * diff / jnp.where(dist == 0, 1, dist))
    elif p == math.inf:
        terms = gg * jnp.sign(diff) * (jnp.abs(diff) == dist)
    else:
        safe = jnp.where(dist == 0, 1, dist)
        if p < 2:
            bad = (dist == 0) | ((diff == 0) & (p < 1))
            mag = jnp.abs(jnp.where(bad, 1, diff)) ** (p - 1)
            terms = jnp.where(bad, zero, jnp.sign(diff) * mag * gg / safe ** (p - 1))
        else:
            terms = jnp.where(dist == 0, zero, diff * jnp.abs(diff) ** (p - 2) * gg / safe ** (p - 1))
    return (unbroadcast(jnp.sum(terms, axis=-2), x1), unbroadcast(-jnp.sum(terms, axis=-3), x2))


cdist = op("cdist", _cdist, _cdist_vjp, saves=("x1", "x2", "ans"), node="CdistBackward0")

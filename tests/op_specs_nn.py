"""Op-table entries for the neural-network ops of `xla_ops/nn.py` (format: see `op_specs.py`).

Imported at the end of `op_specs.py`, so `SPECS` holds these too. The NumPy
references are written independently of the JAX implementations: direct
loops over kernel offsets for convolution and pooling, textbook formulas for
normalisation and losses.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sp
from op_specs import NOKINK, POS, PROB, A, B, C, F, I, spec

import tapeflow as tp
import xla_ops

FN = tp.nn.functional


# -- linear and convolution -------------------------------------------------------------------------------------
def _np_conv(x, w, b, stride, padding, dilation, groups):
    n = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0), *padding])
    N, C = x.shape[:2]
    O, k = w.shape[0], w.shape[2:]
    size = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(n)]
    out = np.zeros((N, O, *size))
    cg, og = C // groups, O // groups
    for g in range(groups):
        for off in np.ndindex(*k):
            win = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (size[i] - 1) + 1, stride[i])
                        for i in range(n))
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg), *win)]
            wk = w[(slice(g * og, (g + 1) * og), slice(None), *off)]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wk)
    return out if b is None else out + b.reshape((1, -1) + (1,) * n)


def _np_conv_transpose(x, w, b, stride, padding, output_padding, dilation, groups):
    # Scatter form: every input pixel adds a weighted copy of the kernel into the output.
    n = x.ndim - 2
    N, cin = x.shape[:2]
    k, cog = w.shape[2:], w.shape[1]
    cig = cin // groups
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i] for i in range(n)]
    out = np.zeros((N, cog * groups, *full))
    for g in range(groups):
        for off in np.ndindex(*k):
            win = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (x.shape[2 + i] - 1) + 1,
                              stride[i]) for i in range(n))
            wk = w[(slice(g * cig, (g + 1) * cig), slice(None), *off)]
            out[(slice(None), slice(g * cog, (g + 1) * cog), *win)] += np.einsum(
                "nc...,co->no...", x[:, g * cig:(g + 1) * cig], wk)
    out = out[(slice(None), slice(None), *(slice(padding[i], full[i] - padding[i]) for i in range(n)))]
    return out if b is None else out + b.reshape((1, -1) + (1,) * n)


spec("linear", [C(F((4, 3)), F((2, 3)), F((2,))), C(F((2, 4, 3)), F((2, 3)), F((2,))), C(F((0, 3)), F((2, 3)), F((2,)))],
     lambda x, w, b: x @ w.T + b, tf=lambda x, w, b: FN.linear(x, w, b))
spec("linear_nobias", [C(F((4, 3)), F((2, 3))), C(F((2, 1, 3)), F((5, 3)))], lambda x, w: x @ w.T,
     tf=lambda x, w: FN.linear(x, w))
_P1 = ((1, 1), (1, 1))
spec("conv", [C(F((2, 2, 4, 4)), F((3, 2, 3, 3)), F((3,)), stride=(1, 1), padding=_P1, dilation=(1, 1), groups=1),
              C(F((1, 4, 5, 4)), F((4, 2, 2, 3)), None, stride=(2, 1), padding=((0, 1), (1, 1)), dilation=(1, 2),
                groups=2),
              C(F((2, 2, 6)), F((3, 2, 3)), F((3,)), stride=(2,), padding=((1, 1),), dilation=(1,), groups=1)],
     _np_conv, tf=lambda x, w, b: FN.conv2d(x, w, b, 1, 1))
spec("conv_transpose", [C(F((1, 2, 3, 3)), F((2, 3, 3, 2)), F((3,)), stride=(2, 2), padding=(1, 0),
                          output_padding=(1, 0), dilation=(1, 1), groups=1),
                        C(F((2, 4, 2, 3)), F((4, 1, 2, 2)), None, stride=(1, 2), padding=(0, 0), output_padding=(0, 1),
                          dilation=(2, 1), groups=2)],
     _np_conv_transpose, tf=lambda x, w, b: FN.conv_transpose2d(x, w, b, 2, (1, 0), (1, 0)))


# -- pooling ------------------------------------------------------------------------------------------------------
def _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode):
    size, hi = [], []
    for i in range(len(kernel)):
        length, eff = x.shape[2 + i], dilation[i] * (kernel[i] - 1) + 1
        span = length + 2 * padding[i] - eff
        o = (math.ceil(span / stride[i]) if ceil_mode else span // stride[i]) + 1
        if ceil_mode and (o - 1) * stride[i] >= length + padding[i]:
            o -= 1
        size.append(o)
        hi.append(max(padding[i], (o - 1) * stride[i] + eff - length - padding[i]))
    return size, hi


def _windows(xp, kernel, stride, dilation, size):
    for off in np.ndindex(*kernel):
        yield xp[(slice(None), slice(None), *(slice(off[i] * dilation[i], off[i] * dilation[i] +
                                                     stride[i] * (size[i] - 1) + 1, stride[i])
                                               for i in range(len(kernel))))]


def _np_max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    size, hi = _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode)
    xp = np.pad(x, [(0, 0), (0, 0), *zip(padding, hi)], constant_values=-np.inf)
    return np.max(np.stack(list(_windows(xp, kernel, stride, dilation, size))), axis=0)


def _np_avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    ones = (1,) * len(kernel)
    size, hi = _pool_geometry(x, kernel, stride, padding, ones, ceil_mode)
    pads = [(0, 0), (0, 0), *zip(padding, hi)]
    total = sum(_windows(np.pad(x, pads), kernel, stride, ones, size))
    if divisor_override:
        return total / divisor_override
    # Cells count when inside the input, or inside the explicit padding if count_include_pad.
    inside = np.pad(np.ones((1, 1, *x.shape[2:])), [(0, 0), (0, 0), *[(p, p) for p in padding]],
                    constant_values=1.0 if count_include_pad else 0.0)
    inside = np.pad(inside, [(0, 0), (0, 0), *[(0, h - p) for h, p in zip(hi, padding)]])
    return total / sum(_windows(inside, kernel, stride, ones, size))


def _np_adaptive_avg_pool(x, output_size):
    out = np.zeros(x.shape[:2] + tuple(output_size))
    H, W = x.shape[2:]
    for i in range(output_size[0]):
        h0, h1 = (i * H) // output_size[0], -(-((i + 1) * H) // output_size[0])
        for j in range(output_size[1]):
            w0, w1 = (j * W) // output_size[1], -(-((j + 1) * W) // output_size[1])
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


spec("max_pool", [C(F((2, 2, 5, 5)), kernel=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(1, 1), ceil_mode=False),
                  C(F((1, 1, 5, 6)), kernel=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1), ceil_mode=True),
                  C(F((1, 2, 7, 6)), kernel=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1), ceil_mode=False)],
     _np_max_pool, tf=lambda x: FN.max_pool2d(x, 3, 2, 1))


def _np_max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode):
    """Window by window: the first maximum in scan order (or a NaN) and its flat position in the input plane."""
    size, _ = _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode)
    plane = x.shape[2:]
    out = np.empty(x.shape[:2] + tuple(size))
    idx = np.empty(x.shape[:2] + tuple(size), np.int64)
    for nc in np.ndindex(*x.shape[:2]):
        for o in np.ndindex(*size):
            cells = [tuple(o[i] * stride[i] - padding[i] + off[i] * dilation[i] for i in range(len(kernel)))
                     for off in np.ndindex(*kernel)]
            cells = [c for c in cells if all(0 <= c[i] < plane[i] for i in range(len(c)))]
            best, where = -np.inf, cells[0]
            for c in cells:
                v = x[nc + c]
                if v > best or np.isnan(v):
                    best, where = v, c
            out[nc + o], idx[nc + o] = best, np.ravel_multi_index(where, plane)
    return out, idx


def _ties(rng, s):
    x = rng.integers(-1, 2, s).astype(np.float64)
    x.reshape(-1)[:2] = np.nan
    return x


def _np_max_unpool(x, indices, output_size):
    out = np.zeros(x.shape[:2] + (math.prod(output_size),))
    for nc in np.ndindex(*x.shape[:2]):
        out[nc][indices[nc].reshape(-1)] = x[nc].reshape(-1)
    return out.reshape(x.shape[:2] + tuple(output_size))


spec("max_pool_with_indices",
     [C(F((2, 2, 5, 5)), kernel=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(1, 1), ceil_mode=False),
      C(F((1, 2, 5, 6)), kernel=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1), ceil_mode=True),
      C(F((1, 2, 7, 6)), kernel=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1), ceil_mode=False),
      C(F((2, 1, 9), _ties), kernel=(3,), stride=(2,), padding=(1,), dilation=(2,), ceil_mode=True, grad=False),
      C(F((1, 3, 6, 5), _ties), kernel=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), ceil_mode=True,
        grad=False)],
     _np_max_pool_with_indices, tf=lambda x: FN.max_pool2d(x, 3, 2, 1, return_indices=True))
spec("max_unpool", [C(F((1, 2, 2, 2)), A([[[[5, 3], [8, 15]], [[0, 6], [13, 11]]]]), output_size=(4, 4)),
                    C(F((2, 1, 2, 2)), A([[[[0, 7], [11, 24]]], [[[6, 3], [20, 18]]]]), output_size=(5, 5)),
                    C(F((1, 2, 3)), A([[[1, 2, 6], [0, 4, 5]]]), output_size=(7,))],
     _np_max_unpool, tf=lambda x, i: FN.max_unpool2d(x, i, 2))
spec("avg_pool", [C(F((2, 2, 6, 6)), kernel=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=False,
                    count_include_pad=True, divisor_override=None),
                  C(F((1, 2, 5, 5)), kernel=(2, 2), stride=(2, 2), padding=(1, 1), ceil_mode=True,
                    count_include_pad=False, divisor_override=None),
                  C(F((1, 1, 4, 4)), kernel=(2, 2), stride=(1, 1), padding=(0, 0), ceil_mode=False,
                    count_include_pad=True, divisor_override=3)],
     _np_avg_pool, tf=lambda x: FN.avg_pool2d(x, 3, 2, 1))
spec("adaptive_avg_pool", [C(F((2, 2, 5, 7)), output_size=(2, 3)), C(F((1, 3, 4, 4)), output_size=(1, 1))],
     _np_adaptive_avg_pool, tf=lambda x: FN.adaptive_avg_pool2d(x, (2, 3)))


# -- normalisation ----------------------------------------------------------------------------------------------------
def _np_bn(x, weight, bias, eps):
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axes), x.var(axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    y = y if weight is None else y * weight.reshape(shape)
    return (y if bias is None else y + bias.reshape(shape)), mean, var


def _np_bn_eval(x, running_mean, running_var, weight, bias, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - running_mean.reshape(shape)) / np.sqrt(running_var.reshape(shape) + eps)
    return (y if weight is None else y * weight.reshape(shape)) + (0 if bias is None else bias.reshape(shape))


def _np_layer_norm(x, weight, bias, ndim, eps):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return (y if weight is None else y * weight) + (0 if bias is None else bias)


def _np_group_norm(x, weight, bias, num_groups, eps):
    xg = x.reshape(x.shape[0], num_groups, -1)
    y = ((xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (y if weight is None else y * weight.reshape(shape)) + (0 if bias is None else bias.reshape(shape))


def _np_stats_update(running_mean, running_var, mean, var, momentum, n):
    return (1 - momentum) * running_mean + momentum * mean, (1 - momentum) * running_var + momentum * var * n / (n - 1)


spec("batch_norm", [C(F((4, 3)), F((3,)), F((3,)), eps=1e-5), C(F((2, 2, 2, 3)), None, None, eps=1e-3)], _np_bn,
     tf=lambda x, w, b: FN.batch_norm(x, None, None, w, b, training=True),
     tf_ref=lambda x, w, b: xla_ops.nn.batch_norm.fwd(x, w, b, 1e-5)[0])
spec("batch_norm_eval", [C(F((4, 3)), F((3,)), F((3,), POS), F((3,)), F((3,)), eps=1e-5),
                         C(F((2, 2, 3)), F((2,)), F((2,), POS), None, None, eps=1e-5)],
     _np_bn_eval, tf=lambda x, m, v, w, b: FN.batch_norm(x, m, v, w, b, training=False))
spec("batch_norm_stats_update", [C(F((3,)), F((3,), POS), F((3,)), F((3,), POS), 0.1, n=8)], _np_stats_update,
     diff=False, why="called by tapeflow.nn.functional.batch_norm in training (test_nn checks running statistics)")
spec("layer_norm", [C(F((2, 3, 4)), F((4,)), F((4,)), ndim=1, eps=1e-5),
                    C(F((2, 3, 4)), F((3, 4)), None, ndim=2, eps=1e-5), C(F((3, 2)), None, None, ndim=1, eps=1e-5)],
     _np_layer_norm, tf=lambda x, w, b: FN.layer_norm(x, (4,), w, b))
spec("group_norm", [C(F((2, 4, 3)), F((4,)), F((4,)), num_groups=2, eps=1e-5),
                    C(F((1, 6, 2, 2)), None, None, num_groups=3, eps=1e-5)],
     _np_group_norm, tf=lambda x, w, b: FN.group_norm(x, 2, w, b))


# -- embedding, activations, one-hot ------------------------------------------------------------------------------------
spec("embedding", [C(F((5, 3)), I((2, 4), 5), padding_idx=None), C(F((4, 2)), A([[1, 3], [3, 0]]), padding_idx=None),
                   C(F((4, 2)), A([1, 2, 1]), padding_idx=1, grad=False),
                   # Forward only: scale_grad_by_freq makes the gradient differ from the forward's derivative
                   # on purpose; tests/test_nn_extras.py checks it against PyTorch.
                   C(F((4, 2)), A([[1, 3], [3, 3]]), padding_idx=None, scale_grad_by_freq=True, grad=False)],
     lambda weight, indices, padding_idx=None, scale_grad_by_freq=False: weight[indices],
     tf=lambda w, i: FN.embedding(i, w))


def _np_embedding_renorm(weight, indices, max_norm, norm_type=2.0):
    w = weight.copy()
    for r in np.unique(indices):
        n = np.linalg.norm(w[r], ord=norm_type)
        if n > max_norm:
            w[r] *= max_norm / (n + 1e-7)
    return w


def _renormed(w, i):
    """`F.embedding` with `max_norm` renormalises the looked-up rows of `w` in place."""
    FN.embedding(i, w, max_norm=2.0)
    return w


spec("embedding_renorm", [C(F((6, 3)), A([[0, 2, 2], [5, 1, 0]]), max_norm=2.0, norm_type=2.0),
                          C(F((5, 4)), A([4, 1, 3]), max_norm=1.5, norm_type=1.0),
                          C(F((5, 4)), A([0, 1, 2, 3]), max_norm=1.0, norm_type=float("inf")),
                          C(F((3, 2)), A([2]), max_norm=0.5, norm_type=3.0)],
     _np_embedding_renorm, diff=False, tf=_renormed)


def _np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))


spec("gelu", [C(F((3, 4))), C(F((5,)), approximate="tanh"), C(F(()))], _np_gelu, tf=lambda x: FN.gelu(x))
spec("silu", [C(F((3, 4))), C(F(()))], lambda x: x * sp.expit(x), tf=lambda x: FN.silu(x))
spec("elu", [C(F((3, 4)), alpha=1.0), C(F((5,)), alpha=0.5)],
     lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))), dom=NOKINK,
     tf=lambda x: FN.elu(x))
spec("leaky_relu", [C(F((3, 4)), negative_slope=0.01), C(F(()), negative_slope=0.2)],
     lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x), dom=NOKINK,
     tf=lambda x: FN.leaky_relu(x))
spec("softplus", [C(F((3, 4)), beta=1.0, threshold=20.0), C(F((4,), lambda r, s: r.uniform(-3, 3, s) * 4),
                                                              beta=2.0, threshold=5.0)],
     lambda x, beta=1.0, threshold=20.0: np.where(x * beta > threshold, x, np.logaddexp(x * beta, 0) / beta),
     tf=lambda x: FN.softplus(x))
spec("celu", [C(F((3, 4)), alpha=1.0), C(F((5,)), alpha=0.5)],
     lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha)), dom=NOKINK,
     tf=lambda x: FN.celu(x))


def _np_clip_between(lo, hi):
    """A domain with values below `lo`, between `lo` and `hi`, and above `hi`, away from both kinks."""
    def dom(rng, s):
        below, inside, above = lo - rng.uniform(0.2, 1.0, s), lo + (hi - lo) * rng.uniform(0.1, 0.9, s), \
            hi + rng.uniform(0.2, 1.0, s)
        return np.choose(rng.integers(0, 3, s), [below, inside, above])
    return dom


spec("hardtanh", [C(F((3, 4), _np_clip_between(-1, 1))), C(F((5,), _np_clip_between(0, 6)), min_val=0.0, max_val=6.0)],
     lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val), tf=lambda x: FN.hardtanh(x))
spec("hardsigmoid", [C(F((3, 4), _np_clip_between(-3, 3)))], lambda x: np.clip(x + 3, 0, 6) / 6,
     tf=lambda x: FN.hardsigmoid(x))
spec("hardswish", [C(F((3, 4), _np_clip_between(-3, 3)))], lambda x: x * np.clip(x + 3, 0, 6) / 6,
     tf=lambda x: FN.hardswish(x))
spec("softshrink", [C(F((3, 4), _np_clip_between(-0.5, 0.5)), lambd=0.5)],
     lambda x, lambd=0.5: np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0)),
     tf=lambda x: FN.softshrink(x))
spec("hardshrink", [C(F((3, 4), _np_clip_between(-0.5, 0.5)), lambd=0.5)],
     lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0), tf=lambda x: FN.hardshrink(x))
spec("threshold", [C(F((3, 4), NOKINK), threshold=0.0, value=-2.0)],
     lambda x, threshold, value: np.where(x > threshold, x, value), tf=lambda x: FN.threshold(x, 0.0, -2.0))
spec("one_hot", [C(I((4,), 3), num_classes=3), C(I((2, 3), 5), num_classes=6)],
     lambda x, num_classes: np.eye(num_classes, dtype=np.int64)[x], diff=False,
     tf=lambda x: FN.one_hot(x, 3))
spec("backward_hook", [C(F((3,)), F((2, 2))), C(F(()))], lambda *xs: tuple(xs),
     tf=None, why="inserted by Module.register_full_backward_hook; tests/test_nn.py covers the hooks")


# -- losses -----------------------------------------------------------------------------------------------------------
def _np_log_softmax(x, axis):
    return x - sp.logsumexp(x, axis=axis, keepdims=True)


def _np_class_loss(logp, target, weight, ignore_index, reduction, smoothing, probs, cax):
    c = logp.shape[cax]
    w = np.ones(c) if weight is None else weight
    wshape = [1] * logp.ndim
    wshape[cax] = c
    wb = w.reshape(wshape)
    if probs:
        t = target * (1 - smoothing) + smoothing / c
        loss = -(t * wb * logp).sum(cax)
        denom = logp.size // c
    else:
        mask = target != ignore_index
        safe = np.where(mask, target, 0)
        picked = np.take_along_axis(logp, np.expand_dims(safe, cax), cax).squeeze(cax)
        nll = -w[safe] * picked * mask
        smooth = -(wb * logp).sum(cax) * mask
        loss = (1 - smoothing) * nll + smoothing / c * smooth
        denom = (w[safe] * mask).sum()
    if reduction == "mean":
        return np.asarray(loss.sum() / denom)
    return np.asarray(loss.sum()) if reduction == "sum" else loss


def _np_cross_entropy(x, target, weight, ignore_index=-100, reduction="mean", label_smoothing=0.0, probs=False):
    cax = 1 if x.ndim > 1 else 0
    return _np_class_loss(_np_log_softmax(x, cax), target, weight, ignore_index, reduction, label_smoothing, probs,
                          cax)


def _np_nll_loss(x, target, weight, ignore_index=-100, reduction="mean"):
    return _np_class_loss(x, target, weight, ignore_index, reduction, 0.0, False, 1 if x.ndim > 1 else 0)


_W = A([0.5, 1.0, 2.0], np.float64)
spec("cross_entropy", [C(F((4, 3)), I((4,), 3), None),
                       C(F((5, 3)), I((5,), 3), None, ignore_index=1, label_smoothing=0.2),
                       C(F((6, 3)), I((6,), 3), None, ignore_index=2),
                       C(F((4, 3)), F((4, 3), PROB), None, probs=True, label_smoothing=0.1),
                       C(F((2, 3, 2)), I((2, 2), 3), None, reduction="none"),
                       C(F((3,)), I((), 3), None, reduction="sum"),
                       C(F((5, 3)), I((5,), 3), _W, ignore_index=0, label_smoothing=0.1, grad=False)],
     _np_cross_entropy, tf=lambda x, t: FN.cross_entropy(x, t))
spec("nll_loss", [C(F((4, 3)), I((4,), 3), None), C(F((2, 3, 2)), I((2, 2), 3), None, reduction="none"),
                  C(F((5, 3)), I((5,), 3), _W, ignore_index=2, grad=False)],
     _np_nll_loss, tf=lambda x, t: FN.nll_loss(x, t))


def _reduce(loss, reduction):
    if reduction == "mean":
        return np.asarray(loss.mean())
    return np.asarray(loss.sum()) if reduction == "sum" else loss


def _np_smooth_l1(x, y, reduction="mean", beta=1.0):
    d = np.abs(x - y)
    return _reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _np_bce(x, y, weight, reduction="mean"):
    loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _np_bce_logits(x, y, weight, pos_weight, reduction="mean"):
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * y * -np.logaddexp(0, -x) + (1 - y) * -np.logaddexp(0, x))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _np_kl_div(x, target, reduction="mean", log_target=False):
    if log_target:
        loss = np.exp(target) * (target - x)
    else:
        loss = np.where(target > 0, target * (np.log(np.where(target > 0, target, 1)) - x), 0.0)
    if reduction == "batchmean":
        return np.asarray(loss.sum() / x.shape[0])
    return _reduce(loss, reduction)


_PAIR = (F((3, 4)), F((3, 4)))
spec("mse_loss", [C(*_PAIR), C(*_PAIR, reduction="none"), C(F((2,)), F((2,)), reduction="sum")],
     lambda x, y, reduction="mean": _reduce((x - y) ** 2, reduction), tf=lambda x, y: FN.mse_loss(x, y))
spec("l1_loss", [C(*_PAIR), C(*_PAIR, reduction="sum")], lambda x, y, reduction="mean": _reduce(np.abs(x - y), reduction),
     tf=lambda x, y: FN.l1_loss(x, y))
spec("smooth_l1_loss", [C(*_PAIR, beta=1.0), C(*_PAIR, reduction="none", beta=0.5)], _np_smooth_l1,
     tf=lambda x, y: FN.smooth_l1_loss(x, y))
spec("huber_loss", [C(*_PAIR, delta=1.0), C(*_PAIR, reduction="none", delta=0.5)],
     lambda x, y, reduction="mean", delta=1.0: _reduce(
         np.where(np.abs(x - y) < delta, 0.5 * (x - y) ** 2, delta * (np.abs(x - y) - 0.5 * delta)), reduction),
     tf=lambda x, y: FN.huber_loss(x, y))
spec("binary_cross_entropy", [C(F((3, 4)), F((3, 4)), None), C(F((5,)), F((5,)), F((5,), POS), reduction="sum")],
     _np_bce, dom=PROB, tf=lambda x, y: FN.binary_cross_entropy(x, y))
spec("binary_cross_entropy_with_logits",
     [C(F((3, 4)), F((3, 4), PROB), None, None), C(F((2, 3)), F((2, 3), PROB), F((2, 3), POS), F((3,), POS),
                                                    reduction="none")],
     _np_bce_logits, tf=lambda x, y: FN.binary_cross_entropy_with_logits(x, y))
spec("kl_div", [C(F((3, 4)), F((3, 4), POS)), C(F((3, 4)), F((3, 4)), reduction="batchmean", log_target=True)],
     _np_kl_div, tf=lambda x, t: FN.kl_div(x, t))


# -- fused optimizer update over a parameter group ----------------------------------------------------------------
def _np_sgd_many(*arrays, n, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
                 first=None):
    ps, gs, bufs, lr = arrays[:n], arrays[n:2 * n], arrays[2 * n:3 * n], arrays[3 * n]
    new_ps, new_bufs = [], []
    for p, g, buf, f in zip(ps, gs, bufs, first or (False,) * n):
        d = (-g if maximize else g) + weight_decay * p
        if momentum:
            buf = d if f else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        new_ps.append(p - lr * d)
        new_bufs.append(buf)
    return (*new_ps, *new_bufs)


spec("sgd_update_many", [C(F((3,)), F((2, 2)), F((3,)), F((2, 2)), F((3,)), F((2, 2)), 0.1, n=2, momentum=0.9,
                           dampening=0.1, weight_decay=0.01, nesterov=True, first=(False, True)),
                         C(F((3,)), F((4,)), F((3,)), F((4,)), F((3,)), F((4,)), 0.05, n=2, momentum=0.5, maximize=True)],
     _np_sgd_many, diff=False, why="called by tapeflow.optim.SGD.step(); tests/test_optim.py covers that path")



# -- recurrent layers ----------------------------------------------------------------------------------------
def _np_rnn_layer(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr, mask=None, mode="LSTM", nonlinearity="tanh",
                  reverse=False):
    sig = sp.expit
    outs = []
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in steps:
        h_old, c_old = h, c
        gi = x[t] @ w_ih.T + (0 if b_ih is None else b_ih)
        gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
        if mode == "LSTM":
            i, f, g, o = np.split(gi + gh, 4, axis=-1)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
            h = h if w_hr is None else h @ w_hr.T
        elif mode == "GRU":
            (ir, iz, i_n), (hr, hz, h_n) = np.split(gi, 3, axis=-1), np.split(gh, 3, axis=-1)
            r, z = sig(ir + hr), sig(iz + hz)
            h = (1 - z) * np.tanh(i_n + r * h_n) + z * h
        else:
            h = np.tanh(gi + gh) if nonlinearity == "tanh" else np.maximum(gi + gh, 0)
        if mask is not None:  # a step the sequence does not have: state carried, output 0
            m = mask[t][:, None]
            outs.append(np.where(m, h, 0))
            h, c = np.where(m, h, h_old), (None if c is None else np.where(m, c, c_old))
        else:
            outs.append(h)
    out = np.stack(outs[::-1] if reverse else outs)
    return out, h, (np.zeros(()) if c is None else c)


spec("rnn_layer", [C(F((4, 2, 3)), F((2, 2)), F((2, 5)), F((20, 3)), F((20, 2)), F((20,)), F((20,)), F((2, 5)), None,
                     mode="LSTM"),
                   C(F((3, 2, 3)), F((2, 4)), None, F((12, 3)), F((12, 4)), F((12,)), F((12,)), None, None,
                     mode="GRU", reverse=True),
                   C(F((3, 1, 2)), F((1, 3)), None, F((3, 2)), F((3, 3)), None, None, None, None, mode="RNN",
                     nonlinearity="tanh"),
                   C(F((4, 3, 2)), F((3, 2)), F((3, 2)), F((8, 2)), F((8, 2)), F((8,)), F((8,)), None, B((4, 3)),
                     mode="LSTM", reverse=True)],
     _np_rnn_layer,
     tf=lambda x, h, c, wi, wh, bi, bh, wr, m=None: tp._dispatch.dispatch(
         xla_ops.nn.rnn_layer, (x, h, c, wi, wh, bi, bh, wr, m), (("mode", "LSTM"),)))


def _np_cdist(x1, x2, p):
    diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(x1.dtype)
    if p == math.inf:
        return diff.max(-1)
    return (diff ** p).sum(-1) ** (1 / p)


spec("cdist", [C(F((3, 2)), F((4, 2)), p=2.0), C(F((2, 3, 2)), F((1, 4, 2)), p=1.0), C(F((3, 2)), F((2, 2)), p=3.0),
               C(F((3, 2)), F((2, 2)), p=1.5), C(F((3, 2)), F((2, 2)), p=math.inf), C(F((2, 2)), F((2, 2)), p=0.0)],
     _np_cdist, tf=lambda x1, x2: tp.cdist(x1, x2), fd=False,
     why="PyTorch's derivative (`_cdist_backward`) is compared with PyTorch's in tests/test_torch_oracle.py; p=1 "
         "and p=inf have kinks, p=0 has a zero derivative")

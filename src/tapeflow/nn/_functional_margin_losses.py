"""Margin, ranking, embedding and likelihood losses of `tapeflow.nn.functional`.

Each is a composition of tapeflow ops laid out as PyTorch lays it out, so the gradient at every kink
comes from the same parts: `clamp_min` passes the gradient at 0 (margin_ranking, hinge_embedding,
cosine_embedding, triplet), while the multi-class margin losses count a term only when it is strictly
positive (`relu`), as PyTorch's kernels do.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtype, _ops
from .._factories import _check_fits, arange, full_like, ones_like, zeros_like
from .._ops._checks import index_bounds
from .._tensor import Tensor
from .._toplevel import can_cast
from ..amp import full_precision
from ._functional_distance import pairwise_distance
from ._functional_losses import _reduction, not_differentiable

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "multilabel_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss"]


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_reduction(reduction: str, message: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} {message}")


def _relu(x: Tensor) -> Tensor:
    # NOTE: strictly positive terms only (gradient 0 at the kink), as PyTorch's margin kernels count them.
    return _ops.relu(x)


@full_precision
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean") -> Tensor:
    """`max(0, -target * (input1 - input2) + margin)`: ranks `input1` above `input2` where `target` is 1.

    Arguments:
        input1, input2: scores of the same number of dimensions as `target`.
        target: 1 or -1 per pair.
        margin: the required gap.
        reduction: "none" | "mean" | "sum".

    Example:
        >>> import tapeflow as tp
        >>> F = tp.nn.functional
        >>> F.margin_ranking_loss(tp.tensor([1.0, 0.2]), tp.tensor([0.5, 0.5]), tp.tensor([1.0, 1.0]), margin=0.1)
        tensor(0.2000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce(_ops.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@full_precision
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """`input` where `target` is 1, `max(0, margin - input)` where it is -1 (distances of similar/dissimilar pairs).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.hinge_embedding_loss(tp.tensor([0.3, 0.4]), tp.tensor([1.0, -1.0]))
        tensor(0.4500)
    """
    reduction = _reduction(reduction, size_average, reduce)
    zeros = zeros_like(input)
    if input._raw.dtype.kind in "biu":
        # PyTorch fills the margin into a tensor of the input's dtype (refusing one it cannot hold) and subtracts
        # there: an integer input keeps its dtype, wrapping as it does, and a bool one is refused.
        _check_fits(float(margin), input._raw.dtype)
        gap = full_like(input, float(margin)) - input
    else:
        gap = margin - input
    hinge = _ops.where(target != 1, _ops.clamp_min(gap, 0), zeros)
    return _reduce(hinge + _ops.where(target != -1, input, zeros), reduction)


@full_precision
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Two-class logistic loss `log(1 + exp(-target * input))` for targets 1 or -1.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.soft_margin_loss(tp.tensor([0.0, 2.0]), tp.tensor([1.0, -1.0]))
        tensor(1.4100)
    """
    reduction = _reduction(reduction, size_average, reduce)
    not_differentiable("soft_margin_loss", target=target)
    # PyTorch computes in the input's dtype, in place: the product must cast back to it, and an integer one
    # cannot hold exp's float result.
    product = -input * target
    if product.dtype is not input.dtype:
        if not can_cast(product.dtype, input.dtype):
            raise _cannot_cast(product.dtype, input.dtype)
        product = product.to(input.dtype)
    if input._raw.dtype.kind in "iu":
        raise _cannot_cast(_dtype.get_default_dtype(), input.dtype)
    return _reduce(_ops.log1p(_ops.exp(product)), reduction)


def _cannot_cast(src, dst) -> RuntimeError:
    s = _dtype.SCALAR_NAMES
    return RuntimeError(f"result type {s[src.name]} can't be cast to the desired output type {s[dst.name]}")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean") -> Tensor:
    """Per-class logistic loss averaged over the classes (last dimension), one value per sample.

    Arguments:
        input: logits `(N, C)` or `(C,)`.
        target: 0/1 labels of the same shape.
        weight: per-class weights, broadcast against `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.multilabel_soft_margin_loss(tp.zeros(2, 3), tp.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))
        tensor(0.6931)
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    from .functional import logsigmoid

    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.ndim - 1) / input.shape[input.ndim - 1]
    _check_reduction(reduction, "is not valid")
    return _reduce(loss, reduction)


def _long_target(target) -> None:
    if target.dtype.is_floating_point or target.dtype.is_complex:
        raise RuntimeError(f"expected scalar type Long but found {_ops_type_name(target)}")


def _ops_type_name(t) -> str:
    from .._dtype import CPP_NAMES

    return CPP_NAMES.get(t.dtype.name, t.dtype.name)


@full_precision
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean") -> Tensor:
    """Multi-class hinge loss: `sum_{j != y} w[y] * max(0, margin - x[y] + x[j])**p / C` per sample.

    Arguments:
        input: scores `(N, C)` or `(C,)`.
        target: class indices `(N,)` or `()`.
        p: 1 or 2.
        margin: the required gap.
        weight: per-class weights `(C,)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.multi_margin_loss(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([3]))
        tensor(0.3250)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if input.ndim > 2 or input.numel() == 0 and input.ndim != 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    c = input.shape[-1] if input.ndim else 1
    n = input.shape[0] if input.ndim == 2 else 1
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {_dtype.SCALAR_NAMES[target.dtype.name]}")
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _long_target(target)
    bounds = index_bounds(target)
    if bounds is not None and (bounds[0] < 0 or bounds[1] >= c):
        raise RuntimeError("target out of range")
    not_differentiable("multi_margin_loss", weight=weight)
    x = input.reshape(n, c)
    y = target.reshape(n, 1).long()
    z = margin - x.gather(1, y) + x
    h = _relu(z)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[y.reshape(n)].reshape(n, 1)
    h = _ops.where(arange(c) == y, zeros_like(h), h)
    loss = h.sum(1) / c
    if reduction == "none":
        return loss.reshape(target.shape) if input.ndim == 2 else loss.reshape(())
    return _reduce(loss, reduction)


@full_precision
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Multi-label hinge loss: each target class against each non-target class, averaged over classes.

    `target` holds class indices padded with -1: the indices before the first -1 are the sample's labels.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> tp.nn.functional.multilabel_margin_loss(x, tp.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if input.ndim > 2 or input.numel() == 0 and input.ndim != 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _long_target(target)
    c = input.shape[-1] if input.ndim else 1
    bounds = index_bounds(target)
    if bounds is not None and (bounds[0] < -1 or bounds[1] >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(-1, c)
    y = target.reshape(-1, c).long()
    valid = (y < 0).long().cumsum(-1) == 0  # slots before the first -1
    classes = arange(c)
    hits = (y.unsqueeze(-1) == classes) & valid.unsqueeze(-1)  # (n, slot, class)
    is_target = hits.any(1)
    x_target = x.gather(1, y.clamp_min(0))  # (n, slot)
    z = _relu(1 - x_target.unsqueeze(-1) + x.unsqueeze(1))
    keep = valid.unsqueeze(-1) & ~is_target.unsqueeze(1)
    loss = _ops.where(keep, z, zeros_like(z)).sum((1, 2)) / c
    if reduction == "none":
        return loss if input.ndim == 2 else loss.reshape(())
    return _reduce(loss, reduction)


_EPSILON = 1e-12


@full_precision
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean") -> Tensor:
    """`1 - cos(x1, x2)` where `target` is 1, `max(0, cos(x1, x2) - margin)` where it is -1.

    Arguments:
        input1, input2: `(N, D)` with `target` `(N,)`, or `(D,)` with a 0-d `target`.

    Example:
        >>> import tapeflow as tp
        >>> a = tp.tensor([[1.0, 0.0], [1.0, 1.0]])
        >>> b = tp.tensor([[0.0, 1.0], [1.0, 1.0]])
        >>> tp.nn.functional.cosine_embedding_loss(a, b, tp.tensor([1.0, -1.0]))
        tensor(1.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    dim = target.ndim
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(dim)
    denom = _ops.sqrt(((input1 * input1).sum(dim) + _EPSILON) * ((input2 * input2).sum(dim) + _EPSILON))
    cos = prod / denom
    zeros = zeros_like(cos)
    pos = _ops.where(target == 1, 1 - cos, zeros)
    neg = _ops.where(target == -1, _ops.clamp_min(cos - margin, 0), zeros)
    return _reduce(pos + neg, reduction)


def _triplet(anchor, positive, negative, distance, margin, swap, reduction):
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = _ops.minimum(dist_neg, distance(positive, negative))
    return _reduce(_ops.clamp_min(margin + dist_pos - dist_neg, 0), reduction)


@full_precision
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean") -> Tensor:
    """`max(0, d(a, p) - d(a, n) + margin)` with `d` the `p`-norm `pairwise_distance`.

    Arguments:
        anchor, positive, negative: `(N, D)` or `(D,)`.
        margin: must be positive.
        p, eps: of `pairwise_distance`.
        swap: use `min(d(a, n), d(p, n))` as the negative distance.

    Example:
        >>> import tapeflow as tp
        >>> a, p, n = tp.tensor([[0.0, 0.0]]), tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.5]])
        >>> tp.nn.functional.triplet_margin_loss(a, p, n, eps=0.0)
        tensor(0.5000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _triplet(anchor, positive, negative, lambda x1, x2: pairwise_distance(x1, x2, p, eps), margin, swap,
                    reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean") -> Tensor:
    """`triplet_margin_loss` with any `distance_function(x1, x2)` (default `pairwise_distance`).

    Example:
        >>> import tapeflow as tp
        >>> F = tp.nn.functional
        >>> a, p, n = tp.tensor([[1.0, 0.0]]), tp.tensor([[1.0, 0.1]]), tp.tensor([[0.0, 1.0]])
        >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y))
        tensor(0.0050)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    distance = distance_function if distance_function is not None else pairwise_distance
    return _triplet(anchor, positive, negative, distance, margin, swap, reduction)


@full_precision
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean") -> Tensor:
    """Negative log-likelihood of `target` under a Poisson distribution of rate `input` (or `exp(input)`).

    Arguments:
        log_input: `input` is the log-rate (`exp(input) - target * input`); else the rate
            (`input - target * log(input + eps)`).
        full: add Stirling's approximation of `log(target!)` (for targets above 1).
        eps: keeps the log finite when `log_input=False`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.poisson_nll_loss(tp.tensor([0.0, 1.0]), tp.tensor([1.0, 2.0]))
        tensor(0.8591)
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    _check_reduction(reduction, "is not a valid value for reduction")
    if log_input:
        loss = _ops.exp(input) - target * input
    else:
        loss = input - target * _ops.log(input + eps)
    if full:
        stirling = target * _ops.log(target) - target + 0.5 * _ops.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _any_negative(var: Tensor) -> bool:
    a = var._data
    if isinstance(a, jax.core.Tracer) or a.size == 0:
        return False
    return bool(jnp.any(a < 0))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean") -> Tensor:
    """Negative log-likelihood of `target` under a Gaussian of mean `input` and variance `var`.

    `0.5 * (log(max(var, eps)) + (input - target)**2 / max(var, eps))` (+ `0.5 * log(2 pi)` when `full`);
    the clamp passes the gradient through unchanged, as in PyTorch.

    Arguments:
        var: the input's shape, the input's shape without its last dimension, the input's shape with one
            dimension of size 1, or a float.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.gaussian_nll_loss(tp.tensor([0.0, 1.0]), tp.tensor([1.0, 1.0]), tp.tensor([1.0, 2.0]))
        tensor(0.4233)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif _any_negative(var):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction, "is not valid")
    # NOTE: the clamp is invisible to autograd (PyTorch clamps a clone under no_grad).
    var = var + (_ops.clamp_min(var, eps) - var).detach()
    loss = 0.5 * (_ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)

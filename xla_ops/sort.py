"""Sorting and selection."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op
from .reduce import _even_vjp, _indexed_vjp


def _sort(x, dim=-1, descending=False):
    idx = jnp.argsort(-x if descending else x, axis=dim, stable=True)
    return jnp.take_along_axis(x, idx, axis=dim), idx.astype(jnp.int64)


def _topk(x, k, dim=-1, largest=True, sorted=True):
    xm = jnp.moveaxis(x, dim, -1)
    vals, idx = jax.lax.top_k(xm if largest else -xm, k)
    vals = vals if largest else -vals
    return jnp.moveaxis(vals, -1, dim), jnp.moveaxis(idx, -1, dim).astype(jnp.int64)


sort = op("sort", _sort)
topk = op("topk", _topk)
argsort = op("argsort", lambda x, dim=-1, descending=False: _sort(x, dim, descending)[1], differentiable=False)


# -- order statistics ---------------------------------------------------------------------------------------
def _median(x):
    """The lower median of all elements; NaN if any element is NaN (NaN sorts last)."""
    flat = jnp.sort(x.reshape(-1))
    return flat[(flat.size - 1) // 2]


def _kth(x, k, dim, keepdim):
    """The `k`-th smallest along `dim` (1-based) and its index, by stable sort: ties pick the earliest."""
    vals, idx = _sort(x, dim)
    sel = (slice(None),) * dim + (slice(k - 1, k),)
    v, i = vals[sel], idx[sel]
    return (v, i) if keepdim else (jnp.squeeze(v, dim), jnp.squeeze(i, dim))


def _median_dim(x, dim, keepdim=False):
    v, i = _kth(x, (x.shape[dim] + 1) // 2, dim, keepdim)
    if jnp.issubdtype(x.dtype, jnp.inexact):  # a NaN along dim is the median, at its first position
        nan = jnp.isnan(x)
        has = jnp.any(nan, axis=dim, keepdims=keepdim)
        first = jnp.argmax(nan, axis=dim, keepdims=keepdim).astype(jnp.int64)
        v, i = jnp.where(has, jnp.nan, v).astype(x.dtype), jnp.where(has, first, i)
    return v, i


# NOTE: as in PyTorch, the full median shares its gradient evenly among the elements equal to it.
median = op("median", _median, lambda g, ans, x: _even_vjp(g, ans, x), saves=("x", "ans"), node="MedianBackward0")
median_dim = op("median_dim", _median_dim, _indexed_vjp, saves=("ans",), node="MedianBackward1")
kthvalue = op("kthvalue", lambda x, k, dim, keepdim=False: _kth(x, k, dim, keepdim),
              lambda g, ans, x, k, dim, keepdim=False: _indexed_vjp(g, ans, x, dim, keepdim), saves=("ans",),
              node="KthvalueBackward0")

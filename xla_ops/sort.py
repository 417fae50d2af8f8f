"""Sorting and selection."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op
from .reduce import _indexed_vjp, _ties_vjp


def _sort(x, dim=-1, descending=False):
    idx = jnp.argsort(x, axis=dim, stable=True, descending=descending)  # (NaN largest, ties in input order)
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
    last = flat[-1]
    return jnp.where(jnp.isnan(last), last, flat[(flat.size - 1) // 2])


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


median = op("median", _median, _ties_vjp, saves=("x", "ans"), node="MedianBackward0")
median_dim = op("median_dim", _median_dim, _indexed_vjp, saves=("ans",), node="MedianBackward1")
kthvalue = op("kthvalue", lambda x, k, dim, keepdim=False: _kth(x, k, dim, keepdim),
              lambda g, ans, x, k, dim, keepdim=False: _indexed_vjp(g, ans, x, dim, keepdim), saves=("ans",),
              node="KthvalueBackward0")


# -- searching and counting (integer or bool results: never differentiable) -----------------------------------------
def _searchsorted(sorted_sequence, values, right=False, out_int32=False):
    """Insertion points of `values` in the last dimension of `sorted_sequence` (whose leading dimensions, if any,
    match those of `values`)."""
    side = "right" if right else "left"
    if sorted_sequence.ndim == 1:
        out = jnp.searchsorted(sorted_sequence, values, side=side)
    else:
        lead = sorted_sequence.shape[:-1]
        seq = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
        vals = values.reshape(seq.shape[0], -1)
        out = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))(seq, vals).reshape(lead + values.shape[-1:])
    return out.astype(jnp.int32 if out_int32 else jnp.int64)


def _histc(x, bins, min, max):
    """Counts in `bins` equal bins over `[min, max]` (the data's range when both are 0), as PyTorch bins them:
    position `(x - min) * bins / (max - min)` rounded down, `max` itself in the last bin."""
    lo, hi = jnp.asarray(min, x.dtype), jnp.asarray(max, x.dtype)
    if min == max:
        lo, hi = jnp.min(x, initial=jnp.inf), jnp.max(x, initial=-jnp.inf)
        same = lo == hi
        lo, hi = jnp.where(same, lo - 1, lo).astype(x.dtype), jnp.where(same, hi + 1, hi).astype(x.dtype)
    inside = (x >= lo) & (x <= hi)
    pos = jnp.floor((x - lo) * jnp.asarray(bins, x.dtype) / (hi - lo))
    pos = jnp.where(inside, jnp.clip(pos, 0, bins - 1), 0).astype(jnp.int64)
    return jnp.zeros(bins, x.dtype).at[pos.reshape(-1)].add(inside.reshape(-1).astype(x.dtype))


def _histogram(x, edges, weight=None, density=False):
    """Counts (or summed weights) of `x` between consecutive `edges`, the last bin closed on the right."""
    n = edges.shape[0] - 1
    pos = jnp.searchsorted(edges, x, side="right") - 1
    pos = jnp.where(x == edges[-1], n - 1, pos)
    inside = (x >= edges[0]) & (x <= edges[-1])
    w = jnp.ones(x.shape, x.dtype) if weight is None else weight.astype(x.dtype)
    hist = jnp.zeros(n, x.dtype).at[jnp.where(inside, pos, 0).reshape(-1)].add(jnp.where(inside, w, 0).reshape(-1))
    if density:
        hist = hist / (jnp.sum(hist) * (edges[1:] - edges[:-1]))
    return hist


searchsorted = op("searchsorted", _searchsorted, differentiable=False)
histc = op("histc", _histc, differentiable=False)
histogram = op("histogram", lambda x, edges, density=False: _histogram(x, edges, None, density),
               differentiable=False)
histogram_weighted = op("histogram_weighted", lambda x, edges, weight, density=False:
                        _histogram(x, edges, weight, density), differentiable=False)
isin = op("isin", lambda elements, test_elements, invert=False:
          jnp.isin(elements, test_elements, invert=invert), differentiable=False)

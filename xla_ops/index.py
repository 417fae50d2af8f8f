"""Indexing with integer arrays: advanced indexing, index_put, gather/scatter."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ._op import op, unbroadcast
from .shape import decode_index

ARRAY = "T"  # placeholder in an index spec for the next index array


def build_index(spec, arrays):
    """Merge a static index spec with its index arrays into one NumPy-style index."""
    it = iter(arrays)
    return tuple(next(it) if i == ARRAY else i for i in decode_index(spec))


def grid_index(idx, dim):
    """Index tuple that puts `idx` along `dim` and the identity along every other axis."""
    grids = list(jnp.meshgrid(*(jnp.arange(n) for n in idx.shape), indexing="ij", sparse=True))
    grids[dim] = idx
    return tuple(grids)


# Indexing is linear in the indexed tensor (and in the written values): see `Op`'s `linear`.
index = op("index", lambda x, *idx, spec: x[build_index(spec, idx)], node="IndexBackward0", linear=True, edges=(0,))


def _index_put(x, v, *idx, spec, accumulate=False):
    at = x.at[build_index(spec, idx)]
    v = jnp.asarray(v, x.dtype) if not hasattr(v, "dtype") else v.astype(x.dtype)
    return at.add(v) if accumulate else at.set(v)


def _index_put_vjp(g, ans, x, v, *idx, spec, accumulate=False):
    # NOTE: PyTorch's rule: `values` gets the gradient read at the indices, so with a position named twice every
    # value written there gets it (JAX's transpose of the write gives it to the one that stayed).
    where = build_index(spec, idx)
    gx = g if accumulate else g.at[where].set(0)
    gv = unbroadcast(g[where], v) if hasattr(v, "shape") else None
    return (gx, gv, *(None for _ in idx))


index_put = op("index_put", _index_put, _index_put_vjp, saves=("idx",), node="IndexPutBackward0", linear="separable",
               edges=(0, 1))
def _zero_d_as_one_d(fn, out_shape):
    """`fn(x, index, *rest, dim)` reading a 0-d `x`, `index` or array among `rest` as a vector of one
    element, as PyTorch's gather and scatter do; the result gets `out_shape(x, index)`."""
    def run(x, index, *rest, dim):
        if x.ndim and index.ndim:
            return fn(x, index, *rest, dim=dim)
        rest = tuple(r.reshape(1) if getattr(r, "ndim", None) == 0 else r for r in rest)
        return fn(x.reshape(-1), index.reshape(-1), *rest, dim=0).reshape(out_shape(x, index))
    return run


def _gather(x, index, dim):
    return x[grid_index(index, dim)]


def _scatter(x, index, src, dim):
    return x.at[grid_index(index, dim)].set(src[tuple(slice(0, n) for n in index.shape)]
                                            if getattr(src, "ndim", 0) else src)


def _scatter_add(x, index, src, dim):
    return x.at[grid_index(index, dim)].add(src[tuple(slice(0, n) for n in index.shape)])


def _scatter_vjp(g, ans, x, index, src, dim):
    # NOTE: PyTorch's rule: `src` gets the gradient gathered at `index`, so with a position named twice every
    # value written there gets it, not only the one that stayed (JAX's transpose of the write).
    shape = g.shape
    if not (len(shape) and index.ndim):
        g, index, dim = g.reshape(-1), index.reshape(-1), 0
    where = grid_index(index, dim)
    gx = g.at[where].set(0).reshape(shape)
    if not hasattr(src, "shape"):  # a number written
        return gx, None, None
    picked = g[where]
    if len(src.shape) == 0:  # one value written everywhere (a number, or the 0-d case)
        return gx, None, jnp.sum(picked).astype(src.dtype)
    if tuple(src.shape) != picked.shape:  # (a larger src: only its leading block is read)
        picked = jnp.zeros(src.shape, g.dtype).at[tuple(slice(0, n) for n in picked.shape)].set(picked)
    return gx, None, picked.astype(src.dtype)


gather = op("gather", _zero_d_as_one_d(_gather, lambda x, index: index.shape), linear=True, edges=(0,))
scatter = op("scatter", _zero_d_as_one_d(_scatter, lambda x, index: x.shape), _scatter_vjp, saves=("index",),
             linear=True, edges=(0, 2), scalar_edges=(2,), overload_nodes={(2,): "ScatterBackward1"})
scatter_add = op("scatter_add", _zero_d_as_one_d(_scatter_add, lambda x, index: x.shape), linear=True,
                 edges=(0, 2))
index_select = op("index_select", lambda x, index, dim: jnp.take(x, index, axis=dim), linear=True, edges=(0,))
def _index_add(x, index, src, dim, alpha=1):
    if x.ndim == 0:  # a 0-d `x` is one slice along dim 0
        return _index_add(x.reshape(1), index, src, 0, alpha).reshape(())
    where = _index_where(index, dim)
    # (a 0-d index names one slice: `src`, with that slice's length-1 dim or without it, takes the slice's shape)
    return x.at[where].add((alpha * src if alpha != 1 else src).reshape(x[where].shape))


index_add = op("index_add", _index_add, linear=True, edges=(0, 2))
take = op("take", lambda x, index: jnp.ravel(x)[index], linear=True, edges=(0,))
# (`index`: the flat positions where the mask, broadcast with `x` to `shape`, is true; read on the host)
masked_select = op("masked_select", lambda x, index, shape: jnp.ravel(jnp.broadcast_to(x, shape))[index], linear=True,
                   edges=(0,), node="MaskedSelectBackward0")


# -- reductions into a copy: scatter_reduce, index_reduce ---------------------------------------------------
# `where` is the NumPy-style index of the written positions: `grid_index(index, dim)` for scatter_reduce (one
# index per element of `src`), `(:, ..., index)` for index_reduce (one index per slice of `source`).
def _scatter_where(index, dim):
    return grid_index(index, dim)


def _index_where(index, dim):
    return (slice(None),) * dim + (index,)


def _identity(dtype, reduce):
    """The value a position starts from when `include_self=False`: the reduction's identity."""
    if reduce in ("sum", "mean"):
        return jnp.zeros((), dtype)
    if reduce == "prod":
        return jnp.ones((), dtype)
    big = jnp.inf if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype).max
    return jnp.asarray(-big if reduce == "amax" else big, dtype)


def _counts(x, where, s, include_self):
    """How many values meet at each position (self included or not); 1 where none do, as a divisor."""
    n = jnp.full(x.shape, 1 if include_self else 0, x.dtype).at[where].add(jnp.ones(s.shape, x.dtype))
    return jnp.where(n == 0, jnp.ones((), x.dtype), n)


def _reduce_into(x, where, s, reduce, include_self):
    base = x if include_self else x.at[where].set(_identity(x.dtype, reduce))
    at = base.at[where]
    out = {"sum": at.add, "mean": at.add, "prod": at.multiply, "amax": at.max, "amin": at.min}[reduce](s)
    if reduce == "mean":  # integers divide with floor rounding, as in PyTorch
        n = _counts(x, where, s, include_self)
        out = out / n if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.floor_divide(out, n)
    return out


def _reduce_into_vjp(g, ans, x, where, s, reduce, include_self):
    """Gradients for `x` and `s` (PyTorch's rules: amax/amin share among every value equal to the result, `x`'s
    own counted even when `include_self=False`; prod divides out one zero at a time)."""
    if reduce == "sum":
        gx, gs = g, g[where]
    elif reduce == "mean":
        gx = g / _counts(g, where, s, include_self)
        gs = gx[where]
    elif reduce == "prod":
        ones = jnp.ones((), x.dtype)
        gx = g * _products(x.shape, where, s)
        zero = s == 0
        zeros_at = jnp.zeros(x.shape, g.dtype).at[where].add(zero.astype(g.dtype))[where]
        single = zero & (zeros_at == 1)
        without = _products(x.shape, where, jnp.where(single, ones, s)) * (x if include_self else ones)
        gs = jnp.where(single, (g * without)[where], (g * ans)[where] / jnp.where(zero, ones, s))
    else:
        x_is = (x == ans).astype(g.dtype)
        s_is = (s == ans[where]).astype(g.dtype)
        share = g / x_is.at[where].add(s_is)
        gx, gs = x_is * share, s_is * share[where]
    if not include_self:
        gx = gx.at[where].set(0)
    return gx, gs


def _products(shape, where, s):
    """The product of the values of `s` that meet at each position (1 where none do), by logarithms of their
    magnitudes, a count of negative signs and a count of zeros: JAX differentiates this (to any order), not a
    scatter-multiply with repeated indices."""
    if jnp.iscomplexobj(s):
        return jnp.ones(shape, s.dtype).at[where].multiply(s)
    zero = s == 0
    logs = jnp.zeros(shape, s.dtype).at[where].add(jnp.log(jnp.abs(jnp.where(zero, jnp.ones((), s.dtype), s))))
    negatives = jnp.zeros(shape, jnp.int32).at[where].add((s < 0).astype(jnp.int32))
    zeros = jnp.zeros(shape, jnp.int32).at[where].add(zero.astype(jnp.int32))
    sign = jnp.where(negatives % 2 == 1, -1, 1).astype(s.dtype)
    nonzero = sign * jnp.exp(logs)
    # A lone zero enters as itself (its value 0, its derivative the product of the others); two or more give a
    # product whose first derivatives are all 0.
    lone = jnp.zeros(shape, s.dtype).at[where].add(jnp.where(zero, s, jnp.zeros((), s.dtype)))
    return jnp.where(zeros == 0, nonzero, jnp.where(zeros == 1, nonzero * lone, jnp.zeros((), s.dtype)))


def _src_part(src, index):
    """The part of `src` that `index` covers (scatter reads `src[:index.shape]`)."""
    return src[tuple(slice(0, n) for n in index.shape)]


def _scatter_reduce(x, index, src, dim, reduce, include_self=True):
    return _reduce_into(x, _scatter_where(index, dim), _src_part(src, index), reduce, include_self)


def _scatter_reduce_vjp(g, ans, x, index, src, dim, reduce, include_self=True):
    gx, gs = _reduce_into_vjp(g, ans, x, _scatter_where(index, dim), _src_part(src, index), reduce, include_self)
    if gs.shape != src.shape:
        gs = jnp.zeros(src.shape, gs.dtype).at[tuple(slice(0, n) for n in index.shape)].set(gs)
    return gx, None, gs


def _index_reduce(x, index, source, dim, reduce, include_self=True):
    return _reduce_into(x, _index_where(index, dim), source, reduce, include_self)


def _index_reduce_vjp(g, ans, x, index, source, dim, reduce, include_self=True):
    gx, gs = _reduce_into_vjp(g, ans, x, _index_where(index, dim), source, reduce, include_self)
    return gx, None, gs


def _zeros_meet(x, where, s) -> bool:
    """Whether two or more zeros of `s` are written to one position (numbers on the host)."""
    zeros = np.zeros(x.shape, np.int64)
    np.add.at(zeros, where, np.asarray(s) == 0)
    return bool((zeros > 1).any())


def _refuse_prod(kind: str, source: str, where):
    """PyTorch's refusal: the gradient of `prod` for the written values has no derivative where two zeros meet."""
    def refusal(x, index, src, dim, reduce, include_self=True):
        if reduce != "prod":
            return {}
        x, index, src = np.asarray(x), np.asarray(index), np.asarray(src)
        if kind == "scatter_reduce":
            src = src[tuple(slice(0, n) for n in index.shape)]
        if not _zeros_meet(x, where(index, dim), src):
            return {}
        return {2: f"{kind}(): Double backward is unsupported for {source} when >1 zeros in {source} are scattered to "
                   f"the same position in self"}
    return refusal


def _np_grid(index, dim):
    return tuple(index if d == dim else np.broadcast_to(np.arange(n).reshape([-1 if i == d else 1 for i in
                                                                             range(index.ndim)]), index.shape)
                 for d, n in enumerate(index.shape))


scatter_reduce = op("scatter_reduce", _scatter_reduce, _scatter_reduce_vjp, saves=("x", "index", "src", "ans"),
                    double_backward=_refuse_prod("scatter_reduce", "src", _np_grid), edges=(0, 2))
index_reduce = op("index_reduce", _index_reduce, _index_reduce_vjp, saves=("x", "index", "source", "ans"),
                  double_backward=_refuse_prod("index_reduce", "source", _index_where), edges=(0, 2))


# -- writes into a copy --------------------------------------------------------------------------------------
# NOTE: with repeated indices one write wins, yet (as in PyTorch) every written value receives its gradient.
def _index_copy_vjp(g, ans, x, index, source, dim):
    where = _index_where(index, dim)
    return g.at[where].set(0), None, g[where].reshape(source.shape)


index_copy = op("index_copy", lambda x, index, source, dim: x.at[_index_where(index, dim)].set(
    source.reshape(x[_index_where(index, dim)].shape)), _index_copy_vjp, saves=("index",), linear=True, edges=(0, 2))


def _index_fill_vjp(g, ans, x, index, value, dim):
    # `value` counts once per position it fills, however often `index` names it.
    filled = jnp.zeros(g.shape, bool).at[_index_where(index, dim)].set(True)
    return jnp.where(filled, 0, g), None, jnp.sum(jnp.where(filled, g, 0)).reshape(jnp.shape(value))


index_fill = op("index_fill", lambda x, index, value, dim: x.at[_index_where(index, dim)].set(
    jnp.asarray(value).astype(x.dtype)), _index_fill_vjp, saves=("index",), linear=True, edges=(0, 2),
    scalar_edges=(2,), node="IndexFillBackward1", overload_nodes={(2,): "IndexFillBackward0"})


def _put(x, index, source, accumulate=False):
    at = x.reshape(-1).at[index.reshape(-1)]
    s = source.reshape(-1).astype(x.dtype)
    return (at.add(s) if accumulate else at.set(s)).reshape(x.shape)


def _put_vjp(g, ans, x, index, source, accumulate=False):
    flat = index.reshape(-1)
    gx = g if accumulate else g.reshape(-1).at[flat].set(0).reshape(g.shape)
    return gx, None, g.reshape(-1)[flat].reshape(source.shape)


put = op("put", _put, _put_vjp, saves=("index", "source"), linear=True)


def _masked_scatter(x, mask, source):
    """The elements of `source`, in order, at the positions where `mask` holds."""
    if source.size == 0:
        return x
    m = jnp.broadcast_to(mask, x.shape)
    pos = jnp.clip(jnp.cumsum(m.reshape(-1)) - 1, 0, source.size - 1)
    return jnp.where(m, source.reshape(-1)[pos].reshape(x.shape), x)


def _masked_scatter_vjp(g, ans, x, mask, source):
    m = jnp.broadcast_to(mask, g.shape).reshape(-1)
    # The k-th selected position took source element k: its gradient goes back there (the rest get zero).
    pos = jnp.where(m, jnp.cumsum(m) - 1, source.size)
    gs = jnp.zeros(source.size + 1, g.dtype).at[pos].add(g.reshape(-1))[:source.size].reshape(source.shape)
    return jnp.where(jnp.broadcast_to(mask, g.shape), jnp.zeros((), g.dtype), g), None, gs


masked_scatter = op("masked_scatter", _masked_scatter, _masked_scatter_vjp, saves=("mask",), linear=True,
                    edges=(0, 2))

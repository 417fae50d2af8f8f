"""Indexing with integer arrays: advanced indexing, index_put, gather/scatter."""

from __future__ import annotations

import jax.numpy as jnp

from ._op import op
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
index = op("index", lambda x, *idx, spec: x[build_index(spec, idx)], node="IndexBackward0", linear=True)


def _index_put(x, v, *idx, spec, accumulate=False):
    at = x.at[build_index(spec, idx)]
    v = jnp.asarray(v, x.dtype) if not hasattr(v, "dtype") else v.astype(x.dtype)
    return at.add(v) if accumulate else at.set(v)


index_put = op("index_put", _index_put, node="IndexPutBackward0", linear=True)
gather = op("gather", lambda x, index, dim: x[grid_index(index, dim)], linear=True)
scatter = op("scatter", lambda x, index, src, dim: x.at[grid_index(index, dim)].set(
    src[tuple(slice(0, n) for n in index.shape)] if getattr(src, "ndim", 0) else src), linear=True)
scatter_add = op("scatter_add", lambda x, index, src, dim: x.at[grid_index(index, dim)].add(
    src[tuple(slice(0, n) for n in index.shape)]), linear=True)
index_select = op("index_select", lambda x, index, dim: jnp.take(x, index, axis=dim), linear=True)
index_add = op("index_add", lambda x, index, src, dim, alpha=1:
               x.at[(slice(None),) * dim + (index,)].add(alpha * src if alpha != 1 else src), linear=True)
take = op("take", lambda x, index: jnp.ravel(x)[index], linear=True)

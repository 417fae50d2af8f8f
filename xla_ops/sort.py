"""Sorting and selection."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op


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

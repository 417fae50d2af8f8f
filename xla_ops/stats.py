"""Order statistics that skip NaN, and the mode: `nanmedian`, `mode`.

(Quantiles are compositions of `sort`, gathers and `lerp` in the tapeflow layer, as in PyTorch, so their
gradients follow those ops' rules.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op
from .reduce import _indexed_vjp, _ties_vjp
from .sort import _sort

__all__ = ["nanmedian", "nanmedian_dim", "mode"]


def _nanmedian(x):
    """The lower median of the non-NaN elements (NaN when there are none); NaN sorts last."""
    flat = jnp.sort(x.reshape(-1))
    count = jnp.sum(~jnp.isnan(flat))
    return flat[jnp.maximum(count - 1, 0) // 2]


def _nanmedian_dim(x, dim, keepdim=False):
    vals, idx = _sort(x, dim)
    count = jnp.sum(~jnp.isnan(x), axis=dim, keepdims=True)
    k = jnp.maximum(count - 1, 0) // 2
    v = jnp.take_along_axis(vals, k, axis=dim)
    i = jnp.take_along_axis(idx, k, axis=dim)
    return (v, i) if keepdim else (jnp.squeeze(v, dim), jnp.squeeze(i, dim))


nanmedian = op("nanmedian", _nanmedian, _ties_vjp, saves=("x", "ans"))
nanmedian_dim = op("nanmedian_dim", _nanmedian_dim, _indexed_vjp, saves=("ans",), node="NanmedianBackward1")


def _mode(x, dim, keepdim=False):
    """The most frequent value along `dim` (the smallest of equally frequent ones) and its last index."""
    xm = jnp.moveaxis(x, dim, -1)
    n = xm.shape[-1]
    s = jnp.sort(xm, axis=-1)
    pos = jnp.arange(n)
    new_run = jnp.concatenate([jnp.ones(s.shape[:-1] + (1,), bool), s[..., 1:] != s[..., :-1]], axis=-1)
    run_start = jax.lax.cummax(jnp.where(new_run, pos, 0), axis=s.ndim - 1)
    length = pos - run_start + 1  # the run's length so far: full at the run's last element
    best = jnp.argmax(length, axis=-1)  # the first longest run: the smallest value among the most frequent
    value = jnp.take_along_axis(s, best[..., None], axis=-1)
    index = jnp.max(jnp.where(xm == value, pos, -1), axis=-1).astype(jnp.int64)
    value = value[..., 0]
    if keepdim:
        value, index = jnp.expand_dims(value, dim), jnp.expand_dims(index, dim)
    return value, index


mode = op("mode", _mode, _indexed_vjp, saves=("ans",), node="ModeBackward0")

"""Random ops. They take explicit keys; the global seed lives in tapeflow."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op

split_key = op("split_key", lambda key: tuple(jax.random.split(key)), differentiable=False)
uniform = op("uniform", lambda key, shape, dtype, low=0.0, high=1.0:
             jax.random.uniform(key, shape, dtype, low, high), differentiable=False)
normal = op("normal", lambda key, shape, dtype, mean=0.0, std=1.0:
            mean + std * jax.random.normal(key, shape, dtype), differentiable=False)
randint = op("randint", lambda key, shape, low, high, dtype: jax.random.randint(key, shape, low, high, dtype),
             differentiable=False)
bernoulli = op("bernoulli", lambda key, p: jax.random.bernoulli(key, p).astype(p.dtype), differentiable=False)
permutation = op("permutation", lambda key, n: jax.random.permutation(key, n).astype(jnp.int64),
                 differentiable=False)


def _dropout(x, key, p):
    keep = jax.random.bernoulli(key, 1.0 - p, x.shape)
    return jnp.where(keep, x / (1.0 - p), jnp.zeros((), x.dtype))


dropout = op("dropout", _dropout, node="NativeDropoutBackward0")

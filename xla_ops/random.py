"""Random ops. They take explicit keys; the global seed lives in tapeflow."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op

split_key = op("split_key", lambda key: tuple(jax.random.split(key)), differentiable=False)
def _uniform(key, shape, dtype, low=0.0, high=1.0):
    if jnp.issubdtype(dtype, jnp.complexfloating):  # real and imaginary parts drawn independently, as PyTorch
        parts = jax.random.uniform(key, (*shape, 2), jnp.finfo(dtype).dtype, low, high)
        return jax.lax.complex(parts[..., 0], parts[..., 1])
    return jax.random.uniform(key, shape, dtype, low, high)


uniform = op("uniform", _uniform, differentiable=False)
normal = op("normal", lambda key, shape, dtype, mean=0.0, std=1.0:
            mean + std * jax.random.normal(key, shape, dtype), differentiable=False)
randint = op("randint", lambda key, shape, low, high, dtype: jax.random.randint(key, shape, low, high, dtype),
             differentiable=False)


def _zero_in_parameters(g, ans, z, mean, std):
    # NOTE: PyTorch defines the derivative of `normal(mean, std)` in both as zero (the draw is a sample, not a
    # reparameterised function of them: `distributions.Normal.rsample` is that).
    return tuple(jnp.zeros(a.shape, a.dtype) if hasattr(a, "shape") else None for a in (z, mean, std))


# `normal(mean, std)` with a tensor among them, from a standard normal draw `z` of the broadcast shape.
normal_scaled = op("normal_scaled", lambda z, mean, std: jax.lax.stop_gradient(z * std + mean).astype(z.dtype),
                   _zero_in_parameters, saves=(),
                   node="NormalBackward3", edges=(1, 2), scalar_edges=(1, 2),
                   overload_nodes={(1,): "NormalBackward2", (2,): "NormalBackward1"})
bernoulli = op("bernoulli", lambda key, p: jax.random.bernoulli(key, p).astype(p.dtype), differentiable=False)
categorical = op("categorical", lambda key, logits, num_samples: jnp.moveaxis(
    jax.random.categorical(key, logits, axis=-1, shape=(num_samples, *logits.shape[:-1])), 0, -1).astype(jnp.int64),
    differentiable=False)
# Sampling without replacement: the `num_samples` largest of log p + Gumbel noise (the Gumbel-top-k trick).
gumbel_top_k = op("gumbel_top_k", lambda key, logits, num_samples: jax.lax.top_k(
    logits + jax.random.gumbel(key, logits.shape, logits.dtype), num_samples)[1].astype(jnp.int64),
    differentiable=False)
poisson = op("poisson", lambda key, rate: jax.random.poisson(key, rate, rate.shape).astype(rate.dtype),
             differentiable=False)
exponential = op("exponential", lambda key, shape, dtype: jax.random.exponential(key, shape, dtype),
                 differentiable=False)
cauchy = op("cauchy", lambda key, shape, dtype: jax.random.cauchy(key, shape, dtype), differentiable=False)
permutation = op("permutation", lambda key, n: jax.random.permutation(key, n).astype(jnp.int64),
                 differentiable=False)


def _dropout(x, key, p):
    keep = jax.random.bernoulli(key, 1.0 - p, x.shape)
    return jnp.where(keep, x / (1.0 - p), jnp.zeros((), x.dtype))


dropout = op("dropout", _dropout, node="NativeDropoutBackward0")


# Gamma draws with shape `alpha`; JAX differentiates them in `alpha` by implicit reparameterisation (the
# derivative of the draw with its CDF value held fixed), which Gamma/Beta/Dirichlet.rsample rely on.
standard_gamma = op("standard_gamma", lambda alpha, key: jax.random.gamma(key, alpha, alpha.shape, alpha.dtype),
                    node="StandardGammaBackward0")

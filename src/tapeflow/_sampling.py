"""Sampling: `multinomial`, `bernoulli`, `poisson`, and the in-place samplers PyTorch code calls on tensors
(`exponential_`, `cauchy_`, `log_normal_`, `geometric_`). Draws come from tapeflow's generators."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from . import _dtype
from ._device import host_array
from ._factories import _STREAM_DTYPES, DrawTape, _stream, bernoulli_mask, drawn_for, next_key, rand
from ._methods import _random_
from ._ops._checks import outside
from ._tensor import Tensor

__all__ = ["multinomial", "bernoulli", "poisson"]


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn from the categorical distributions in the rows of `input` (non-negative weights).

    Example:
        >>> import tapeflow as tp
        >>> tp.multinomial(tp.tensor([0.0, 1.0, 0.0]), 2, replacement=True).tolist()
        [1, 1]
    """
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.SCALAR_NAMES[input.dtype.name]}")
    n = input.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    probs = np.asarray(input._concrete("multinomial"))  # PyTorch checks the distribution too
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(probs.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    mt = _stream(generator, np.dtype(np.float64), input)
    if mt is not None and not isinstance(mt, DrawTape):
        return Tensor._wrap(host_array(_multinomial_host(mt, probs, int(num_samples), replacement)))
    # Zero weights are -inf: never drawn with replacement; without it they come last (as PyTorch orders them).
    logits = jnp.log(input._data)
    op = X.random.categorical if replacement else X.random.gumbel_top_k
    return Tensor._wrap(op(next_key(generator), logits, num_samples=int(num_samples)))


def _multinomial_host(mt, probs: np.ndarray, n: int, replacement: bool) -> np.ndarray:
    """PyTorch's CPU multinomial on its stream: one draw, or draws without replacement, take the largest
    `p / q` for exponential draws q (over the rows' elements in order); draws with replacement search each
    row's normalised cumulative sums (summed in the weights' dtype) for float64 uniforms."""
    rows = probs.reshape(-1, probs.shape[-1])
    if not replacement or n == 1:
        q = mt.exponential(rows.size, rows.dtype).reshape(rows.shape)
        ratio = rows / q
        out = np.argsort(-ratio, axis=-1, kind="stable")[:, :n]
    else:
        out = np.empty((rows.shape[0], n), np.int64)
        for r, row in enumerate(rows):
            cum = np.cumsum(row, dtype=row.dtype)
            cum = cum / cum[-1] if cum[-1] > 0 else cum
            out[r] = np.searchsorted(cum.astype(np.float64), mt.uniform(n, np.dtype(np.float64)), side="left")
    return out.astype(np.int64).reshape(probs.shape[:-1] + (n,))


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """0/1 draws with probabilities `input` (or the constant `p`), in `input`'s dtype.

    Example:
        >>> import tapeflow as tp
        >>> tp.bernoulli(tp.tensor([0.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    if p is not None:  # (PyTorch: `bernoulli_(p)`, a float64 uniform below p)
        _probability(p)
        return drawn_for(input, bernoulli_mask, input.shape, float(p), input.dtype, generator)
    _probabilities(input)
    # (PyTorch compares a float32 uniform with each probability cast to float32)
    return (drawn_for(input, rand, *input.shape, generator=generator) < input.float()).to(input.dtype)


def _probability(p) -> None:
    if isinstance(p, Tensor):
        _probabilities(p)
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


def _probabilities(p: Tensor) -> None:
    if outside(p, 0.0, 1.0):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson draws with rates `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.poisson(tp.zeros(2)).tolist()
        [0.0, 0.0]
    """
    if outside(input, 0.0, math.inf):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Tensor._wrap(X.random.poisson(next_key(generator), input._data))


def _draw(op, self, generator):
    return Tensor._wrap(op(next_key(generator), shape=tuple(self.shape), dtype=self._raw.dtype))


def _exponential(self, lambd=1.0, *, generator=None):
    mt = _stream(generator, self._raw.dtype)
    if mt is not None and self.dtype.is_floating_point:  # (PyTorch's stream: -log1p(-u) / lambd)
        draws = mt.exponential(self.numel(), self._raw.dtype, float(lambd))
        return Tensor._wrap(host_array(np.reshape(draws, tuple(self.shape))))
    return _draw(X.random.exponential, self, generator) / lambd


def _from_stream(self, generator, sampler: str, *params):
    """`self`'s shape and dtype filled by the PyTorch stream's `sampler`; None where the stream does not
    serve this draw (traced code, accelerators, other dtypes)."""
    mt = _stream(generator, np.dtype(np.float64))
    if mt is None or isinstance(mt, DrawTape) or self._raw.dtype.name not in _STREAM_DTYPES:
        return None
    draws = getattr(mt, sampler)(self.numel(), self._raw.dtype, *params)
    return Tensor._wrap(host_array(np.reshape(draws, tuple(self.shape))))


def _cauchy(self, median=0.0, sigma=1.0, *, generator=None):
    out = _from_stream(self, generator, "cauchy", float(median), float(sigma))
    return out if out is not None else _draw(X.random.cauchy, self, generator) * sigma + median


def _log_normal(self, mean=1.0, std=2.0, *, generator=None):
    out = _from_stream(self, generator, "log_normal", float(mean), float(std))
    return out if out is not None else (self.new_empty(self.shape).normal_(mean, std, generator=generator)).exp()


def _geometric(self, p, *, generator=None):
    # The number of Bernoulli(p) trials up to the first success: ceil(log(U) / log(1 - p)).
    out = _from_stream(self, generator, "geometric", float(p))
    if out is not None:
        return out
    u = rand(*self.shape, generator=generator, dtype=self.dtype if self.dtype.is_floating_point else None)
    return (u.log() / math.log1p(-p)).ceil().clamp(min=1)


Tensor.exponential_ = _random_(_exponential)
Tensor.cauchy_ = _random_(_cauchy)
Tensor.log_normal_ = _random_(_log_normal)
Tensor.geometric_ = _random_(_geometric)
Tensor.multinomial = multinomial
Tensor.bernoulli = bernoulli

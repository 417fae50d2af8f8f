"""`Poisson`, `Binomial` and `Geometric`: counts (non-negative integers stored as floats, as in PyTorch)."""

from __future__ import annotations

import numbers

import jax
import numpy as np

from .._factories import arange, next_key, rand, zeros_like
from .._sampling import poisson
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Poisson", "Binomial", "Geometric"]


def _xlogy(x, y):
    """`x * log(y)`, 0 where `x == 0`."""
    return (x * y.log()).masked_fill(x == 0, 0.0)


def _clamp_by_zero(x):
    # max(x, 0) with the gradient 1/2 at 0, as PyTorch's Binomial has it
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Poisson(ExponentialFamily):
    """Poisson distribution with rate `rate`: `P(k) = rate^k e^-rate / k!`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Poisson(tp.tensor([2.0]))
        >>> d.log_prob(tp.tensor([1.0])), d.sample((3,)).shape
        (tensor([-1.3069]), tapeflow.Size([3, 1]))
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, numbers.Number) else self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        with no_grad():
            return poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return _xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


class _ProbsOrLogits(Distribution):
    """Shared `probs`/`logits` handling of the binary-outcome count distributions."""

    def _set_param(self, probs, logits, *others):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        values = broadcast_all(*others, given)
        if probs is not None:
            self.probs = values[-1]
        else:
            self.logits = values[-1]
        self._param = values[-1]
        return values[:-1]

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape


class Binomial(_ProbsOrLogits):
    """Binomial distribution: the number of successes in `total_count` Bernoulli trials with success
    probability `probs` (or `sigmoid(logits)`).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Binomial(4, probs=tp.tensor([0.5]))
        >>> d.log_prob(tp.tensor([2.0])).exp(), d.mean, d.variance
        (tensor([0.3750]), tensor([2.]), tensor([1.]))
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args: bool | None = None):
        (total_count_t,) = self._set_param(probs, logits, total_count)
        self.total_count = total_count_t.to(self._param.dtype)
        super().__init__(self._param.shape, validate_args=validate_args)

    def _expand_names(self) -> list:
        return [k for k in ("total_count", "probs", "logits") if k in self.__dict__]

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            n, p = self.total_count.expand(shape), self.probs.expand(shape)
            draws = jax.random.binomial(next_key(), n._data, p._data, shape=shape, dtype=p._data.dtype)
            return Tensor._wrap(draws)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        normalize = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize

    def _homogeneous_count(self, what: str) -> int:
        total = int(self.total_count.max())
        if not int(self.total_count.min()) == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        total = self._homogeneous_count("enumerate_support")
        values = arange(1 + total, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values


class Geometric(_ProbsOrLogits):
    """Geometric distribution: the number of failures before the first success of Bernoulli(`probs`) trials.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Geometric(probs=tp.tensor([0.5]))
        >>> d.log_prob(tp.tensor([2.0])).exp(), d.mean
        (tensor([0.1250]), tensor([1.]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        self._set_param(probs, logits)
        given = probs if probs is not None else logits
        super().__init__(() if isinstance(given, numbers.Number) else self._param.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs.reciprocal() - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (self.probs.reciprocal() - 1.0) / self.probs

    def sample(self, sample_shape=()):
        tiny = float(np.finfo(self.probs.dtype.jax).tiny)
        with no_grad():
            u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.masked_fill((probs == 1) & (value == 0), 0.0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs

"""`Exponential`, `Laplace`, `Cauchy`, `Gumbel` and `HalfNormal`: location/scale families with closed-form CDFs,
reparameterised through their inverse CDF (or a standard draw) applied to parameter-free noise."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _ops
from .._factories import full, rand, randn, zeros_like
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .normal import Normal
from .utils import broadcast_all

__all__ = ["Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal"]

_EULER = 0.57721566490153286060


def _scalar(*values) -> bool:
    return all(isinstance(v, numbers.Number) for v in values)


def _finfo(dtype):
    return np.finfo(dtype.jax)


class Exponential(ExponentialFamily):
    """Exponential distribution with rate `rate` (mean `1 / rate`).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Exponential(tp.tensor([1.0, 2.0]))
        >>> d.log_prob(tp.tensor([1.0, 1.0])), d.mean
        (tensor([-1.0000, -1.3069]), tensor([1.0000, 0.5000]))
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args: bool | None = None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if _scalar(rate) else self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """`e / rate` with `e ~ Exponential(1)`: differentiable in `rate`."""
        e = full(self._extended_shape(sample_shape), 0.0, dtype=self.rate.dtype).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


class _LocScale(Distribution):
    """A real-valued family with a location `loc` (its mode) and a positive `scale`, broadcast together."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(() if _scalar(loc, scale) else self.loc.shape, validate_args=validate_args)

    @property
    def mode(self):
        return self.loc


class Laplace(_LocScale):
    """Laplace (double exponential) distribution with location `loc` and scale `scale`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Laplace(0.0, 1.0)
        >>> d.log_prob(tp.tensor(1.0)), d.variance
        (tensor(-1.6931), tensor(2.))
    """


    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        """`loc - scale * sign(u) * log1p(-|u|)` with `u ~ U(eps - 1, 1)`: differentiable in `loc`, `scale`."""
        eps = float(_finfo(self.loc.dtype).eps)
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Cauchy(_LocScale):
    """Cauchy (Lorentz) distribution with median `loc` and half-width `scale`; its mean is undefined (NaN) and
    its variance infinite.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Cauchy(0.0, 1.0)
        >>> d.cdf(tp.tensor(1.0)), d.icdf(tp.tensor(0.75))
        (tensor(0.7500), tensor(1.))
    """


    @property
    def mean(self):
        return full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def variance(self):
        return full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        """`loc + scale * c` with `c ~ Cauchy(0, 1)`: differentiable in `loc` and `scale`."""
        c = full(self._extended_shape(sample_shape), 0.0, dtype=self.loc.dtype).cauchy_()
        return self.loc + c * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(_LocScale):
    """Gumbel (type-I extreme value) distribution with location `loc` and scale `scale`; drawn, as in PyTorch, as
    `loc - scale * log(-log(u))` with `u ~ U(tiny, 1 - eps)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Gumbel(0.0, 1.0)
        >>> d.log_prob(tp.tensor(0.0)), d.mean
        (tensor(-1.), tensor(0.5772))
    """


    def _bounds(self):
        f = _finfo(self.loc.dtype)
        return float(f.tiny), 1 - float(f.eps)

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        """`loc - scale * log(-log(u))`, `u ~ U(tiny, 1 - eps)`: differentiable in `loc` and `scale`."""
        lo, hi = self._bounds()
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype) * (hi - lo) + lo
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lo, hi = self._bounds()
        u = (-(-(value - self.loc) / self.scale).exp()).exp()
        return ((u - lo) / (hi - lo)).clamp(min=0, max=1)

    def icdf(self, value):
        lo, hi = self._bounds()
        return self.loc - self.scale * (-(value * (hi - lo) + lo).log()).log()

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


class HalfNormal(Distribution):
    """Half-normal distribution: `|x|` for `x ~ Normal(0, scale)`, on `[0, inf)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.HalfNormal(tp.tensor([1.0]))
        >>> d.log_prob(tp.tensor([0.0])), d.cdf(tp.tensor([0.0]))
        (tensor([-0.2258]), tensor([0.]))
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None):
        (self.scale,) = broadcast_all(scale)
        super().__init__(() if _scalar(scale) else self.scale.shape, validate_args=validate_args)
        self.base_dist = Normal(zeros_like(self.scale), self.scale, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.base_dist = Normal(zeros_like(new.scale), new.scale, validate_args=False)
        return new

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=()):
        """`|scale * eps|` with `eps ~ N(0, 1)`: differentiable in `scale`."""
        return (randn(self._extended_shape(sample_shape), dtype=self.scale.dtype) * self.scale).abs()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _ops.where(value >= 0, log_prob, float("-inf"))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)

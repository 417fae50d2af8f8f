"""`Gamma`, `Dirichlet` and `Beta`: the families sampled from Gamma draws, reparameterised implicitly (the draw's
derivative in its shape parameter with its CDF value held fixed, as JAX and PyTorch differentiate them)."""

from __future__ import annotations

import numbers

import numpy as np

import xla_ops as X

from .. import _ops, special
from .._dispatch import dispatch
from .._factories import next_key, tensor
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma", "Chi2", "Dirichlet", "Beta"]


def _standard_gamma(alpha):
    draw = dispatch(X.random.standard_gamma, (alpha, next_key()))
    # Keep draws positive (a tiny shape can underflow to 0), without touching the gradient, as PyTorch does.
    return draw + (draw.detach().clamp(min=float(np.finfo(draw.dtype.jax).tiny)) - draw.detach())


def _xlogy(x, y):
    """`x * log(y)`, 0 where `x == 0`."""
    return (x * y.log()).masked_fill(x == 0, 0.0)


class Gamma(ExponentialFamily):
    """Gamma distribution with shape `concentration` and inverse scale `rate`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Gamma(tp.tensor([2.0]), tp.tensor([1.0]))
        >>> d.mean, d.rsample((4,)).shape
        (tensor([2.]), tapeflow.Size([4, 1]))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args: bool | None = None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalar else self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return _xlogy(a, b) + _xlogy(a - 1, value) - b * value - a.lgamma()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()

    @property
    def _natural_params(self) -> tuple:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """Chi-squared distribution with `df` degrees of freedom: `Gamma(df / 2, 1 / 2)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Chi2(tp.tensor([4.0]))
        >>> d.mean, d.variance
        (tensor([4.]), tensor([8.]))
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None):
        (self.df,) = broadcast_all(df)
        super().__init__(0.5 * df if isinstance(df, numbers.Number) else 0.5 * self.df, 0.5,
                         validate_args=validate_args)

    def _expand_names(self) -> list:
        return ["df", "concentration", "rate"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the probability simplex, `concentration` of shape `(*batch, K)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Dirichlet(tp.tensor([1.0, 2.0, 3.0]))
        >>> d.rsample().sum().item()
        1.0
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def rsample(self, sample_shape=()):
        g = _standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return _xlogy(a - 1.0, value).sum(-1) + a.sum(-1).lgamma() - a.lgamma().sum(-1)

    def entropy(self):
        a = self.concentration
        k, a0 = a.shape[-1], a.sum(-1)
        return a.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((a - 1.0) * a.digamma()).sum(-1)

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


class Beta(ExponentialFamily):
    """Beta distribution on `[0, 1]` with `concentration1` (alpha) and `concentration0` (beta): the first
    coordinate of a two-class Dirichlet.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.Beta(2.0, 2.0).mean
        tensor(0.5000)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None):
        if isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number):
            both = tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = _ops.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(_ops.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

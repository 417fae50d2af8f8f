"""Families defined as a simpler distribution pushed through transforms (PyTorch builds them the same way, so
`log_prob`, `cdf`/`icdf` and the reparameterised `rsample` come from `TransformedDistribution`): `Weibull` and
`Pareto` from an `Exponential`, `HalfCauchy` from a `Cauchy`, `InverseGamma` from a `Gamma`, `Kumaraswamy` from a
`Uniform` and `LogisticNormal` from a `Normal`."""

from __future__ import annotations

import math

from .. import _ops
from .._factories import full, full_like, zeros_like
from . import constraints
from .exponential import _EULER, Cauchy, Exponential
from .gamma import Gamma
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform, StickBreakingTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Weibull", "Pareto", "HalfCauchy", "InverseGamma", "Kumaraswamy", "LogisticNormal"]


class Weibull(TransformedDistribution):
    """Weibull distribution with `scale` and shape `concentration`: `scale * e ** (1 / concentration)` for
    `e ~ Exponential(1)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Weibull(tp.tensor([1.0]), tp.tensor([1.0]))
        >>> d.log_prob(tp.tensor([1.0])), d.mean, d.cdf(tp.tensor([1.0]))
        (tensor([-1.]), tensor([1.]), tensor([0.6321]))
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args: bool | None = None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(full_like(self.scale, 1.0), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self) -> list:
        return [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.scale, new.concentration = self.scale.expand(batch_shape), self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        new = super().expand(batch_shape, _instance=new)
        new.transforms = new._transforms()
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        k_inv = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * k_inv).lgamma().exp() - (2 * (1 + k_inv).lgamma()).exp())

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1


class Pareto(TransformedDistribution):
    """Pareto (type I) distribution with minimum `scale` and tail index `alpha`: `scale * exp(e)` for
    `e ~ Exponential(alpha)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Pareto(tp.tensor([1.0]), tp.tensor([3.0]))
        >>> d.log_prob(tp.tensor([2.0])), d.mean, d.support
        (tensor([-1.6740]), tensor([1.5000]), GreaterThanEq(lower_bound=tensor([1.])))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args: bool | None = None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.scale, new.alpha = self.scale.expand(batch_shape), self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # infinite where alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)  # infinite where alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class HalfCauchy(TransformedDistribution):
    """Half-Cauchy distribution: `|x|` for `x ~ Cauchy(0, scale)`, on `[0, inf)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.HalfCauchy(tp.tensor([1.0]))
        >>> d.log_prob(tp.tensor([0.0])), d.cdf(tp.tensor([1.0])), d.icdf(tp.tensor([0.5]))
        (tensor([-0.4516]), tensor([0.5000]), tensor([1.]))
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        return zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

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


class InverseGamma(TransformedDistribution):
    """Inverse-gamma distribution: `1 / x` for `x ~ Gamma(concentration, rate)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.InverseGamma(tp.tensor([3.0]), tp.tensor([2.0]))
        >>> d.log_prob(tp.tensor([1.0])), d.mean, d.mode
        (tensor([-0.6137]), tensor([1.]), tensor([0.5000]))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = full((), -1.0, dtype=base.rate.dtype)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return _ops.where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        return _ops.where(a > 2, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()


def _kumaraswamy_moment(a, b, n: int):
    """`E[X^n] = b B(1 + n / a, b)`."""
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution on `[0, 1]` with `concentration1` (a) and `concentration0` (b): density
    `a b x^(a-1) (1 - x^a)^(b-1)`, drawn as `(1 - u^(1/b))^(1/a)` for uniform `u`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Kumaraswamy(tp.tensor([2.0]), tp.tensor([3.0]))
        >>> d.log_prob(tp.tensor([0.5])), d.mean
        (tensor([0.5232]), tensor([0.4571]))
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0.0), full_like(self.concentration0, 1.0),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # NOTE: PyTorch's formula, kept as is: it takes log1p(-b), which is NaN for b > 1, so the mode is NaN
        # unless b == 1 (and set to NaN where a < 1 or b < 1).
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return log_mode.masked_fill((b < 1) | (a < 1), float("nan")).exp()

    @property
    def variance(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = (b + 1).digamma() + _EULER
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()


class LogisticNormal(TransformedDistribution):
    """Logistic-normal distribution on the simplex: a `Normal(loc, scale)` vector of length K - 1 sent through
    the `StickBreakingTransform` onto K probabilities.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.LogisticNormal(tp.zeros(2), tp.ones(2))
        >>> d.event_shape, d.rsample((5,)).shape, d.log_prob(tp.tensor([0.2, 0.3, 0.5]))
        (tapeflow.Size([3]), tapeflow.Size([5, 3]), tensor(1.2980))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale

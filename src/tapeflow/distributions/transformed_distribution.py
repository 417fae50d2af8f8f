"""`TransformedDistribution`: a base distribution pushed through a list of elementwise transforms, and
`LogNormal`, the exponential of a `Normal`."""

from __future__ import annotations

import numbers

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .independent import _sum_rightmost
from .normal import Normal
from .transforms import ExpTransform, Transform

__all__ = ["TransformedDistribution", "LogNormal"]


class TransformedDistribution(Distribution):
    """The law of `transforms[-1](... transforms[0](x))` for `x ~ base_distribution`: `log_prob` inverts the
    transforms and subtracts their log-Jacobians; `rsample` is reparameterised when the base's is.

    Example:
        >>> import tapeflow as tp
        >>> D = tp.distributions
        >>> d = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.AffineTransform(1.0, 2.0)])
        >>> d.log_prob(tp.tensor(1.0)), D.Normal(1.0, 2.0).log_prob(tp.tensor(1.0))
        (tensor(-1.6121), tensor(-1.6121))
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms, validate_args: bool | None = None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, list) or not all(isinstance(t, Transform) for t in transforms):
            raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        if any(t.event_dim for t in transforms):
            raise NotImplementedError("TransformedDistribution supports only elementwise transforms (event_dim 0)")
        self.base_dist, self.transforms = base_distribution, list(transforms)
        super().__init__(base_distribution.batch_shape, base_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.base_dist, new.transforms = self.base_dist.expand(batch_shape), self.transforms
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def support(self):
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    def sample(self, sample_shape=()):
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob, y = 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim)
            y = x
        return log_prob + self.base_dist.log_prob(y)

    def _monotonize_cdf(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, numbers.Number) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """Log-normal distribution: `exp(x)` for `x ~ Normal(loc, scale)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.LogNormal(0.0, 1.0)
        >>> d.log_prob(tp.tensor(1.0)), d.mean
        (tensor(-0.9189), tensor(1.6487))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc

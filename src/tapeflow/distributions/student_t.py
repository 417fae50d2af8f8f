"""`StudentT`: Student's t distribution, drawn as a normal over the square root of a scaled chi-squared."""

from __future__ import annotations

import math

from .._factories import randn
from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with `df` degrees of freedom, location `loc` and scale `scale`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.StudentT(tp.tensor([3.0]))
        >>> d.log_prob(tp.tensor([0.0])), d.variance
        (tensor([-1.0009]), tensor([3.]))
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df.masked_fill(self.df <= 2, 3.0)  # keeps the gradient finite where the variance is not
        m = (self.scale.pow(2) * df / (df - 2)).masked_fill(self.df <= 2, float("inf"))
        return m.masked_fill(self.df <= 1, float("nan"))

    def rsample(self, sample_shape=()):
        """`loc + scale * x / sqrt(z / df)`, `x ~ N(0, 1)`, `z ~ Chi2(df)`: differentiable in all parameters."""
        x = randn(self._extended_shape(sample_shape), dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * (z / self.df).rsqrt())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma()
             - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)

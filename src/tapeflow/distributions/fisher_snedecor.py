"""`FisherSnedecor`: the F distribution, the ratio of two scaled chi-squared draws."""

from __future__ import annotations

import numbers

import numpy as np

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """Fisher-Snedecor (F) distribution with `df1` and `df2` degrees of freedom: `(X1 / df1) / (X2 / df2)` for
    chi-squared `X1`, `X2`, drawn through two Gammas (so `rsample` is reparameterised).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.FisherSnedecor(tp.tensor([4.0]), tp.tensor([6.0]))
        >>> d.log_prob(tp.tensor([1.0])), d.mean
        (tensor([-0.8802]), tensor([1.5000]))
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args: bool | None = None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1, self._gamma2 = Gamma(self.df1 * 0.5, self.df1), Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if scalar else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2.masked_fill(self.df2 <= 2, float("nan"))
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return mode.masked_fill(self.df1 <= 2, float("nan"))

    @property
    def variance(self):
        df2 = self.df2.masked_fill(self.df2 <= 4, float("nan"))
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        """`X1 / X2` for `Xi ~ Gamma(dfi / 2, dfi)` (kept >= the smallest normal number, as PyTorch)."""
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = float(np.finfo(x2.dtype.jax).tiny)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3

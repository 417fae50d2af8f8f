"""`GeneralizedPareto`: the law of threshold exceedances; Exponential (`concentration = 0`), Pareto
(`concentration > 0`) and uniform (`concentration = -1`) are special cases."""

from __future__ import annotations

import math
import numbers

from .. import _ops
from .._factories import rand
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with `loc`, `scale` and `concentration` (the tail index xi); its
    support is `[loc, inf)`, or `[loc, loc - scale / xi]` for `xi < 0`. `rsample` is the inverse CDF of uniform
    noise.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.GeneralizedPareto(tp.tensor([0.0]), tp.tensor([1.0]), tp.tensor([0.5]))
        >>> d.log_prob(tp.tensor([1.0])), d.cdf(tp.tensor([1.0])), d.mean
        (tensor([-1.2164]), tensor([0.5556]), tensor([2.]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if scalar else self.loc.shape, validate_args=validate_args)

    def _at_zero_and_safe(self):
        """Where xi is (numerically) 0, and xi with those entries set to 1 so that both branches stay finite."""
        eq_zero = self.concentration.abs() <= 1e-8  # isclose(xi, 0) with PyTorch's default tolerances
        return eq_zero, _ops.where(eq_zero, 1.0, self.concentration)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape=()):
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._at_zero_and_safe()
        y = 1 / safe + 1
        where_nonzero = _ops.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - _ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """`log P(X > value)`."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._at_zero_and_safe()
        return _ops.where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, safe = self._at_zero_and_safe()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return _ops.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = _ops.where(valid, self.concentration, 0.5)
        return _ops.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = _ops.where(valid, self.concentration, 0.25)
        return _ops.where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(*self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @property
    def support(self):
        upper = _ops.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)

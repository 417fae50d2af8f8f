"""`Normal`: the Gaussian N(loc, scale^2)."""

from __future__ import annotations

import math
import numbers

from .. import _ops
from .._factories import randn
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """Normal distribution with mean `loc` and standard deviation `scale` (broadcast together).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Normal(tp.tensor([0.0, 1.0]), 2.0)
        >>> d.log_prob(tp.tensor([0.0, 1.0]))
        tensor([-1.6121, -1.6121])
        >>> d.rsample((3,)).shape
        tapeflow.Size([3, 2])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args: bool | None = None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = () if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number) else self.loc.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        """`loc + scale * eps` with `eps ~ N(0, 1)`: differentiable in `loc` and `scale`."""
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + _ops.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * _ops.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple:
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()

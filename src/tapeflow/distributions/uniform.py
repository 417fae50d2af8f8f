"""`Uniform`: constant density on `[low, high)`."""

from __future__ import annotations

import numbers

from .._factories import rand
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform distribution on the half-open interval `[low, high)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Uniform(0.0, 4.0)
        >>> d.log_prob(tp.tensor(1.0)), d.entropy()
        (tensor(-1.3863), tensor(1.3863))
    """

    arg_constraints = {"low": constraints.real, "high": constraints.real}
    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None):
        self.low, self.high = broadcast_all(low, high)
        batch = () if isinstance(low, numbers.Number) and isinstance(high, numbers.Number) else self.low.shape
        if (validate_args if validate_args is not None else self._validate_default) and \
                not bool((self.low < self.high).all()):
            raise ValueError(f"Expected parameter low ({type(self.low).__name__} of shape {tuple(self.low.shape)}) "
                             f"of distribution Uniform to satisfy the constraint LessThan(upper_bound=high), but "
                             f"found invalid values:\n{self.low}")
        super().__init__(batch, validate_args=validate_args)

    @property
    def support(self):
        return constraints.half_open_interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        """`low + u * (high - low)` with `u ~ U[0, 1)`: differentiable in `low` and `high`."""
        u = rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()

"""`Independent`: reinterpret batch dimensions of a distribution as event dimensions."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution

__all__ = ["Independent"]


def _sum_rightmost(value, dim: int):
    return value.reshape(*value.shape[:value.ndim - dim], -1).sum(-1) if dim > 0 else value


class Independent(Distribution):
    """The last `reinterpreted_batch_ndims` batch dimensions of `base_distribution` become one event: its
    `log_prob` and `entropy` sum over them (a diagonal Gaussian from `Normal`, for instance).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Independent(tp.distributions.Normal(tp.zeros(3, 2), 1.0), 1)
        >>> d.batch_shape, d.event_shape, d.log_prob(tp.zeros(3, 2)).shape
        (tapeflow.Size([3]), tapeflow.Size([2]), tapeflow.Size([3]))
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None):
        batch = tuple(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > len(batch):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(batch)}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        cut = len(batch) - reinterpreted_batch_ndims
        super().__init__(batch[:cut], batch[cut:] + tuple(base_distribution.event_shape), validate_args=False)
        self._validate_args = base_distribution._validate_args if validate_args is None else validate_args

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        reinterpreted = tuple(self._event_shape[:self.reinterpreted_batch_ndims])
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + reinterpreted)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def support(self):
        base = self.base_dist.support
        return None if base is None else constraints.independent(base, self.reinterpreted_batch_ndims)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"

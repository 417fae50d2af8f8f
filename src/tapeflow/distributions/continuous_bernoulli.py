"""`ContinuousBernoulli`: the density on `[0, 1]` proportional to `p^x (1 - p)^(1 - x)` (Loaiza-Ganem and
Cunningham, 2019), with Taylor expansions near `p = 1/2`, where its normaliser's closed form is 0 / 0."""

from __future__ import annotations

import math
import numbers

from .. import _ops
from .._factories import rand
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Continuous Bernoulli distribution on `[0, 1]` from `probs` (clamped away from 0 and 1) or `logits`;
    inside `lims` around `probs = 1/2` the moments and the normaliser use their Taylor expansions. `rsample`
    is the inverse CDF of uniform noise.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.ContinuousBernoulli(tp.tensor([0.8]))
        >>> d.log_prob(tp.tensor([0.5])), d.mean, d.cdf(tp.tensor([0.5]))
        (tensor([-0.0788]), tensor([0.6120]), tensor([0.3333]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims: tuple = (0.499, 0.501), validate_args: bool | None = None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            # NOTE: as PyTorch, this check (before the clamp hides bad values) runs only when validate_args is given
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(param).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = param = clamp_probs(param)
        else:
            self.logits = param
        self._param, self._lims = param, lims
        super().__init__(() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return _ops.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """The log normaliser as a function of `probs`."""
        cut = self._cut_probs()
        below = _ops.where(cut <= 0.5, cut, 0.0)
        above = _ops.where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - _ops.where(cut <= 0.5, (-2.0 * below).log1p(),
                                                                         (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _ops.where(self._outside_unstable_region(), variances, taylor)

    def sample(self, sample_shape=()):
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        """`icdf(u)` for `u ~ U(0, 1)`: differentiable in the parameters."""
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _ops.where(self._outside_unstable_region(), cdfs, value)
        return _ops.where(value <= 0.0, 0.0, _ops.where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverted = (((2.0 * cut - 1.0) * value - cut).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return _ops.where(self._outside_unstable_region(), inverted, value)

    def entropy(self):
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normaliser as a function of the natural parameter (the logits)."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = _ops.where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _ops.where(outside, log_norm, taylor)

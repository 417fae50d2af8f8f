"""`NegativeBinomial`: the number of successes before `total_count` failures of Bernoulli(`probs`) trials."""

from __future__ import annotations

from .._sampling import poisson
from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid
from . import constraints
from .gamma import Gamma
from .poisson import _ProbsOrLogits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsOrLogits):
    """Negative binomial distribution with (real, non-negative) `total_count` and success probability `probs`
    (or `sigmoid(logits)`); drawn as a Poisson whose rate is Gamma(`total_count`, `exp(-logits)`).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.NegativeBinomial(3.0, probs=tp.tensor([0.5]))
        >>> d.log_prob(tp.tensor([2.0])).exp(), d.mean, d.variance
        (tensor([0.1875]), tensor([3.]), tensor([6.]))
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args: bool | None = None):
        (total_count_t,) = self._set_param(probs, logits, total_count)
        self.total_count = total_count_t.to(self._param.dtype)
        super().__init__(self._param.shape, validate_args=validate_args)

    def _expand_names(self) -> list:
        return [k for k in ("total_count", "probs", "logits") if k in self.__dict__]

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -(self.total_count + value).lgamma() + (1.0 + value).lgamma() + self.total_count.lgamma()
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization

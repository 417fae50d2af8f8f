"""`Multinomial`: the counts of each of K classes in `total_count` independent categorical draws."""

from __future__ import annotations

import math

from .._factories import ones_like, zeros
from ..autograd.grad_mode import no_grad
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .poisson import Binomial
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial distribution: `total_count` (one int for the whole batch) draws from the categorical with
    `probs` (normalised) or `logits` of shape `(*batch_shape, K)`; values are float count vectors.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Multinomial(4, probs=tp.tensor([0.25, 0.75]))
        >>> d.log_prob(tp.tensor([1.0, 3.0])).exp(), d.mean, d.sample().sum().item()
        (tensor(0.4219), tensor([1., 3.]), 4.0)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """Count vectors (in the parameters' dtype) of shape `sample_shape + batch_shape + (K,)`."""
        with no_grad():
            draws = self._categorical.sample((self.total_count, *sample_shape))
            draws = draws.permute(*range(1, draws.ndim), 0)  # the draws of one count vector last
            counts = zeros(tuple(self._extended_shape(sample_shape)), dtype=draws.dtype)
            return counts.scatter_add(-1, draws, ones_like(draws)).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = logits.masked_fill((value == 0) & (logits == float("-inf")), 0.0)  # 0 * log 0 = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        # H = n H(cat) - log n! + sum_k E[log x_k!], each x_k ~ Binomial(n, p_k)
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        binomial = Binomial(n, probs=self.probs)
        support = binomial.enumerate_support(expand=False)[1:]
        term2 = (binomial.log_prob(support).exp() * (support + 1).lgamma()).sum((0, -1))
        return term1 + term2

"""`Bernoulli`: a coin with `P(1) = probs` (or `sigmoid(logits)`)."""

from __future__ import annotations

import numbers

from .._ops import broadcast_tensors
from .._sampling import bernoulli
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """Bernoulli distribution, parametrised by exactly one of `probs` or `logits`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Bernoulli(probs=tp.tensor([0.25, 0.5]))
        >>> d.log_prob(tp.tensor([1.0, 0.0]))
        tensor([-1.3863, -0.6931])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_tensors(self.logits, value.to(self.logits.dtype))
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self) -> tuple:
        return (self.probs.log() - (-self.probs).log1p(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()

    def enumerate_support(self, expand: bool = True):
        from .._factories import tensor

        values = tensor([0.0, 1.0], dtype=self._param.dtype).reshape((2,) + (1,) * len(self._batch_shape))
        return values.expand((2, *self._batch_shape)) if expand else values

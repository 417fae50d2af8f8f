"""`Categorical`: one of K classes with probabilities `probs` (or `softmax(logits)`) over the last dimension."""

from __future__ import annotations

import numpy as np

from .. import _dtype, _ops
from .._factories import arange, full
from .._sampling import multinomial
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical distribution over `{0, ..., K-1}`; `probs` (normalised here) or `logits` (normalised to
    log-probabilities) of shape `(*batch_shape, K)`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Categorical(logits=tp.tensor([0.0, 0.0, 0.0, 0.0]))
        >>> d.log_prob(tp.tensor(2)), d.entropy()
        (tensor(-1.3863), tensor(1.3863))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @lazy_property
    def logits(self):
        eps = float(np.finfo(self.probs.dtype.jax).eps)
        return self.probs.clamp(min=eps, max=1 - eps).log()

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return full(self._extended_shape(), float("nan"), dtype=self._param.dtype)

    @property
    def variance(self):
        return full(self._extended_shape(), float("nan"), dtype=self._param.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    def sample(self, sample_shape=()):
        """Class indices (int64) of shape `sample_shape + batch_shape`."""
        n = int(np.prod(sample_shape)) if len(tuple(sample_shape)) else 1
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = multinomial(probs_2d, n, True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = _ops.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(self.logits.dtype.jax).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        values = arange(self._num_events, dtype=_dtype.int64).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values

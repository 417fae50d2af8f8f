"""`OneHotCategorical`: a `Categorical` whose draws are one-hot vectors."""

from __future__ import annotations

from .._factories import eye
from ..nn.functional import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(Distribution):
    """One-hot categorical distribution: draws are one-hot vectors of length K (the event), `probs` or `logits`
    of shape `(*batch_shape, K)` as for `Categorical`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.OneHotCategorical(probs=tp.tensor([0.25, 0.75]))
        >>> d.log_prob(tp.tensor([0.0, 1.0])), d.sample().shape
        (tensor(-0.2877), tapeflow.Size([2]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        batch, event = self._categorical.batch_shape, self._categorical.param_shape[-1:]
        super().__init__(batch, event, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        return one_hot(self._categorical.sample(sample_shape), self._event_shape[0]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self._event_shape[0]
        values = eye(n, dtype=self._param.dtype).reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n, *self._batch_shape, n)) if expand else values

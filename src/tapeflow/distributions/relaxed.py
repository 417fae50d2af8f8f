"""Differentiable stand-ins for discrete draws: the Concrete / Gumbel-softmax relaxations `RelaxedBernoulli` and
`RelaxedOneHotCategorical` (with their log-space bases `LogitRelaxedBernoulli` and `ExpRelaxedCategorical`), and
`OneHotCategoricalStraightThrough`, whose one-hot draws pass the gradient of the probabilities."""

from __future__ import annotations

import numbers

from .._factories import full_like, rand, tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .one_hot_categorical import OneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical", "RelaxedOneHotCategorical",
           "OneHotCategoricalStraightThrough"]


def _as_tensor(temperature, like):
    return tensor(float(temperature), dtype=like.dtype) if isinstance(temperature, numbers.Number) else temperature


class LogitRelaxedBernoulli(Distribution):
    """The logit of a `RelaxedBernoulli` draw: `(logit(u) + logits) / temperature` for uniform `u`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.relaxed.LogitRelaxedBernoulli(tp.tensor(0.5), probs=tp.tensor([0.3]))
        >>> d.log_prob(tp.tensor([0.0]))
        tensor([-2.2538])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args: bool | None = None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        self.temperature = _as_tensor(temperature, param)
        super().__init__(() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.temperature = self.temperature  # shared, not broadcast (as PyTorch)
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    def rsample(self, sample_shape=()):
        """`(logit(u) + logit(probs)) / temperature`, `u ~ U(0, 1)` clamped: differentiable in the parameters."""
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Relaxed (Concrete) Bernoulli on `(0, 1)` at `temperature`, from `probs` or `logits`: the sigmoid of a
    `LogitRelaxedBernoulli`; draws approach 0/1 coins as the temperature goes to 0, and `rsample` is
    differentiable.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.RelaxedBernoulli(tp.tensor(0.5), probs=tp.tensor([0.3]))
        >>> d.log_prob(tp.tensor([0.5])), d.rsample((4,)).shape
        (tensor([-0.8675]), tapeflow.Size([4, 1]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args: bool | None = None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class ExpRelaxedCategorical(Distribution):
    """The log of a `RelaxedOneHotCategorical` draw: `log_softmax((logits + g) / temperature)` for Gumbel `g`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.relaxed.ExpRelaxedCategorical(tp.tensor(1.0), probs=tp.tensor([0.5, 0.5]))
        >>> d.rsample().exp().sum().item()
        1.0
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # draws lie on a submanifold of it
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args: bool | None = None):
        self._categorical = Categorical(probs, logits)
        self.temperature = _as_tensor(temperature, self._categorical._param)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        """`log_softmax((logits + g) / temperature)`, `g` Gumbel noise: differentiable in the parameters."""
        u = clamp_probs(rand(self._extended_shape(sample_shape), dtype=self.logits.dtype))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = full_like(self.temperature, float(k)).lgamma() + self.temperature.log() * (k - 1)
        score = logits - value * self.temperature
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Relaxed one-hot categorical (Concrete / Gumbel-softmax) on the simplex at `temperature`, from `probs` or
    `logits`: `softmax((logits + g) / temperature)` for Gumbel noise `g`; `rsample` is differentiable.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.RelaxedOneHotCategorical(tp.tensor(0.5), probs=tp.tensor([0.2, 0.8]))
        >>> d.log_prob(tp.tensor([0.3, 0.7])), d.rsample((3,)).shape
        (tensor(-0.7420), tapeflow.Size([3, 2]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args: bool | None = None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """`OneHotCategorical` with the straight-through estimator: `rsample` returns exact one-hot draws whose
    gradient is that of `probs` (Bengio et al., 2013).

    Example:
        >>> import tapeflow as tp
        >>> p = tp.tensor([0.2, 0.8], requires_grad=True)
        >>> z = tp.distributions.OneHotCategoricalStraightThrough(probs=p).rsample()
        >>> z.sum().item(), z.requires_grad
        (1.0, True)
    """

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())

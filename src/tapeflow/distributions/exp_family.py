"""`ExponentialFamily`: the base class of densities `exp(<t(x), theta> - F(theta) + k(x))`, whose entropy and
same-family KL divergence follow from the log-normaliser `F` by automatic differentiation (Bregman divergences)."""

from __future__ import annotations

from ..autograd.backward import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution in an exponential family: subclasses give `_natural_params` (a tuple of tensors),
    `_log_normalizer(*natural_params)` and `_mean_carrier_measure` (`E[k(x)]`); `entropy` is then
    `F(theta) - <theta, grad F(theta)> - E[k(x)]`.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Normal(tp.tensor([0.0]), tp.tensor([2.0]))
        >>> isinstance(d, tp.distributions.ExponentialFamily)
        True
        >>> tp.distributions.ExponentialFamily.entropy(d), d.entropy()
        (tensor([2.1121], grad_fn=<SubBackward0>), tensor([2.1121]))
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} does not implement _natural_params")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not implement _log_normalizer")

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} does not implement _mean_carrier_measure")

    def entropy(self):
        """The entropy through the Bregman divergence of the log-normaliser (as PyTorch, at detached natural
        parameters: no gradient reaches the distribution's parameters)."""
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = lg_normal - self._mean_carrier_measure
        for theta, g in zip(nparams, gradients):
            result = result - (theta * g).reshape(*self._batch_shape, -1).sum(-1)
        return result

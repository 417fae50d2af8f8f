"""`tapeflow.distributions`: probability distributions with sampling, reparameterised sampling, log-densities,
entropies and KL divergences (PyTorch's `torch.distributions`).

Example:
    >>> import tapeflow as tp
    >>> mu = tp.zeros(2, requires_grad=True)
    >>> q = tp.distributions.Normal(mu, 1.0)
    >>> z = q.rsample((4,))                      # differentiable in mu
    >>> tp.distributions.kl_divergence(q, tp.distributions.Normal(1.0, 1.0)).sum().backward()
"""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["constraints", "Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "Independent",
           "MultivariateNormal", "Gamma", "Beta", "Dirichlet", "kl_divergence", "register_kl"]

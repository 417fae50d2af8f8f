"""`tapeflow.distributions`: probability distributions with sampling, reparameterised sampling, log-densities,
entropies and KL divergences (PyTorch's `torch.distributions`).

Example:
    >>> import tapeflow as tp
    >>> mu = tp.zeros(2, requires_grad=True)
    >>> q = tp.distributions.Normal(mu, 1.0)
    >>> z = q.rsample((4,))                      # differentiable in mu
    >>> tp.distributions.kl_divergence(q, tp.distributions.Normal(1.0, 1.0)).sum().backward()
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Cauchy, Exponential, Gumbel, HalfNormal, Laplace
from .gamma import Beta, Chi2, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .mixture_same_family import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Binomial, Geometric, Poisson
from .student_t import StudentT
from .transformed_distribution import LogNormal, TransformedDistribution
from .uniform import Uniform

__all__ = ["constraints", "transforms", "Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "Independent",
           "MultivariateNormal", "Gamma", "Beta", "Dirichlet", "Exponential", "Laplace", "LogNormal", "Cauchy",
           "Gumbel", "StudentT", "Poisson", "Binomial", "Geometric", "OneHotCategorical", "HalfNormal", "Chi2",
           "MixtureSameFamily", "TransformedDistribution", "kl_divergence", "register_kl"]

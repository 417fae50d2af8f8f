"""`tapeflow.distributions`: probability distributions with sampling, reparameterised sampling, log-densities,
entropies and KL divergences, transforms and the constraint registries (PyTorch's `torch.distributions`).

Example:
    >>> import tapeflow as tp
    >>> mu = tp.zeros(2, requires_grad=True)
    >>> q = tp.distributions.Normal(mu, 1.0)
    >>> z = q.rsample((4,))                      # differentiable in mu
    >>> tp.distributions.kl_divergence(q, tp.distributions.Normal(1.0, 1.0)).sum().backward()
"""

from . import constraints, kl_bounded, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Cauchy, Exponential, Gumbel, HalfNormal, Laplace
from .fisher_snedecor import FisherSnedecor
from .gamma import Beta, Chi2, Dirichlet, Gamma
from .generalized_pareto import GeneralizedPareto
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .low_rank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Binomial, Geometric, Poisson
from .relaxed import OneHotCategoricalStraightThrough, RelaxedBernoulli, RelaxedOneHotCategorical
from .student_t import StudentT
from .transformed_distribution import LogNormal, TransformedDistribution
from .transformed_families import HalfCauchy, InverseGamma, Kumaraswamy, LogisticNormal, Pareto, Weibull
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .wishart import Wishart

del kl_bounded  # imported for its registrations only

__all__ = ["constraints", "transforms", "Distribution", "ExponentialFamily",
           # families
           "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Exponential", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal",
           "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Poisson", "Uniform", "VonMises", "Weibull",
           "Wishart", "TransformedDistribution",
           # KL divergences and the constraint -> transform registries
           "kl_divergence", "register_kl", "biject_to", "transform_to",
           # transforms
           "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]

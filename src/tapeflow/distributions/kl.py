"""`kl_divergence(p, q)` and `register_kl`: closed forms, looked up by the pair of distribution types."""

from __future__ import annotations

import math

import numpy as np

from .. import _ops, linalg
from .._factories import full_like
from ..autograd.backward import grad
from ..nn.functional import softplus
from .bernoulli import Bernoulli
from .categorical import Categorical
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import _EULER, Cauchy, Exponential, Gumbel, HalfNormal, Laplace
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent, _sum_rightmost
from .low_rank_multivariate_normal import LowRankMultivariateNormal, _lowrank_logdet, _lowrank_mahalanobis, _trace_XXT
from .multivariate_normal import MultivariateNormal, _mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Binomial, Geometric, Poisson
from .transformed_distribution import TransformedDistribution
from .transformed_families import Pareto
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}


def register_kl(type_p: type, type_q: type):
    """Decorator: register `fn(p, q)` as the KL divergence of `type_p` from `type_q` (subclasses match too).

    Example:
        >>> import tapeflow as tp
        >>> @tp.distributions.register_kl(tp.distributions.Normal, tp.distributions.Uniform)
        ... def _kl_normal_uniform(p, q):
        ...     raise NotImplementedError
    """
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def kl_divergence(p: Distribution, q: Distribution):
    """`KL(p || q)` per batch element, from the registered closed form for `(type(p), type(q))`.

    Example:
        >>> import tapeflow as tp
        >>> N = tp.distributions.Normal
        >>> tp.distributions.kl_divergence(N(0.0, 1.0), N(1.0, 1.0))
        tensor(0.5000)
    """
    matches = [(tp_, tq) for tp_, tq in _KL_REGISTRY if isinstance(p, tp_) and isinstance(q, tq)]
    if not matches:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    # the most specific registered pair wins
    best = min(matches, key=lambda m: (type(p).__mro__.index(m[0]), type(q).__mro__.index(m[1])))
    return _KL_REGISTRY[best](p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    inf = float("inf")
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, inf).masked_fill(p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, inf).masked_fill(p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), float("inf")).masked_fill((p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    batch = np.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    # tr(Sq^-1 Sp) = ||Lq^-1 Lp||_F^2
    term2 = linalg.solve_triangular(Lq.expand(*batch, n, n), Lp.expand(*batch, n, n), upper=False).pow(2).sum((-2, -1))
    term3 = _mahalanobis(Lq, q.loc - p.loc)
    return q._half_log_det() - p._half_log_det() + 0.5 * (term2 + term3 - n)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    t1 = a0.lgamma() - b0.lgamma()
    t2 = (a.lgamma() - b.lgamma()).sum(-1)
    t4 = a.digamma() - a0.digamma().unsqueeze(-1)
    return t1 - t2 + ((a - b) * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


def _infinite_like(t):
    return full_like(t, float("inf"))


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + ct1 * _EULER + t3 - (1 + _EULER)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return kl.masked_fill(p.total_count > q.total_count, float("inf"))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + q.concentration.lgamma() + q.concentration * _EULER - (1 + _EULER)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    return t1 - loc_scale_ratio + t2 + scale_rate_prod.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal, rate_sqr = q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal, beta_sqr, a = q.scale.pow(2), p.rate.pow(2), p.concentration
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - a - a.lgamma()
    t2 = 0.5 * (a.pow(2) + a) / beta_sqr
    t3 = q.loc * a / p.rate
    return t1 + (a - 1) * a.digamma() + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod, loc_scale_ratio, a = p.rate * q.scale, q.loc / q.scale, p.concentration
    t1 = (a - 1) * a.digamma() - a.lgamma() - a
    t2 = beta_scale_prod.log() + a / beta_scale_prod
    t3 = loc_scale_ratio.exp() * (1 + beta_scale_prod.reciprocal()).pow(-a) - loc_scale_ratio
    return t1 + t2 + t3


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2, t3, t4 = 0.5 * p.loc.pow(2), p.loc * q.loc, 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * _ops.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -scale_ratio.log() + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Beta, Pareto)
@register_kl(ContinuousBernoulli, Pareto)
@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_infinity(p, q):
    """Infinite: `p` puts mass where `q` has none."""
    return _infinite_like(p.rate if isinstance(p, (Exponential, Poisson)) else p.mean.detach())


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log-normaliser between the natural parameters (same family only)."""
    if type(p) is not type(q):
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}: the cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [theta.detach().requires_grad_() for theta in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


# -- low-rank Gaussians: traces and determinants through the capacitance (Woodbury) factors --


def _check_same_event(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")


def _lowrank_A(q):
    """`A` with `inv(cov_q) = inv(D_q) - A^T A`."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    return linalg.solve_triangular(q._capacitance_tril, W.transpose(-1, -2) / D.unsqueeze(-2), upper=False)


def _lowrank_logdet_of(d):
    return _lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _lowrank_mahalanobis_of(q, x):
    return _lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, x, q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_same_event(p, q)
    term1 = _lowrank_logdet_of(q) - _lowrank_logdet_of(p)
    term3 = _lowrank_mahalanobis_of(q, q.loc - p.loc)
    A, pW, pD, qD = _lowrank_A(q), p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term2 = ((pD / qD).sum(-1) + _trace_XXT(pW * qD.rsqrt().unsqueeze(-1)) - _trace_XXT(A * pD.sqrt().unsqueeze(-2))
             - _trace_XXT(_ops.matmul(A, pW)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_same_event(p, q)
    term1 = _lowrank_logdet_of(q) - 2 * p._half_log_det()
    term3 = _lowrank_mahalanobis_of(q, q.loc - p.loc)
    L, qD = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_diag
    term2 = _trace_XXT(L * qD.rsqrt().unsqueeze(-1)) - _trace_XXT(_ops.matmul(_lowrank_A(q), L))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_same_event(p, q)
    term1 = 2 * q._half_log_det() - _lowrank_logdet_of(p)
    term3 = _mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    n, m = p.event_shape[0], p.cov_factor.shape[-1]
    batch = np.broadcast_shapes(tuple(q._unbroadcasted_scale_tril.shape[:-2]),
                                tuple(p._unbroadcasted_cov_factor.shape[:-2]))
    qL = q._unbroadcasted_scale_tril.expand(*batch, n, n)
    pW = p._unbroadcasted_cov_factor.expand(*batch, n, m)
    pD = p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(*batch, n, n)
    term2 = (_trace_XXT(linalg.solve_triangular(qL, pW, upper=False))
             + _trace_XXT(linalg.solve_triangular(qL, pD, upper=False)))
    return 0.5 * (term1 + term2 + term3 - n)

"""`kl_divergence(p, q)` and `register_kl`: closed forms, looked up by the pair of distribution types."""

from __future__ import annotations

import numpy as np

from .. import linalg
from ..nn.functional import softplus
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent, _sum_rightmost
from .multivariate_normal import MultivariateNormal, _mahalanobis
from .normal import Normal
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

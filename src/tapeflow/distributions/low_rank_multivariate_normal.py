"""`LowRankMultivariateNormal`: a Gaussian whose covariance is `W W^T + diag(D)`, handled through the small
`m x m` capacitance matrix `I + W^T D^-1 W` (Woodbury) instead of the full `n x n` covariance."""

from __future__ import annotations

import math

from .. import _ops, linalg
from .._factories import eye, randn
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _mahalanobis
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _mv(M, v):
    return _ops.matmul(M, v.unsqueeze(-1)).squeeze(-1)


def _capacitance_tril(W, D):
    """Cholesky factor of `I + W^T D^-1 W`."""
    K = _ops.matmul(W.transpose(-1, -2) / D.unsqueeze(-2), W)
    return linalg.cholesky(K + eye(W.shape[-1], dtype=W.dtype))


def _lowrank_logdet(W, D, capacitance_tril):
    """`log det(W W^T + D)` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """`x^T (W W^T + D)^-1 x` by the Woodbury identity."""
    Wt_Dinv_x = _mv(W.transpose(-1, -2) / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _mahalanobis(capacitance_tril, Wt_Dinv_x)


def _trace_XXT(X):
    """`tr(X X^T)` over the last two dimensions."""
    return X.pow(2).sum((-2, -1))


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with covariance `cov_factor @ cov_factor.T + diag(cov_diag)`: `loc` of shape
    `(*batch, n)`, `cov_factor` `(*batch, n, m)`, `cov_diag` `(*batch, n)` (positive).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.LowRankMultivariateNormal(tp.zeros(2), tp.ones(2, 1), tp.ones(2))
        >>> d.covariance_matrix, d.log_prob(tp.zeros(2))
        (tensor([[2., 1.],
                [1., 2.]]), tensor(-2.3872))
    """

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args: bool | None = None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = _ops.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                      cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        loc_shape = tuple(batch_shape) + tuple(self._event_shape)
        new.loc, new.cov_diag = self.loc.expand(loc_shape), self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(*loc_shape, self.cov_factor.shape[-1])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, M):
        return M.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2: factor the bracket, which is well conditioned
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / d_sqrt
        K = _ops.matmul(Dinvsqrt_W, Dinvsqrt_W.transpose(-1, -2)) + eye(n, dtype=d_sqrt.dtype)
        return self._full(d_sqrt * linalg.cholesky(K))

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return self._full(_ops.matmul(W, W.transpose(-1, -2)) + self._unbroadcasted_cov_diag.diag_embed())

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril, W.transpose(-1, -2) / D.unsqueeze(-2), upper=False)
        return self._full(D.reciprocal().diag_embed() - _ops.matmul(A.transpose(-1, -2), A))

    def rsample(self, sample_shape=()):
        """`loc + W eps_W + sqrt(D) eps_D` with standard normal `eps_W` (length m) and `eps_D` (length n)."""
        shape = tuple(self._extended_shape(sample_shape))
        eps_W = randn(shape[:-1] + tuple(self.cov_factor.shape[-1:]), dtype=self.loc.dtype)
        eps_D = randn(shape, dtype=self.loc.dtype)
        return self.loc + _mv(self._unbroadcasted_cov_factor, eps_W) + self._unbroadcasted_cov_diag.sqrt() * eps_D

    def _logdet(self):
        return _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, value - self.loc,
                                 self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return H if not len(self._batch_shape) else H.expand(*self._batch_shape)

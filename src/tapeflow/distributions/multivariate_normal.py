"""`MultivariateNormal`: the Gaussian N(loc, Sigma) over vectors, through the Cholesky factor of Sigma."""

from __future__ import annotations

import math

import numpy as np

from .. import _ops, linalg
from .._factories import eye, randn
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _mahalanobis(L, x):
    """`||L^-1 x||^2` over the last dimension, `L` lower-triangular, batch dimensions broadcast."""
    batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    y = linalg.solve_triangular(L.expand(*batch, *L.shape[-2:]), x.expand(*batch, x.shape[-1]).unsqueeze(-1),
                                upper=False)
    return y.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # The Cholesky factor of P's inverse without inverting P: factor P with its rows and columns reversed.
    Lf = linalg.cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    return linalg.solve_triangular(L_inv, eye(P.shape[-1], dtype=P.dtype).expand(P.shape), upper=False)


class MultivariateNormal(Distribution):
    """Multivariate normal, given exactly one of `covariance_matrix`, `precision_matrix` or `scale_tril`
    (the lower Cholesky factor of the covariance).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.MultivariateNormal(tp.zeros(2), scale_tril=tp.eye(2))
        >>> d.log_prob(tp.zeros(2)), d.rsample((5,)).shape
        (tensor(-1.8379), tapeflow.Size([5, 2]))
    """

    arg_constraints = {"loc": constraints.independent(constraints.real, 1)}
    support = constraints.independent(constraints.real, 1)
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if matrix.ndim < 2:
            name = ("scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None
                    else "precision_matrix")
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch "
                             "dimensions")
        batch = Size(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch, -1, -1)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch, -1, -1)
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = precision_matrix.expand(*batch, -1, -1)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self.loc = loc.expand(*batch, -1)
        super().__init__(batch, loc.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new.loc = self.loc.expand(*batch_shape, *self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, *self._event_shape, *self._event_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return _ops.matmul(L, L.transpose(-1, -2)).expand(*self._batch_shape, *self._event_shape,
                                                          *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        # NOTE: as PyTorch, through cholesky_inverse, whose gradient treats L as a full matrix.
        return linalg.cholesky_inverse(self._unbroadcasted_scale_tril).expand(*self._batch_shape, *self._event_shape,
                                                                        *self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        """`loc + L eps` with `eps ~ N(0, I)`: differentiable in `loc` and the covariance."""
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + _ops.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if not len(self._batch_shape) else H.expand(*self._batch_shape)

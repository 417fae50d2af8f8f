"""`Wishart`: the law of `sum_i x_i x_i^T` over `df` Gaussian vectors of covariance Sigma, sampled (and
reparameterised) through the Bartlett decomposition."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import _ops, linalg
from .._factories import arange, eye, randn, tensor
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function `sum_{i < p} digamma(x - i / 2)`."""
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype) / 2).digamma().sum(-1)


class Wishart(ExponentialFamily):
    """Wishart distribution over `p x p` positive-definite matrices with `df` (> p - 1) degrees of freedom and
    scale given by exactly one of `covariance_matrix`, `precision_matrix` or `scale_tril` (its Cholesky factor).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Wishart(tp.tensor(4.0), covariance_matrix=tp.eye(2))
        >>> d.mean, d.log_prob(tp.eye(2)), d.rsample((3,)).shape
        (tensor([[4., 0.],
                [0., 4.]]), tensor(-4.2242), tapeflow.Size([3, 2, 2]))
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None)
        if param.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch = tuple(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype)
        else:
            batch = np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(*batch)
        p = param.shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = "scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None \
            else "precision_matrix"
        setattr(self, name, param.expand(*batch, -1, -1))
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch, param.shape[-2:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2()

    def _chi2(self) -> Chi2:
        """The squared diagonal of the Bartlett factor: entry i ~ Chi2(df - i)."""
        p = self._event_shape[-1]
        return Chi2(self.df.unsqueeze(-1) - arange(p, dtype=self._unbroadcasted_scale_tril.dtype))

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        cov_shape = (*batch_shape, *self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._dist_chi2 = new._chi2()
        new._validate_args = self._validate_args
        return new

    def _full(self, M):
        return M.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(_ops.matmul(L, L.transpose(-2, -1)))

    @lazy_property
    def precision_matrix(self):
        identity = eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return self._full(linalg.cholesky_solve(identity, self._unbroadcasted_scale_tril))

    def _df_matrix(self, df):
        return df.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        return self._df_matrix(factor.masked_fill(factor <= 0, float("nan"))) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        """`(L A)(L A)^T`, `A` lower triangular with `sqrt(Chi2(df - i))` on the diagonal, N(0, 1) below."""
        p = self._event_shape[-1]
        eps = float(np.finfo(self._unbroadcasted_scale_tril.dtype.jax).eps)
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = randn((*sample_shape, *self._batch_shape, p * (p - 1) // 2), dtype=diag.dtype)
        noise = diag.diag_embed() + vec_to_tril_matrix(below, diag=-1)
        chol = _ops.matmul(self._unbroadcasted_scale_tril, noise)
        return _ops.matmul(chol, chol.transpose(-2, -1))

    def _singular(self, sample):
        bad = ~self.support.check(sample)
        return bad.reshape(*bad.shape[:bad.ndim - len(self._batch_shape)], -1).any(-1) if len(self._batch_shape) \
            else bad

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws; singular ones (possible for `df` close to `p - 1`) are redrawn up to
        `max_try_correction` (10) times and may remain (their `log_prob` is then `-inf`)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        # NOTE: PyTorch tests `support.check(sample)` here, i.e. warns and redraws when samples are *regular*.
        if bool(singular.any()):  # one host read, as PyTorch's
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redraw = singular.reshape(*singular.shape, *([1] * (len(self._batch_shape) + 2)))
                sample = _ops.where(redraw, self._bartlett_sampling(sample_shape), sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det_scale(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = linalg.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det_scale()) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det_scale()) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + (y + (p + 1) / 2).mvlgamma(p)

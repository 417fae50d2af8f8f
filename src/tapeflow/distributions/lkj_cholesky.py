"""`LKJCholesky`: the LKJ distribution over Cholesky factors of correlation matrices, sampled by the onion
method (Lewandowski, Kurowicka and Joe, 2009)."""

from __future__ import annotations

import math

import numpy as np

from .. import _ops
from .._factories import arange, randn, tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution of the lower Cholesky factor `L` of a `dim x dim` correlation matrix: `L L^T` has density
    proportional to `det(L L^T) ** (concentration - 1)` (uniform over correlation matrices at 1).

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.LKJCholesky(3, tp.tensor(2.0))
        >>> L = d.sample()
        >>> L.shape, (L ** 2).sum(-1), d.log_prob(tp.eye(3))
        (tapeflow.Size([3, 3]), tensor([1., 1., 1.]), tensor(-0.6155))
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i of L (i >= 1) has squared off-diagonal norm ~ Beta(i / 2, concentration + (dim - 2 - i + 1) / 2)
        marginal_conc = self.concentration + 0.5 * (dim - 2)
        offset = tensor(np.concatenate([[0.0], np.arange(dim - 1)]), dtype=self.concentration.dtype)
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._beta = self._beta.expand((*batch_shape, self.dim))
        return new

    def sample(self, sample_shape=()):
        """Onion method: row i is a uniform direction in its first i coordinates, scaled to a Beta-drawn norm,
        with the diagonal entry completing it to unit length."""
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            first_row = tensor(np.arange(self.dim) == 0).unsqueeze(-1)
            u = _ops.where(first_row, 0.0, u / u.norm(dim=-1, keepdim=True))  # row 0 is 0 / 0
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=float(np.finfo(w.dtype.jax).tiny)).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1) - alpha.lgamma() * dm1
        return unnormalized - normalizer

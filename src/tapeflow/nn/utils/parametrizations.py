"""Parametrizations built on `parametrize` (PyTorch's `torch.nn.utils.parametrizations`): `weight_norm`,
`spectral_norm`, `orthogonal`."""

from __future__ import annotations

import numpy as np

from ... import _factories, _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import householder_product
from ..functional import normalize
from ..modules.module import Module
from .parametrize import register_parametrization
from .weight_norm import norm_except_dim

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0):
    """`module.<name>` as `g * v / ||v||`, with `g` and `v` in `parametrizations.<name>.original0/1`.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.weight_norm(tp.nn.Linear(3, 2))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """`weight / sigma`, sigma the largest singular value estimated by power iteration on the buffers `_u`, `_v`
    (15 steps at creation, `n_power_iterations` per training forward)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim, self.eps, self.n_power_iterations = dim if dim >= 0 else dim + ndim, eps, n_power_iterations
        if ndim > 1:
            with no_grad():
                mat = self._reshape_weight_to_matrix(weight)
                h, w = mat.shape
                self.register_buffer("_u", normalize(mat.new_empty(h).normal_(0, 1), dim=0, eps=eps))
                self.register_buffer("_v", normalize(mat.new_empty(w).normal_(0, 1), dim=0, eps=eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat, n: int) -> None:
        with no_grad():
            for _ in range(n):
                self._u.copy_(normalize(_ops.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(_ops.mv(mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # the graph keeps these values, not the updated buffers
        return weight / _ops.dot(u, _ops.mv(mat, v))

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """`module.<name>` divided by its spectral norm, as a parametrization (buffers
    `parametrizations.<name>.0._u` / `_v`).

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.spectral_norm(tp.nn.Linear(4, 3))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))


# -- orthogonal ------------------------------------------------------------------------------------------------
_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


def _geqrf(A):
    """LAPACK's `geqrf` (`torch.geqrf`): reflectors below the diagonal of the result, `R` on and above it, and
    the reflectors' scales `tau`. No gradient."""
    a, tau = np.linalg.qr(A.detach().cpu().numpy(), mode="raw")  # LAPACK's output, transposed
    return (_factories.tensor(np.swapaxes(a, -1, -2), device=A.device),
            _factories.tensor(tau, device=A.device))


def _is_orthogonal(Q) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _factories.eye(k, dtype=Q.dtype, device=Q.device)
    return bool(_ops.allclose(Q.mH @ Q, eye, atol=10.0 * n * float(np.finfo(Q.dtype.jax).eps)))


def _make_orthogonal(A):
    """The `Q` of `A = QR` (`A` tall, maybe complex) with the diagonal of `R` real and non-negative."""
    from ...linalg import qr

    Q, R = qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """An orthogonal (unitary) matrix, or batch of them, from an unconstrained one through `orthogonal_map`,
    left-multiplied by the buffer `base` with `use_trivialization=True`."""

    def __init__(self, weight, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        # Householder reflectors of a complex (or any rectangular) matrix cannot be recovered with their `tau`.
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map == "householder":  # X is real
            A = X.tril(-1)
            Q = householder_product(A, 2.0 / (1.0 + (A * A).sum(dim=-2)))
            # the diagonal of X holds the signs (+-1); cast so that no gradient reaches it
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()  # n * k - k * (k - 1) / 2 free parameters
            if n != k:  # pad to a square matrix
                X = _ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], n, n - k)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == "matrix_exp":
                from ...linalg import matrix_exp

                Q = matrix_exp(A)
            else:  # Cayley: (I + A/2)(I - A/2)^-1
                from ...linalg import solve

                eye = _factories.eye(n, dtype=A.dtype, device=A.device)
                Q = solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transposed = n < k
        if transposed:
            Q, n, k = Q.mT, k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when use_trivialization=False.")
            # reflectors of the QR decomposition with diag(R) > 0; the diagonal stores the sign to apply to
            # each column (flipped where LAPACK used no reflection, tau == 0)
            A, tau = _geqrf(Q)
            d = A.diagonal(dim1=-2, dim2=-1).sign()
            d = _ops.where(tau == 0.0, -d, d)
            eye = _factories.eye(n, k, dtype=A.dtype, device=A.device)
            A = A * (1 - eye) + eye * d.unsqueeze(-2)
            return A.mT if transposed else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q to an n x n orthogonal matrix with random columns
            N = _factories.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(_ops.cat([Q, N], dim=-1))
        self.base = Q
        # -I: householder(zeros) is then the identity, and so is every map
        return _factories.zeros_like(Q_init) - _factories.eye(Q_init.shape[-2], Q_init.shape[-1],
                                                              dtype=Q_init.dtype, device=Q_init.device)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True):
    """Make `module.<name>` an orthogonal (unitary, for complex) matrix or batch of matrices `(*, m, n)`:
    `Q^H Q = I` if `m >= n`, `Q Q^H = I` otherwise.

    Arguments:
        module: the module holding the tensor.
        name: the tensor's name.
        orthogonal_map: `"matrix_exp"` or `"cayley"` (of a skew-symmetric matrix built from the original's
            lower triangle) or `"householder"` (a product of reflectors stored below the original's diagonal;
            real tensors only). Default: `"matrix_exp"` for square or complex matrices, `"householder"`
            otherwise.
        use_trivialization: keep a buffer `parametrizations.<name>.0.base` that the map's result multiplies
            (PyTorch's "dynamic trivialization"); the initial weight (and any weight assigned later) is stored
            there and the original starts as `-I`.

    Returns:
        `module`. The initial weight is the original one if it is orthogonal, else the `Q` of its QR
        decomposition (with `use_trivialization=True` or `"householder"`; otherwise the map applied to the
        original). A tall or wide `base` is completed with random columns, as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.orthogonal(tp.nn.Linear(3, 5))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0.base']
        >>> Q = m.weight
        >>> bool(tp.dist(Q.T @ Q, tp.eye(3)) < 1e-5)
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.is_complex() else "householder"
    if not isinstance(orthogonal_map, str):
        raise TypeError(f"attribute name must be string, not '{type(orthogonal_map).__name__}'")
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    register_parametrization(module, name, orth, unsafe=True)
    return module

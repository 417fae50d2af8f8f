"""Randomized low-rank SVD and PCA (`svd_lowrank`, `pca_lowrank`), as PyTorch computes them.

The range of the matrix is sketched with `q` Gaussian columns drawn from the global generator (the same draws
as PyTorch's for the same seed), refined by `niter` rounds of subspace iteration, each product
re-orthonormalised by a QR factorisation; the SVD of the small projected matrix then gives the factors
(Halko, Martinsson and Tropp, 2009). Everything is made of differentiable ops, so gradients flow through
`U`, `S` and `V` as through PyTorch's.
"""

from __future__ import annotations

from . import _dtype, linalg
from ._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _range_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """Orthonormal columns that approximately span the range of `A - M`."""
    from ._factories import randn

    dtype = A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else _dtype.float32
    sketch = randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def times(X, adjoint=False):
        left, shift = (A.mH, None if M is None else M.mH) if adjoint else (A, M)
        out = left @ X
        return out if shift is None else out - shift @ X

    Q = linalg.qr(times(sketch)).Q
    for _ in range(niter):
        Q = linalg.qr(times(Q, adjoint=True)).Q
        Q = linalg.qr(times(Q)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # (the algorithm sketches the range of a tall matrix: work on the adjoint)
        A, M = A.mH, None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """An approximate truncated SVD of `A - M` (batches allowed): `(U, S, V)` with `q` singular triplets, from
    a randomized sketch refined by `niter` subspace iterations (draws from the global generator).

    Example:
        >>> import tapeflow as tp
        >>> _ = tp.manual_seed(0)
        >>> A = tp.randn(20, 3) @ tp.randn(3, 10)
        >>> U, S, V = tp.svd_lowrank(A, q=3)
        >>> tuple(U.shape), tuple(S.shape), tuple(V.shape), bool(tp.dist(U @ S.diag() @ V.mT, A) < 1e-3)
        ((20, 3), (3,), (10, 3), True)
    """
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """Principal components of the rows of `A` by `svd_lowrank` of `A` minus its column means (when `center`):
    `(U, S, V)`, the columns of `V` the principal directions. `q` defaults to `min(6, m, n)`.

    Example:
        >>> import tapeflow as tp
        >>> _ = tp.manual_seed(0)
        >>> U, S, V = tp.pca_lowrank(tp.randn(50, 4) * tp.tensor([5.0, 1.0, 0.1, 0.1]), q=2)
        >>> tuple(V.shape), bool(V[0, 0].abs() > 0.99)
        ((4, 2), True)
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if A.is_sparse and A.ndim != 2:
        raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)

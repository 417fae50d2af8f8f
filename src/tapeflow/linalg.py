"""`tp.linalg`: the matrix functions of the op table, with `torch.linalg`'s names and checks.

Every function accepts a batch of matrices (`(*, n, n)`) and is differentiable
to any order: `inv` has a hand-written VJP, the others derive theirs from JAX.
"""

from __future__ import annotations

import xla_ops as X

from ._dispatch import dispatch
from ._ops import _to_float, matmul, norm
from ._tensor import Tensor

__all__ = ["cholesky", "det", "inv", "matmul", "norm", "slogdet", "solve", "vector_norm"]


def inverse(input: Tensor) -> Tensor:
    """`tp.inverse` / `Tensor.inverse`: the same as `tp.linalg.inv`."""
    return inv(input)


def _square(name: str, A: Tensor) -> Tensor:
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got {A.dtype}")
    return A


def inv(A: Tensor) -> Tensor:
    """Inverse of each square matrix in `A` (NaN/inf entries where a matrix is singular; no host check)."""
    return dispatch(X.linalg_inv, (_square("inv", A),))


def det(A: Tensor) -> Tensor:
    """Determinant of each square matrix in `A`."""
    return dispatch(X.linalg_det, (_square("det", A),))


def slogdet(A: Tensor):
    """(sign, log|det|) of each square matrix, computed from `det` (fine for well-scaled matrices)."""
    d = det(A)
    return d.sign(), d.abs().log()


def solve(A: Tensor, B: Tensor) -> Tensor:
    """`X` with `A @ X = B`; `B` is a batch of vectors `(*, n)` or of matrices `(*, n, k)`."""
    A = _square("solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if B.shape[-1 if vector else -2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {tuple(B.shape)})")
    if vector:
        return dispatch(X.linalg_solve, (A, _to_float(B).unsqueeze(-1))).squeeze(-1)
    return dispatch(X.linalg_solve, (A, _to_float(B)))


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """Lower Cholesky factor `L` with `A = L @ L.mH` (its transpose with `upper=True`)."""
    L = dispatch(X.cholesky, (_square("cholesky", A),))
    return L.mT if upper else L


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The `ord`-norm of `x` seen as a vector (over `dim`, all elements by default)."""
    if dtype is not None:
        x = x.to(dtype)
    return norm(x, ord, dim, keepdim)

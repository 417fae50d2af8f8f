"""`tp.linalg`: the matrix functions of the op table, with `torch.linalg`'s names and checks.

Every function accepts a batch of matrices (`(*, m, n)`) and is differentiable
to any order (the VJP of the VJP comes from JAX). `inv`, `svd`, `eigh` and
`cross` have hand-written VJPs and `pinv` a hand-written derivative; the
others derive theirs from JAX.

Gradients of singular vectors and eigenvectors are ill-defined where singular
values or eigenvalues repeat, as in PyTorch (whose results there are inf or
NaN); tapeflow gives the same, except that a pair of repeated values the loss
does not depend on (only `S` or `eigenvalues` used, say) contributes zero, so
`svd(A).S.sum()` stays finite at `A = I`.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np

import xla_ops as X

from . import _dtype, _factories
from ._dispatch import dispatch
from ._dtype import int64
from ._ops import _to_float, matmul
from ._ops import norm as _vector_norm
from ._ops import where as tp_where
from ._ops._dtype_rules import _kernel
from ._ops.reduce import return_types
from ._tensor import Tensor
from .autograd.grad_mode import no_grad

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigvals", "eigh",
           "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
           "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]

# Named results, as `torch.return_types.*`.
for _name, _fields in [("linalg_lu", "P L U"), ("linalg_lu_factor", "LU pivots"), ("linalg_inv_ex", "inverse info"),
                       ("linalg_cholesky_ex", "L info"),
                       ("linalg_solve_ex", "result info"), ("linalg_lu_factor_ex", "LU pivots info"),
                       ("linalg_svd", "U S Vh"), ("linalg_qr", "Q R"), ("linalg_eigh", "eigenvalues eigenvectors"),
                       ("linalg_lstsq", "solution residuals rank singular_values"), ("svd", "U S V"), ("qr", "Q R"),
                       ("linalg_slogdet", "sign logabsdet"), ("slogdet", "sign logabsdet"),
                       ("linalg_eig", "eigenvalues eigenvectors")]:
    setattr(return_types, _name, namedtuple(_name, _fields))


def inverse(input: Tensor) -> Tensor:
    """`tp.inverse` / `Tensor.inverse`: the same as `tp.linalg.inv`.

    Example:
        >>> import tapeflow as tp
        >>> tp.inverse(tp.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    return inv(input)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """`tp.cholesky_solve`: `X` with `A X = B` for `A = L L^H` (`U^H U` when `upper`), given the factor.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 2.0], [2.0, 3.0]])
        >>> L = tp.linalg.cholesky(A)
        >>> tp.cholesky_solve(tp.tensor([[6.0], [5.0]]), L)
        tensor([[1.],
                [1.]])
    """
    _square("cholesky_solve", L)
    if L.mT.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"cholesky_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({L.shape[-2]}x{L.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    # Through the product, as PyTorch differentiates it: every entry of the factor gets a gradient.
    return solve(L.mH @ L if upper else L @ L.mH, B)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """`tp.cholesky_inverse`: the inverse of `A = L L^H` (`U^H U` when `upper`), given the factor.

    Example:
        >>> import tapeflow as tp
        >>> L = tp.linalg.cholesky(tp.tensor([[4.0, 0.0], [0.0, 1.0]]))
        >>> tp.cholesky_inverse(L)
        tensor([[0.2500, 0.0000],
                [0.0000, 1.0000]])
    """
    _square("cholesky_inverse", L)
    return inv(L.mH @ L if upper else L @ L.mH)


def _matrix(name: str, A: Tensor) -> Tensor:
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got {A.dtype}")
    return A


def _square(name: str, A: Tensor) -> Tensor:
    _matrix(name, A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    return A


class LinAlgError(RuntimeError):
    """A matrix function failed on its input (a singular matrix, one that is not positive-definite).

    Example:
        >>> import tapeflow as tp
        >>> try:
        ...     tp.linalg.inv(tp.zeros(2, 2))
        ... except tp.linalg.LinAlgError as e:
        ...     print(type(e).__name__)
        LinAlgError
    """


_all_finite = jax.jit(lambda a: jnp.all(jnp.isfinite(a)))


def _raise_if_failed(name: str, out: Tensor, info_of, message: str) -> Tensor:
    """In eager mode, raise `LinAlgError` where LAPACK would report failure, as PyTorch does.

    One host read of "is every entry finite" (a failed factorization leaves inf/NaN); only then is the
    exact `info` computed, for PyTorch's message. Skipped on tracers (inside `jax.jit` / `tp.compile`:
    use the `_ex` variant and its `info` there)."""
    if isinstance(out._data, jax.core.Tracer) or bool(_all_finite(out._data)):
        return out
    _check_info(name, info_of(), True, message)
    return out


def inv(A: Tensor) -> Tensor:
    """Inverse of each square matrix in `A`; a singular matrix raises `LinAlgError` (in eager mode).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> tp.allclose(tp.linalg.inv(A) @ A, tp.eye(2))
        True
    """
    A = _square("inv", A)
    return _raise_if_failed("inv", dispatch(X.linalg_inv, (A,)), lambda: _lu_info(lu_factor(A.detach()).LU), _SINGULAR)


def det(A: Tensor) -> Tensor:
    """Determinant of each square matrix in `A`.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> tp.linalg.det(A)
        tensor(11.)
    """
    return dispatch(X.linalg_det, (_square("det", A),))


def slogdet(A: Tensor):
    """The named tuple `(sign, logabsdet)` of each square matrix (from an LU factorisation, so it neither
    overflows nor underflows where `det` would); `sign` is 0 and `logabsdet` `-inf` for a singular matrix.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> sign, logabsdet = tp.linalg.slogdet(A)
        >>> sign, logabsdet.exp()
        (tensor(1.), tensor(11.0000))
    """
    return return_types.linalg_slogdet(*dispatch(X.linalg_slogdet, (_square("slogdet", A),)))


def logdet(A: Tensor) -> Tensor:
    """`log(det(A))` of each square matrix: NaN where the determinant is negative, `-inf` where it is 0.

    Example:
        >>> import tapeflow as tp
        >>> tp.logdet(tp.tensor([[4.0, 1.0], [1.0, 3.0]])).exp()
        tensor(11.0000)
    """
    sign, logabsdet = slogdet(A)
    if sign.dtype.is_complex:
        return logabsdet + sign.log()
    return tp_where(sign < 0, float("nan"), logabsdet)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """`X` with `A @ X = B` (`X @ A = B` when `left=False`); `B` is a batch of vectors `(*, n)` or of
    matrices (`(*, n, k)`, or `(*, k, n)` when `left=False`). A singular `A` raises `LinAlgError`.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> tp.linalg.solve(A, tp.tensor([5.0, 4.0]))
        tensor([1., 1.])
    """
    return _solve(A, B, left, True)


def _solve(A: Tensor, B: Tensor, left: bool, check: bool) -> Tensor:
    A = _square("solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A._raw.dtype != B._raw.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{s[A.dtype.name]} and B of type {s[B.dtype.name]} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    # (a vector B is a column n x 1: with `left=False`, X A = B has no solution unless A is 1 x 1, as in PyTorch)
    if ((B.shape[-1] if left else 1) if vector else B.shape[-2 if left else -1]) != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} "
                           f"= B ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{f'{B.shape[-1]}x1' if vector else f'{B.shape[-2]}x{B.shape[-1]}'})")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for "
                               "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        return _solve(A.mT, B.mT, True, check).mT
    out = dispatch(X.linalg_solve, (A, _to_float(B).unsqueeze(-1) if vector else _to_float(B)))
    if check:
        out = _raise_if_failed("solve", out, lambda: _lu_info(lu_factor(A.detach()).LU), _SOLVE_SINGULAR)
    return out.squeeze(-1) if vector else out


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """`X` with `A @ X = B` (or `X @ A = B` when `left=False`) for triangular `A`; batches broadcast.

    Only the `upper` (or lower) triangle of `A` is read, and its diagonal is taken as ones when
    `unitriangular`; the gradient of `A` lies on that triangle, as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> U = tp.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> tp.linalg.solve_triangular(U, tp.tensor([[4.0], [8.0]]), upper=True)
        tensor([[1.],
                [2.]])
    """
    A = _square("solve_triangular", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve_triangular(): argument 'B' must be Tensor, not {type(B).__name__}")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    n = B.shape[-2] if left else B.shape[-1]
    if n != A.shape[-1]:
        side = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {side} "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"linalg.solve_triangular: the batch dimensions of A {tuple(A.shape)} and B "
                           f"{tuple(B.shape)} do not broadcast") from None
    params = (("upper", bool(upper)), ("left", bool(left)), ("unitriangular", bool(unitriangular)))
    return dispatch(X.linalg_solve_triangular, (A, _to_float(B)), params)


def _pivot(name: str, pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(f"linalg.{name}: LU without pivoting is not implemented on the CPU")


def lu(A: Tensor, *, pivot: bool = True):
    """LU decomposition with partial pivoting: `(P, L, U)` with `A = P @ L @ U`, batched, any `(m, n)`.

    `L` is unit lower triangular `(m, k)`, `U` upper triangular `(k, n)`, `k = min(m, n)`; `P` is a
    permutation matrix (no gradient). Differentiable to any order.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> P, L, U = tp.linalg.lu(A)
        >>> tp.allclose(P @ L @ U, A)
        True
    """
    _matrix("lu", A)
    _pivot("lu", pivot)
    P, L, U = dispatch(X.linalg_lu, (A,))
    return return_types.linalg_lu(P, L, U)


def lu_factor(A: Tensor, *, pivot: bool = True):
    """The compact LU factorisation `(LU, pivots)` for `lu_solve`: `L` below the diagonal of `LU` (unit
    diagonal implied), `U` on and above it; `pivots` are LAPACK's 1-based row interchanges (int32).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> LU, pivots = tp.linalg.lu_factor(A)
        >>> pivots
        tensor([1, 2], dtype=tapeflow.int32)
    """
    _matrix("lu_factor", A)
    _pivot("lu_factor", pivot)
    LU, pivots = dispatch(X.linalg_lu_factor, (A,))
    return return_types.linalg_lu_factor(LU, pivots)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """Solve `A X = B` (`X A = B` when `left=False`; with `A^H` when `adjoint`) from `lu_factor(A)`.
    Batch dimensions broadcast; differentiable in `LU` and `B`.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> LU, pivots = tp.linalg.lu_factor(A)
        >>> tp.linalg.lu_solve(LU, pivots, tp.tensor([[5.0], [4.0]]))
        tensor([[1.],
                [1.]])
    """
    _square("lu_solve", LU)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: B must be a Tensor with at least 2 dimensions")
    if pivots.dtype.is_floating_point or tuple(pivots.shape[-1:]) != tuple(LU.shape[-1:]):
        raise RuntimeError(f"linalg.lu_solve: pivots must be an integer tensor of shape (*, {LU.shape[-1]}), "
                           f"as lu_factor returns, got {pivots.dtype} {tuple(pivots.shape)}")
    n = B.shape[-2] if left else B.shape[-1]
    if n != LU.shape[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({LU.shape[-2]}x{LU.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    return dispatch(X.linalg_lu_solve, (LU, pivots, _to_float(B)), (("left", bool(left)), ("adjoint", bool(adjoint))))


def _lu_info(LU: Tensor) -> Tensor:
    """LAPACK's `info` of an LU factorisation: the 1-based index of the first exactly zero pivot, else 0."""
    with no_grad():
        zero = LU.diagonal(dim1=-2, dim2=-1) == 0
        first = zero.to(int64).argmax(-1) + 1
        return first.masked_fill(~zero.any(-1), 0).to(_dtype.int32)


# PyTorch's messages for a non-zero `info`, by what it means.
_NOT_PD = ("The factorization could not be completed because the input is not positive-definite (the leading minor "
           "of order {k} is not positive-definite).")
_ZERO_PIVOT = ("U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. If you still want to "
               "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
_SINGULAR = "The diagonal element {k} is zero, the inversion could not be completed because the input matrix is singular."
_SOLVE_SINGULAR = "The solver failed because the input matrix is singular."


def _check_info(name: str, info: Tensor, check_errors: bool, message: str) -> None:
    """With `check_errors`, raise `message` (its `{k}` is the info value) for the first failed matrix."""
    if not check_errors:
        return
    flat = info.reshape(-1).tolist()  # asked for: one host read
    bad = next((i for i, v in enumerate(flat) if v), None)
    if bad is not None:
        where = f"(Batch element {bad}): " if info.ndim else ""
        raise LinAlgError(f"linalg.{name}: {where}{message.format(k=flat[bad])}")


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """`(L, info)`: `cholesky` plus LAPACK's `info` (int32 per matrix: the order of the first leading minor
    that is not positive definite, or 0). Where `info` is non-zero, `L` holds NaN.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> L, info = tp.linalg.cholesky_ex(A)
        >>> info
        tensor(0, dtype=tapeflow.int32)
    """
    L = dispatch(X.cholesky, (_square("cholesky_ex", A),))
    L = L.mT if upper else L
    info = dispatch(X.cholesky_info, (A.detach(),))
    _check_info("cholesky_ex", info, check_errors, _NOT_PD)
    return return_types.linalg_cholesky_ex(L, info)


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """`lu_factor` plus LAPACK's `info` (int32 per matrix: 1-based index of a zero pivot of `U`, or 0).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> LU, pivots, info = tp.linalg.lu_factor_ex(A)
        >>> info
        tensor(0, dtype=tapeflow.int32)
    """
    LU, pivots = lu_factor(A, pivot=pivot)
    info = _lu_info(LU)
    _check_info("lu_factor_ex", info, check_errors, _ZERO_PIVOT)
    return return_types.linalg_lu_factor_ex(LU, pivots, info)


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """`(inverse, info)`: `inv` plus `info` (non-zero where a matrix is singular; see `lu_factor_ex`).

    Example:
        >>> import tapeflow as tp
        >>> inverse, info = tp.linalg.inv_ex(tp.zeros(2, 2))
        >>> info
        tensor(1, dtype=tapeflow.int32)
    """
    info = _lu_info(lu_factor(_square("inv_ex", A).detach()).LU)
    _check_info("inv_ex", info, check_errors, _SINGULAR)
    return return_types.linalg_inv_ex(dispatch(X.linalg_inv, (A,)), info)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """`(result, info)`: `solve` plus `info` (non-zero where a matrix is singular; see `lu_factor_ex`).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> X, info = tp.linalg.solve_ex(A, tp.tensor([5.0, 4.0]))
        >>> X, info
        (tensor([1., 1.]), tensor(0, dtype=tapeflow.int32))
    """
    info = _lu_info(lu_factor(_square("solve_ex", A).detach()).LU)
    _check_info("solve_ex", info, check_errors, _SINGULAR)
    return return_types.linalg_solve_ex(_solve(A, B, left, False), info)


def multi_dot(tensors) -> Tensor:
    """`tensors[0] @ tensors[1] @ ...`, multiplied in the cheapest order; the first may be a row vector
    and the last a column vector (1-D), the others are matrices.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.multi_dot([tp.ones(2, 3), tp.ones(3, 4), tp.ones(4, 1)])
        tensor([[12.],
                [12.]])
    """
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        allowed = (1, 2) if i in (0, len(ts) - 1) else (2,)
        if t.ndim not in allowed:
            where = "the first and last tensors" if allowed == (1, 2) else f"tensor {i}"
            raise RuntimeError(f"multi_dot(): {where} must be {' or '.join(f'{d}D' for d in allowed)} but got "
                               f"{t.ndim}D")
    for i, t in enumerate(ts[1:], 1):
        if t.dtype != ts[0].dtype:
            c = _dtype.CPP_NAMES
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{c[ts[0].dtype.name]} and tensor {i} {c[t.dtype.name]}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    mats = [ts[0].unsqueeze(0) if first_vec else ts[0], *ts[1:-1], ts[-1].unsqueeze(-1) if last_vec else ts[-1]]
    for a, b in zip(mats, mats[1:]):
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors cannot be chain-multiplied: shapes {tuple(a.shape)} and "
                               f"{tuple(b.shape)}")
    out = _chain(mats, _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]]), 0, len(mats) - 1)
    if first_vec:
        out = out.squeeze(0)
    return out.squeeze(-1) if last_vec else out


def _chain_order(dims: list) -> list:
    """The split points of the cheapest parenthesisation of a matrix chain (dynamic programming)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = builtins.min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k) for k in range(i, j))
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k) @ _chain(mats, split, k + 1, j)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """Vandermonde matrix of `x` (`(*, n)`): columns `x**0, x**1, ..., x**(N-1)` (N defaults to n).

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.vander(tp.tensor([1.0, 2.0, 3.0]))
        tensor([[1., 1., 1.],
                [1., 2., 4.],
                [1., 3., 9.]])
    """
    if x.ndim < 1:
        raise ValueError("x must be at least 1-dimensional.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise ValueError("N must be greater than 1.")
    # Running products, as in PyTorch: the derivative stays finite where x is zero.
    from ._ops import cat

    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat([_factories.ones_like(x).unsqueeze(-1), powers], -1)


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first `n` columns of `H_1 @ ... @ H_k` for `A` of shape `(*, m, n)` and `tau` of shape `(*, k)`
    (`k <= n <= m`): `H_i = I - tau_i v_i v_i^H`, with `v_i` the `i`-th column of `A` below the diagonal and a
    1 on it (LAPACK's `orgqr`, as after `geqrf`). Differentiable in both inputs.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.householder_product(tp.tensor([[0.0, 0.0], [2.0, 0.0], [4.0, 3.0]]), tp.tensor([0.5]))
        tensor([[ 0.5000, -1.0000],
                [-1.0000, -1.0000],
                [-2.0000, -4.0000]])
    """
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1] if tau.ndim else 1
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {_dtype.SCALAR_NAMES[tau.dtype.name]} does not match input dtype "
                           f"{_dtype.SCALAR_NAMES[A.dtype.name]}")
    if not (A.is_floating_point() or A.is_complex()):
        raise _kernel("orgqr_cpu")(A.dtype.name)
    eye = _factories.eye(m, n, dtype=A.dtype, device=A.device)
    V = A.tril(-1) + eye
    Q = eye.expand(*A.shape[:-2], m, n)
    if k == 0:  # the identity's columns, still a result of both inputs (zero gradients), as PyTorch's is
        Q = Q + (A[..., :0].sum(-1, keepdim=True) + tau.sum(-1)[..., None, None])
    for i in reversed(range(k)):  # H_k first: each reflector applied to the product of those after it
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.mH @ Q)
    return Q


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix (a view, as `Tensor.diagonal` with the last two dimensions by default).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> tp.linalg.diagonal(A)
        tensor([4., 3.])
    """
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


def cond(A: Tensor, p=None) -> Tensor:
    """Condition number of each matrix in the `p`-norm: `σ_max / σ_min` for `p` in `None, 2, -2`
    (any shape), else `‖A‖_p ‖A⁻¹‖_p` (square matrices; `p` in `"fro" "nuc" inf -inf 1 -1`).

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.cond(tp.tensor([[2.0, 0.0], [0.0, 0.5]]))
        tensor(4.)
    """
    _matrix("cond", A)
    if p in (None, 2, -2):
        s = svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    if p not in ("fro", "nuc", float("inf"), -float("inf"), 1, -1):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _square("cond", A)
    c = matrix_norm(A, p) * matrix_norm(dispatch(X.linalg_inv, (A,)), p)  # singular: inf, not an error
    return c.masked_fill(c.isnan(), float("inf"))  # a singular matrix: inv has inf/NaN entries


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of `A` seen as a map from its last dimensions to its first `ind`: `tensordot(tensorinv(A),
    A, ind)` is the identity of shape `A.shape[ind:] * 2`.

    Example:
        >>> import tapeflow as tp
        >>> T = tp.eye(4).reshape(4, 2, 2)
        >>> tp.linalg.tensorinv(T, ind=1).shape
        tapeflow.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = int(np.prod(out_shape)), int(np.prod(in_shape))
    if rows != cols:
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*in_shape, *out_shape)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """`X` with `tensordot(A, X, X.ndim) = B`; `dims` moves those dimensions of `A` to the end first.

    Example:
        >>> import tapeflow as tp
        >>> T = tp.eye(4).reshape(2, 2, 4)
        >>> tp.linalg.tensorsolve(T, tp.ones(2, 2)).shape
        tapeflow.Size([4])
    """
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        keep = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*keep, *dims)
    x_shape = tuple(A.shape[B.ndim:])
    rows, cols = int(np.prod(tuple(B.shape))), int(np.prod(x_shape))
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or rows != cols:
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(*x_shape)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """Lower Cholesky factor `L` with `A = L @ L.mH` (its transpose with `upper=True`).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 3.0]])
        >>> L = tp.linalg.cholesky(A)
        >>> tp.allclose(L @ L.T, A)
        True
    """
    L = dispatch(X.cholesky, (_square("cholesky", A),))
    L = _raise_if_failed("cholesky", L, lambda: dispatch(X.cholesky_info, (A.detach(),)), _NOT_PD)
    return L.mT if upper else L


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The `ord`-norm of `x` seen as a vector (over `dim`, all elements by default).

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.vector_norm(tp.tensor([3.0, 4.0]))
        tensor(5.)
        >>> tp.linalg.vector_norm(tp.tensor([3.0, -4.0]), ord=1)
        tensor(7.)
    """
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, not {ord!r} (use matrix_norm for 'fro'/'nuc')")
    if dtype is not None:
        x = x.to(dtype)
    if x._raw.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           + _dtype.SCALAR_NAMES.get(str(x._raw.dtype), str(x._raw.dtype)))
    return _vector_norm(x, ord, dim, keepdim)


# -- decompositions -------------------------------------------------------------------------------------------
def svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """Singular value decomposition `A = U @ diag(S) @ Vh`, batched; `S` descending.

    Arguments:
        A: `(*, m, n)` float or complex tensor.
        full_matrices: `U` is `(*, m, m)` and `Vh` `(*, n, n)` (the default); `False` keeps the first
            `k = min(m, n)` columns of `U` and rows of `Vh`.
        driver: accepted for compatibility (only meaningful on CUDA in PyTorch); must be `None`.

    Returns:
        The named tuple `(U, S, Vh)`. The extra columns of a full `U`/`Vh` are an orthonormal basis of
        the complement and carry no gradient (PyTorch ignores their gradient too). Singular vectors
        are unique up to sign, so differentiate functions that do not depend on it (`U @ diag(S) @ Vh`,
        `S`, `U[:, i] ⊗ Vh[i]`).

    Example:
        >>> A = tp.randn(4, 3, dtype=tp.float64, requires_grad=True)
        >>> U, S, Vh = tp.linalg.svd(A, full_matrices=False)
        >>> S.sum().backward()   # the nuclear norm's gradient, U @ Vh
    """
    if driver is not None:
        raise RuntimeError("linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                           "backend; leave it as None")
    U, S, Vh = dispatch(X.linalg_svd, (_matrix("svd", A),), (("full_matrices", builtins.bool(full_matrices)),))
    return return_types.linalg_svd(U, S, Vh)


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """The singular values of each matrix, descending (`(*, min(m, n))`); their gradient is always
    finite: `U @ diag(gS) @ Vh`.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.svdvals(tp.tensor([[3.0, 0.0], [0.0, -2.0]]))
        tensor([3., 2.])
    """
    if driver is not None:
        raise RuntimeError("linalg.svdvals: keyword argument `driver=` is only supported on CUDA inputs; "
                           "leave it as None")
    return dispatch(X.linalg_svdvals, (_matrix("svdvals", A),))


def qr(A: Tensor, mode: str = "reduced"):
    """QR decomposition `A = Q @ R` (Householder, as LAPACK), batched.

    Arguments:
        A: `(*, m, n)` float or complex tensor.
        mode: `"reduced"` (`Q` is `(*, m, k)`, `R` `(*, k, n)`, `k = min(m, n)`), `"complete"` (`Q` is
            `(*, m, m)`, `R` `(*, m, n)`) or `"r"` (`Q` is an empty tensor).

    Returns:
        The named tuple `(Q, R)`. Differentiable except with `mode="complete"` and `m > n` (the extra
        columns of `Q` are not determined by `A`), which raises on backward as in PyTorch. Unlike
        PyTorch, `R` of `mode="r"` is differentiable too.

    Example:
        >>> Q, R = tp.linalg.qr(tp.randn(5, 3, dtype=tp.float64))
        >>> Q.shape, R.shape
        (tapeflow.Size([5, 3]), tapeflow.Size([3, 3]))
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    Q, R = dispatch(X.linalg_qr, (_matrix("qr", A),), (("mode", "reduced" if mode == "r" else mode),))
    if mode == "r":
        Q = _factories.zeros(0, dtype=A.dtype, device=A.device)
    return return_types.linalg_qr(Q, R)


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def eigh(A: Tensor, UPLO: str = "L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of each symmetric (Hermitian) matrix.

    Arguments:
        A: `(*, n, n)`; only its `UPLO` triangle (`"L"` lower, `"U"` upper) and diagonal are read.
        UPLO: which triangle holds the matrix.

    Returns:
        The named tuple `(eigenvalues, eigenvectors)` with `A = V @ diag(L) @ V.mT`. Gradients are
        symmetric, as PyTorch's (the derivative along symmetric perturbations), so they land on
        both triangles. Eigenvectors are unique up to sign: differentiate sign-free functions
        (`eigenvalues`, `V @ diag(f(L)) @ V.mT`, `v ⊗ v`). Repeated eigenvalues make eigenvector
        gradients ill-defined (see the module notes).

    Example:
        >>> B = tp.randn(3, 3, dtype=tp.float64, requires_grad=True)
        >>> L, V = tp.linalg.eigh(B @ B.mT)
        >>> L[-1].backward()   # gradient of the largest eigenvalue
    """
    L, V = dispatch(X.linalg_eigh, (_square("eigh", A),), (("UPLO", _uplo(UPLO)),))
    return return_types.linalg_eigh(L, V)


def eig(A: Tensor):
    """Eigenvalues and eigenvectors of each square matrix, complex: the named tuple `(eigenvalues,
    eigenvectors)` with `A @ V = V @ diag(L)` and each column of `V` of norm 1 (as LAPACK returns them).

    Eigenvectors are unique only up to a complex phase: differentiate functions that do not depend on it
    (`L`, `V.abs()`, `V @ diag(f(L)) @ inv(V)`), as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.eig(tp.tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
        tensor([2.+0.j, 3.+0.j])
    """
    return return_types.linalg_eig(*dispatch(X.linalg_eig, (_square("eig", A),)))


def eigvals(A: Tensor) -> Tensor:
    """The (complex) eigenvalues of each square matrix, in the order `eig` gives them.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.eigvals(tp.tensor([[0.0, -1.0], [1.0, 0.0]]))
        tensor([0.+1.j, 0.-1.j])
    """
    return dispatch(X.linalg_eigvals, (_square("eigvals", A),))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each symmetric (Hermitian) matrix, ascending; gradients finite even where
    eigenvalues repeat.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[4.0, 1.0], [1.0, 4.0]])
        >>> tp.linalg.eigvalsh(A)
        tensor([3., 5.])
    """
    return dispatch(X.linalg_eigvalsh, (_square("eigvalsh", A),), (("UPLO", _uplo(UPLO)),))


# -- functions of matrices ------------------------------------------------------------------------------------
def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix (Padé approximation with scaling and squaring).

    Example:
        >>> tp.linalg.matrix_exp(tp.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    return dispatch(X.linalg_matrix_exp, (_square("matrix_exp", A),))


def matrix_power(A: Tensor, n: int) -> Tensor:
    """`A` multiplied by itself `n` times (by repeated squaring); `n < 0` powers the inverse, `n = 0`
    gives the identity (connected to `A` with a zero gradient).

    Example:
        >>> tp.linalg.matrix_power(tp.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    if isinstance(n, builtins.bool) or not isinstance(n, builtins.int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    _square("matrix_power", A)
    if n == 0:
        eye = _factories.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return A.narrow(-1, 0, 0).sum(-1, keepdim=True) + eye
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    result, square = None, A
    while True:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            return result
        square = matmul(square, square)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse of each matrix (`(*, m, n)` → `(*, n, m)`).

    Arguments:
        A: float or complex tensor.
        atol, rtol: singular values at or below `max(atol, rtol * largest)` count as zero. With both
            `None`, `rtol = eps * max(m, n)`; with only `atol` given (and positive), `rtol = 0`.
            Python numbers.
        hermitian: `A` is symmetric (Hermitian); only its lower triangle is read and an
            eigendecomposition replaces the SVD.

    Its gradient is the pseudo-inverse's own derivative at constant rank, finite for
    rank-deficient matrices and repeated singular values alike.

    Example:
        >>> A = tp.randn(4, 2, dtype=tp.float64)
        >>> tp.allclose(tp.linalg.pinv(A) @ A, tp.eye(2, dtype=tp.float64))
        True
    """
    _matrix("pinv", A)
    if hermitian:
        _square("pinv", A)
    params = (("atol", _tolerance("pinv", "atol", atol)), ("rtol", _tolerance("pinv", "rtol", rtol)),
              ("hermitian", builtins.bool(hermitian)))
    return dispatch(X.linalg_pinv, (A,), params)


def _tolerance(name: str, arg: str, value):
    if value is None:
        return None
    if isinstance(value, Tensor) or not isinstance(value, (builtins.int, builtins.float)):
        raise TypeError(f"linalg.{name}: pass `{arg}` as a Python number (tensor tolerances are not supported), "
                        f"not {type(value).__name__}")
    return builtins.float(value)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """Number of singular values above `max(atol, rtol * largest)` (defaults as `pinv`), as int64. The older
    form `matrix_rank(A, tol, hermitian=False)` counts those above the absolute tolerance `tol`.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.matrix_rank(tp.tensor([[1.0, 2.0], [2.0, 4.0]]))
        tensor(1)
        >>> tp.linalg.matrix_rank(tp.tensor([[1.0, 0.0], [0.0, 1e-3]]), 0.01)
        tensor(1)
    """
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() takes either tol or atol/rtol, not both")
        atol, rtol = tol, 0.0
    _matrix("matrix_rank", A)
    atol, rtol = _rank_tolerance(atol), _rank_tolerance(rtol)
    with no_grad():
        s = eigvalsh(A).abs() if hermitian else svdvals(A)
        if rtol is None:
            default = builtins.float(np.finfo(s.dtype.jax).eps) * builtins.max(A.shape[-2:])
            if atol is None:
                rtol = default
            elif isinstance(atol, Tensor):  # (0 where a batch's atol is positive)
                rtol = tp_where(atol > 0, 0.0, default)
            else:
                rtol = 0.0 if atol > 0 else default
        tol = (s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)) * rtol
        if atol is not None:
            tol = tol.clamp_min(atol)
        return (s > tol).sum(-1)


def _rank_tolerance(value):
    """A tolerance of `matrix_rank`: a number, or a tensor of one per matrix of the batch (shaped to broadcast
    against the singular values)."""
    if isinstance(value, Tensor):
        return value.unsqueeze(-1).to(_dtype.float64 if value.dtype == _dtype.float64 else _dtype.float32) \
            if value.ndim else value.item()
    return _tolerance("matrix_rank", "tolerance", value)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """Least-squares solution of `A @ X = B` (minimum-norm where `A` is rank-deficient or wide).

    Arguments:
        A: `(*, m, n)`; B: `(*, m, k)` or `(*, m)`, batch dimensions broadcast.
        rcond: singular values of `A` at or below `rcond * largest` count as zero (default:
            `eps * max(m, n)`).
        driver: which LAPACK routine PyTorch would call on CPU (default `"gelsy"`). tapeflow always
            solves with the pseudo-inverse; the driver selects which outputs are filled, as PyTorch's:

            | driver | residuals | rank | singular_values |
            |---|---|---|---|
            | `"gelsy"` (default) | empty | `(*)` int64 | empty |
            | `"gels"` | `(*, k)` when `m > n` | empty | empty |
            | `"gelsd"`, `"gelss"` | `(*, k)` when `m > n` | `(*)` int64 | `(*, min(m, n))` |

    Returns:
        The named tuple `(solution, residuals, rank, singular_values)`. `residuals` are the squared
        column norms of `A @ X - B` (shape `(*, 1)` for a vector `B`) and are differentiable; unlike
        PyTorch, they are also filled when `A` is rank-deficient (PyTorch returns them empty then,
        which would need a host sync to decide). `rank` counts singular values above the cut-off;
        LAPACK's `gelsy` estimates it from a pivoted QR instead, which agrees except for values
        right at the cut-off. Gradients flow through `solution` and `residuals` (through the
        pseudo-inverse, as in PyTorch).

    Example:
        >>> A = tp.randn(5, 2, dtype=tp.float64); B = tp.randn(5, 1, dtype=tp.float64)
        >>> X = tp.linalg.lstsq(A, B).solution   # (2, 1)
    """
    _matrix("lstsq", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.lstsq(): argument 'B' must be Tensor, not {type(B).__name__}")
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError("linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if B.dtype != A.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"{_dtype.PREFIX[0]}.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {s[A.dtype.name]} and other's dtype {s[B.dtype.name]}")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        B = B.unsqueeze(-1)
    if B.ndim < 2 or B.shape[-2] != A.shape[-2]:
        raise RuntimeError("linalg.lstsq: input.size(-2) should match other.size(-2)")
    params = (("rcond", _tolerance("lstsq", "rcond", rcond)), ("residuals", driver != "gelsy"))
    solution, residuals = dispatch(X.linalg_lstsq, (A, B), params)
    if vector:
        solution = solution.squeeze(-1)
    rank = _factories.zeros(0, dtype=int64, device=A.device) if driver == "gels" else matrix_rank(A, rtol=rcond)
    if driver in ("gelsd", "gelss"):
        with no_grad():
            sv = svdvals(A)
    else:
        sv = _factories.zeros(0, dtype=A.dtype.to_real(), device=A.device)
    return return_types.linalg_lstsq(solution, residuals, rank, sv)


# -- norms --------------------------------------------------------------------------------------------------------
_INF = builtins.float("inf")


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """A matrix norm of each matrix of `A` (the two dimensions `dim`).

    `ord`: `"fro"` (Frobenius), `"nuc"` (sum of singular values), `2`/`-2` (largest/smallest singular
    value), `1`/`-1` (largest/smallest column abs-sum), `inf`/`-inf` (largest/smallest row abs-sum).

    Example:
        >>> tp.linalg.matrix_norm(tp.tensor([[3.0, 0.0], [0.0, -4.0]]), ord=2)
        tensor(4.)
    """
    if not (ord in ("fro", "nuc") if isinstance(ord, str) else ord in (1, -1, 2, -2, _INF, -_INF)):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord if isinstance(ord, str) else format(ord, 'g')} not "
                           "supported.")  # (checked first, as PyTorch does)
    _matrix("matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        got = " ".join(map(str, dim)) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    d0, d1 = (d % A.ndim if -A.ndim <= d < A.ndim else _bad_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _vector_norm(A, 2.0, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        return out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1)) if keepdim else out
    if ord in (1, -1, _INF, -_INF):
        summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(summed, keepdim=keepdim)
        if not keepdim and reduced > summed:
            reduced -= 1
        return sums.amax(reduced, keepdim=keepdim) if ord > 0 else sums.amin(reduced, keepdim=keepdim)


def _bad_dim(d, ndim):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector or matrix norm, chosen as `torch.linalg.norm` chooses.

    - `dim` an int (or 1-tuple): `vector_norm(A, ord or 2, dim)`; a 2-tuple: `matrix_norm(A, ord or "fro", dim)`.
    - `dim=None`, `ord=None`: the 2-norm of all elements, whatever the shape.
    - `dim=None` with an `ord`: `A` must be 1-D (vector norm) or 2-D (matrix norm).

    Example:
        >>> tp.linalg.norm(tp.tensor([[1.0, 2.0], [2.0, 1.0]]), ord="nuc")
        tensor(4.)
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.norm(): argument 'input' must be Tensor, not {type(A).__name__}")
    if dim is not None:
        dims = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.")


# -- vectors --------------------------------------------------------------------------------------------------------
def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """Cross product of 3-vectors along `dim`; the batch dimensions broadcast.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.cross(tp.tensor([1.0, 0.0, 0.0]), tp.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    from ._ops.index import _same_scalar_type

    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input.ndim
    if not -nd <= dim < nd:
        _bad_dim(dim, nd)
    d = dim - nd if dim >= 0 else dim
    a, b = input.shape[d], other.shape[d]
    if a != 3 or b != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a} and {b}")
    if input._raw.dtype == bool:  # (PyTorch's checks in its order: shapes, the input's kernel, one dtype)
        raise _kernel("cross")("bool")
    _same_scalar_type(input, other)
    return dispatch(X.linalg_cross, (input, other), (("dim", d),))


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Dot product of the vectors along `dim` (broadcasting): `(x * y).sum(dim)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.linalg.vecdot(tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0]))
        tensor(11.)
    """
    return (x * y).sum(dim)

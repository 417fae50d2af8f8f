"""Matrix products, solvers and decompositions."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ._op import op, unbroadcast


def _mT(a):
    return jnp.swapaxes(a, -1, -2)


mm = op("mm", jnp.matmul, lambda g, ans, x, y: (g @ y.T, x.T @ g), saves=("x", "y"),
        saved_for={"x": "y", "y": "x"})
bmm = op("bmm", jnp.matmul,
         lambda g, ans, x, y: (g @ jnp.swapaxes(y, -1, -2), jnp.swapaxes(x, -1, -2) @ g), saves=("x", "y"),
         saved_for={"x": "y", "y": "x"})
mv = op("mv", jnp.matmul, lambda g, ans, x, y: (jnp.outer(g, y), x.T @ g), saves=("x", "y"))
dot = op("dot", jnp.dot, lambda g, ans, x, y: (g * y, g * x), saves=("x", "y"))
# NOTE: general (batched, broadcasting) matmul derives its VJP from JAX, which
# undoes the batch broadcasting correctly for every rank combination.
matmul = op("matmul", jnp.matmul, node="MatmulBackward0")
outer = op("outer", jnp.outer, lambda g, ans, x, y: (g @ y, g.T @ x), saves=("x", "y"))
einsum = op("einsum", lambda *xs, equation: jnp.einsum(equation, *xs), node="EinsumBackward0", linear=True)


# -- products added to a tensor: one op each (PyTorch's one kernel, one rounding, one graph node) ----------
def _scaled(x, s):
    """`x * s`, or `x` itself when `s` is 1 (PyTorch's `maybe_multiply`)."""
    return x if s == 1 else x * s


def _plus_scaled(input, product, beta):
    """`beta * input + product`; with `beta == 0` the input is not read (its NaN and inf do not propagate)."""
    if beta == 0:
        return jnp.broadcast_to(product, jnp.broadcast_shapes(jnp.shape(input), product.shape))
    return _scaled(input, beta) + product


def _addmm(input, a, b, beta=1, alpha=1):
    return _plus_scaled(input, _scaled(jnp.matmul(a, b), alpha), beta)


def _addmm_vjp(g, ans, input, a, b, beta=1, alpha=1):
    return (unbroadcast(_scaled(g, beta), input), _scaled(g @ _mT(b), alpha), _scaled(_mT(a) @ g, alpha))


_PRODUCT = dict(saves=("a", "b"), saved_for={"a": "b", "b": "a"})
addmm = op("addmm", _addmm, _addmm_vjp, node="AddmmBackward0", **_PRODUCT)
baddbmm = op("baddbmm", _addmm, _addmm_vjp, node="BaddbmmBackward0", **_PRODUCT)


def _addbmm(input, a, b, beta=1, alpha=1):
    """`beta * input + alpha * sum_i a[i] @ b[i]`, accumulated one batch at a time (PyTorch adds each
    product to the result in turn)."""
    if a.shape[0] == 0:
        shape, dtype = (a.shape[1], b.shape[2]), jnp.result_type(input, a, b)
        return jnp.zeros(shape, dtype) if beta == 0 else jnp.broadcast_to(_scaled(input, beta), shape).astype(dtype)
    first = _plus_scaled(input, _scaled(a[0] @ b[0], alpha), beta)
    if a.shape[0] == 1:
        return first
    step = lambda acc, ab: (acc + _scaled(ab[0] @ ab[1], alpha), None)  # noqa: E731
    return jax.lax.scan(step, first, (a[1:], b[1:]))[0]


def _addbmm_vjp(g, ans, input, a, b, beta=1, alpha=1):
    return (unbroadcast(_scaled(g, beta), input), _scaled(jnp.matmul(g, _mT(b)), alpha),
            _scaled(jnp.matmul(_mT(a), g), alpha))


addbmm = op("addbmm", _addbmm, _addbmm_vjp, node="AddbmmBackward0", **_PRODUCT)
addmv = op("addmv", lambda input, a, b, beta=1, alpha=1: _plus_scaled(input, _scaled(a @ b, alpha), beta),
           lambda g, ans, input, a, b, beta=1, alpha=1: (unbroadcast(_scaled(g, beta), input),
                                                         _scaled(jnp.outer(g, b), alpha), _scaled(a.T @ g, alpha)),
           node="AddmvBackward0", **_PRODUCT)
addr = op("addr", lambda input, a, b, beta=1, alpha=1: _plus_scaled(input, _scaled(jnp.outer(a, b), alpha), beta),
          lambda g, ans, input, a, b, beta=1, alpha=1: (unbroadcast(_scaled(g, beta), input), _scaled(g @ b, alpha),
                                                        _scaled(g.T @ a, alpha)),
          node="AddrBackward0", **_PRODUCT)
linalg_inv = op("linalg_inv", jnp.linalg.inv, lambda g, ans, x: (-_mT(ans) @ g @ _mT(ans),), saves=("ans",),
                node="LinalgInvExBackward0")
linalg_det = op("linalg_det", jnp.linalg.det, node="LinalgDetBackward0")
linalg_slogdet = op("linalg_slogdet", lambda a: tuple(jnp.linalg.slogdet(a)), node="LinalgSlogdetBackward0")


def _eig(a):
    # Eigenvectors of norm 1, as LAPACK (and so PyTorch) returns them; their derivative is JAX's, which for
    # functions invariant to each eigenvector's phase is PyTorch's.
    w, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


linalg_eig = op("linalg_eig", _eig, node="LinalgEigBackward0")
linalg_eigvals = op("linalg_eigvals", lambda a: jax.lax.linalg.eig(a, compute_left_eigenvectors=False,
                                                                    compute_right_eigenvectors=False)[0],
                    node="LinalgEigBackward0")
linalg_solve = op("linalg_solve", jnp.linalg.solve, node="LinalgSolveExBackward0")


def _solve_triangular(a, b, upper, left=True, unitriangular=False):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    # Only the `upper`/lower triangle of `a` is read (and its diagonal unless `unitriangular`); JAX's
    # derivative keeps the gradient of `a` on that triangle, as PyTorch's does.
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=not upper, unit_diagonal=unitriangular)


linalg_solve_triangular = op("linalg_solve_triangular", _solve_triangular, node="LinalgSolveTriangularBackward0")


# -- LU: `A = P @ L @ U` with partial pivoting (LAPACK's getrf; JAX derives the gradients) ----------------------
def _lu_parts(lu):
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    return low, jnp.triu(lu[..., :k, :])


def _lu(a):
    lu, _, perm = jax.lax.linalg.lu(a)
    low, up = _lu_parts(lu)
    # Row i of L U is row perm[i] of A, so P[perm[i], i] = 1.
    p = jnp.swapaxes(jax.nn.one_hot(perm, a.shape[-2], dtype=a.dtype), -1, -2)
    return p, low, up


def _lu_factor(a):
    lu, pivots, _ = jax.lax.linalg.lu(a)
    return lu, pivots + 1  # LAPACK's 1-based row interchanges, as PyTorch returns them


def _lu_solve(lu, pivots, b, left=True, adjoint=False):
    batch = jnp.broadcast_shapes(lu.shape[:-2], pivots.shape[:-1], b.shape[:-2])
    lu = jnp.broadcast_to(lu, batch + lu.shape[-2:])
    pivots = jnp.broadcast_to(pivots, batch + pivots.shape[-1:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _mH(_lu_solve(lu, pivots, _mH(b), True, not adjoint))
    n = lu.shape[-1]
    perm = jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, n)
    solve = functools.partial(jax.lax.linalg.triangular_solve, left_side=True)
    if not adjoint:  # A = P L U:  X = U^-1 L^-1 P^T B
        pb = jnp.take_along_axis(b, perm[..., :, None], axis=-2)
        y = solve(lu, pb, lower=True, unit_diagonal=True)
        return solve(lu, y, lower=False)
    # A^H = U^H L^H P^T:  X = P L^-H U^-H B
    y = solve(lu, b, lower=False, transpose_a=True, conjugate_a=True)
    z = solve(lu, y, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=True)
    inverse = jnp.argsort(perm, axis=-1)
    return jnp.take_along_axis(z, inverse[..., :, None], axis=-2)


linalg_lu = op("linalg_lu", _lu, node="LinalgLuBackward0")
linalg_lu_factor = op("linalg_lu_factor", _lu_factor, node="LinalgLuFactorExBackward0")
linalg_lu_solve = op("linalg_lu_solve", _lu_solve, node="LinalgLuSolveBackward0")


def _cholesky_info(a):
    """LAPACK potrf's `info`: the order of the first leading minor that is not positive definite, else 0.

    LAPACK's own value is not available through JAX, whose Cholesky returns NaN on failure; only then is
    the factorisation redone column by column (batched) to find where it stops.
    """
    a = _hermitian(a, "L").real
    n = a.shape[-1]
    rows = jnp.arange(n)

    def locate(a):
        def column(j, carry):
            low, info = carry
            d = a[..., j, j] - jnp.sum(low[..., j, :] ** 2, axis=-1)
            info = jnp.where((info == 0) & ~(d > 0), j + 1, info)
            root = jnp.sqrt(jnp.where(d > 0, d, 1.0))
            col = (a[..., :, j] - jnp.einsum("...ik,...k->...i", low, low[..., j, :])) / root[..., None]
            new = jnp.where(rows > j, col, jnp.where(rows == j, root[..., None], 0.0))
            return low.at[..., :, j].set(new), info

        start = (jnp.zeros_like(a), jnp.zeros(a.shape[:-2], jnp.int32))
        return jax.lax.fori_loop(0, n, column, start)[1]

    failed = jnp.any(jnp.isnan(jnp.linalg.cholesky(a)))
    return jax.lax.cond(failed, locate, lambda a: jnp.zeros(a.shape[:-2], jnp.int32), a)


cholesky_info = op("cholesky_info", _cholesky_info, differentiable=False)


# PyTorch's convention, as for eigh: the value reads the lower triangle alone, the gradient is symmetric.
cholesky = op("cholesky", lambda a: jnp.linalg.cholesky(_hermitian(a, "L")), node="LinalgCholeskyExBackward0")


# == decompositions ========================================================================================
# Factors follow PyTorch's conventions: singular values descending, eigenvalues ascending, `Vh` (not `V`).
# Gradients of U/V/eigenvectors divide by gaps between singular values or eigenvalues; where a gap is zero
# the derivative is ill-defined (PyTorch gives inf/NaN). `_gap_div` keeps the one well-defined case finite:
# a zero numerator (the loss does not turn the vectors of that pair, e.g. only `S` or `eigenvalues` was used).
def _mH(a):
    return jnp.conj(_mT(a)) if jnp.iscomplexobj(a) else _mT(a)


def _gap_div(num, den):
    """`num / den`, where a zero numerator gives 0 even over a zero denominator."""
    return num / jnp.where(num == 0, 1, den)


def _diag_embed(d):
    return d[..., :, None] * jnp.eye(d.shape[-1], dtype=d.dtype)


def _complete(q):
    """`q` (orthonormal columns, `(*, m, k)`) extended to a square unitary matrix.

    NOTE: the added columns are any orthonormal basis of the complement of `q`'s span; they carry no
    gradient, as PyTorch ignores the gradient of the extra columns of a full SVD.
    """
    full = jnp.linalg.qr(jax.lax.stop_gradient(q), mode="complete")[0]
    return jnp.concatenate([q, full[..., q.shape[-1]:]], axis=-1)


def _svd(a, full_matrices=True):
    m, n = a.shape[-2:]
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    if full_matrices and m > n:
        u = _complete(u)
    elif full_matrices and m < n:
        vh = _mH(_complete(_mH(vh)))
    return u, s, vh


def _svd_vjp(g, ans, a, full_matrices=True):
    if jnp.iscomplexobj(a):
        return jax.vjp(functools.partial(_svd, full_matrices=full_matrices), a)[1](tuple(g))
    gu, gs, gvh = g
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    m, n, k = a.shape[-2], a.shape[-1], s.shape[-1]
    gu, gv = gu[..., :k], _mT(gvh[..., :k, :])
    ut_gu, vt_gv = _mT(u) @ gu, vh @ gv
    s2 = s * s
    gap = s2[..., None, :] - s2[..., :, None]  # s_j^2 - s_i^2
    inner = (_gap_div(ut_gu - _mT(ut_gu), gap) * s[..., None, :] + s[..., :, None] * _gap_div(vt_gv - _mT(vt_gv), gap)
             + _diag_embed(gs))
    ga = u @ inner @ vh
    if m > k:  # the part of gU outside U's span
        ga = ga + _gap_div(gu - u @ ut_gu, s[..., None, :]) @ vh
    if n > k:
        ga = ga + u @ _mT(_gap_div(gv - _mT(vh) @ vt_gv, s[..., None, :]))
    return (ga,)


def _hermitian(a, UPLO="L"):
    """The Hermitian matrix stored in one triangle of `a` (what LAPACK reads), differentiated as `(a + aᴴ) / 2`.

    NOTE: this is PyTorch's convention: values come from the `UPLO` triangle alone, gradients are
    Hermitian (the derivative along Hermitian perturbations), so they are spread over both triangles.
    """
    n = a.shape[-1]
    row, col = jnp.arange(n)[:, None], jnp.arange(n)[None, :]
    own = row > col if UPLO == "L" else row < col
    sym = (a + _mH(a)) / 2
    stored = jnp.where(own, a, jnp.where(own.T, _mH(a), sym))
    return sym + jax.lax.stop_gradient(stored - sym)


def _eigh(a, UPLO="L"):
    # LAPACK reads the same triangle as PyTorch's and NumPy's call, so eigenvector signs agree with theirs.
    v, w = jax.lax.linalg.eigh(_hermitian(a, UPLO), lower=UPLO == "L", symmetrize_input=False)
    return w, v


def _eigh_vjp(g, ans, a, UPLO="L"):
    if jnp.iscomplexobj(a):
        return jax.vjp(functools.partial(_eigh, UPLO=UPLO), a)[1](tuple(g))
    gw, gv = g
    w, v = _eigh(a, UPLO)
    vt_gv = _mT(v) @ gv
    inner = _gap_div((vt_gv - _mT(vt_gv)) / 2, w[..., None, :] - w[..., :, None]) + _diag_embed(gw)
    return (v @ inner @ _mT(v),)


@jax.custom_jvp
def _qr_complete_tall(a):
    return tuple(jnp.linalg.qr(a, mode="complete"))


@_qr_complete_tall.defjvp
def _qr_complete_tall_jvp(primals, tangents):
    raise RuntimeError("linalg.qr: The QR decomposition is not differentiable when mode='complete' and "
                       "nrows > ncols. Use mode='reduced' if you differentiate through it.")


def _qr(a, mode="reduced"):
    m, n = a.shape[-2:]
    if m < n:  # wide: A = [X | Y] = Q [R_X | Qᴴ Y], whose derivative comes from the square QR of X
        q, r = jnp.linalg.qr(a[..., :m], mode="reduced")
        return q, jnp.concatenate([r, _mH(q) @ a[..., m:]], axis=-1)
    if mode == "complete" and m > n:
        return _qr_complete_tall(a)
    return tuple(jnp.linalg.qr(a, mode="reduced"))


def _pinv_tol(s, atol, rtol, dims):
    """PyTorch's cut-off: singular values at or below `max(atol, rtol * largest)` count as zero."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else jnp.finfo(s.dtype).eps * max(dims)
    smax = jnp.max(s, axis=-1, keepdims=True, initial=0.0)
    return jnp.maximum(0.0 if atol is None else atol, rtol * smax)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _pinv(a, atol=None, rtol=None, hermitian=False):
    if hermitian:
        w, v = _eigh(a)
        keep = jnp.abs(w) > _pinv_tol(jnp.abs(w), atol, rtol, a.shape[-2:])
        return (v * jnp.where(keep, 1 / jnp.where(keep, w, 1), 0)[..., None, :]) @ _mH(v)
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    keep = s > _pinv_tol(s, atol, rtol, a.shape[-2:])
    return (_mH(vh) * jnp.where(keep, 1 / jnp.where(keep, s, 1), 0)[..., None, :]) @ _mH(u)


@_pinv.defjvp
def _pinv_jvp(atol, rtol, hermitian, primals, tangents):
    # The derivative of the pseudo-inverse at constant rank (Golub & Pereyra); it needs no gaps between
    # singular values, so it stays finite where the SVD's own derivative does not.
    (a,), (da,) = primals, tangents
    p = _pinv(a, atol, rtol, hermitian)
    dah = _mH(da)
    eye_n = jnp.eye(a.shape[-1], dtype=a.dtype)
    eye_m = jnp.eye(a.shape[-2], dtype=a.dtype)
    dp = -p @ da @ p + (eye_n - p @ a) @ dah @ _mH(p) @ p + p @ _mH(p) @ dah @ (eye_m - a @ p)
    return p, dp


def _lstsq(a, b, rcond=None, residuals=False):
    x = _pinv(a, None, rcond, False) @ b
    m, n = a.shape[-2:]
    if residuals and m > n:
        r = a @ x - b
        return x, jnp.sum(jnp.real(r * jnp.conj(r)), axis=-2)
    return x, jnp.zeros((0,), jnp.real(x).dtype)


linalg_svd = op("linalg_svd", _svd, _svd_vjp, saves=("a",), node="LinalgSvdBackward0")
linalg_svdvals = op("linalg_svdvals", lambda a: jnp.linalg.svd(a, compute_uv=False), node="LinalgSvdBackward0")
linalg_eigh = op("linalg_eigh", _eigh, _eigh_vjp, saves=("a",), node="LinalgEighBackward0")
linalg_eigvalsh = op("linalg_eigvalsh", lambda a, UPLO="L": _eigh(a, UPLO)[0], node="LinalgEighBackward0")
linalg_qr = op("linalg_qr", _qr, node="LinalgQrBackward0")
linalg_pinv = op("linalg_pinv", _pinv, node="LinalgPinvBackward0")
linalg_lstsq = op("linalg_lstsq", _lstsq, node="LinalgLstsqBackward0")
linalg_matrix_exp = op("linalg_matrix_exp", jax.scipy.linalg.expm, node="LinalgMatrixExpBackward0")
linalg_cross = op("linalg_cross", lambda x, y, dim=-1: jnp.cross(x, y, axis=dim),
                  lambda g, ans, x, y, dim=-1: (unbroadcast(jnp.cross(y, g, axis=dim), x),
                                                unbroadcast(jnp.cross(g, x, axis=dim), y)),
                  saves=("x", "y"), node="LinalgCrossBackward0")

# Decompositions and solvers lower to LAPACK custom calls. Programs holding them are compiled and run on the
# calling thread only: compiling such a program on a background thread while others ran crashed XLA's CPU
# client (a segmentation fault, seen repeatedly under load). Adaptive eager runs these ops one by one.
for _op in (linalg_inv, linalg_det, linalg_slogdet, linalg_eig, linalg_eigvals, linalg_solve, linalg_solve_triangular,
            linalg_lu, linalg_lu_factor, linalg_lu_solve, cholesky_info, cholesky, linalg_svd, linalg_svdvals,
            linalg_eigh, linalg_eigvalsh, linalg_qr, linalg_pinv, linalg_lstsq, linalg_matrix_exp):
    _op.deferrable = False
del _op

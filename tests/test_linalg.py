"""tp.linalg: shapes, batching, errors, decompositions' conventions (triangles, signs, repeated values) and
PyTorch as an oracle for gauge-invariant functions of them; and the NaN rules of fmax/fmin. Values and
gradients of every op are also in the op table (tests/op_specs.py)."""

import re

import jax
import numpy as np
import pytest
import scipy.linalg

import tapeflow as tp


def _spd(n, batch=()):
    a = np.random.default_rng(0).uniform(-1, 1, (*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_inv_det_solve_cholesky_match_numpy_on_batches():
    a = _spd(3, (2,))
    A = tp.tensor(a, dtype=tp.float64)
    np.testing.assert_allclose(tp.linalg.inv(A).numpy(), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(A.inverse().numpy(), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.det(A).numpy(), np.linalg.det(a), rtol=1e-12)
    sign, logabs = tp.linalg.slogdet(A)
    np.testing.assert_allclose(sign.numpy() * np.exp(logabs.numpy()), np.linalg.det(a), rtol=1e-12)
    b_vec = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(tp.linalg.solve(A, tp.tensor(b_vec)).numpy(),
                               np.linalg.solve(a, b_vec[..., None])[..., 0], rtol=1e-12)
    b_mat = np.arange(12.0).reshape(2, 3, 2)
    np.testing.assert_allclose(tp.linalg.solve(A, tp.tensor(b_mat)).numpy(), np.linalg.solve(a, b_mat), rtol=1e-12)
    L = np.linalg.cholesky(a)
    np.testing.assert_allclose(tp.linalg.cholesky(A).numpy(), L, rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.cholesky(A, upper=True).numpy(), np.swapaxes(L, -1, -2), rtol=1e-12)


def test_inverse_gradient_is_minus_inv_t_g_inv_t():
    a = _spd(3)
    A = tp.tensor(a, dtype=tp.float64, requires_grad=True)
    g = np.arange(9.0).reshape(3, 3)
    tp.linalg.inv(A).backward(tp.tensor(g))
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(A.grad.numpy(), -inv.T @ g @ inv.T, rtol=1e-10)
    assert tp.linalg.inv(A).grad_fn.name() == "LinalgInvExBackward0"


@pytest.mark.parametrize("fn", [tp.linalg.inv, tp.linalg.det, tp.linalg.cholesky])
def test_errors_name_the_problem(fn):
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        fn(tp.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fn(tp.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        fn(tp.ones(2, 2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        tp.linalg.solve(tp.eye(3), tp.ones(4))


def test_fmax_fmin_take_the_other_side_of_a_nan():
    nan = float("nan")
    x = tp.tensor([1.0, nan, 3.0, nan], requires_grad=True)
    y = tp.tensor([nan, 2.0, 1.0, nan], requires_grad=True)
    np.testing.assert_array_equal(tp.fmax(x, y).detach().numpy(), [1.0, 2.0, 3.0, nan])
    np.testing.assert_array_equal(x.fmin(y).detach().numpy(), [1.0, 2.0, 1.0, nan])
    tp.fmax(x, y).sum().backward()
    # Where both are NaN the first argument is the one taken, and its gradient flows (as in PyTorch).
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 1.0, 0.0, 0.0])


# == decompositions ======================================================================================
def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _t(a, grad=False):
    return tp.tensor(a, dtype=tp.float64, requires_grad=grad)


def _sym(n, batch=(), seed=0):
    a = _rand(*batch, n, n, seed=seed)
    return a + np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 3), (2, 1, 3, 4)])
def test_svd_shapes_and_reconstruction(shape):
    a = _rand(*shape)
    m, n = shape[-2:]
    k = min(m, n)
    U, S, Vh = tp.linalg.svd(_t(a))
    assert U.shape == (*shape[:-2], m, m) and S.shape == (*shape[:-2], k) and Vh.shape == (*shape[:-2], n, n)
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    # The completed factors are orthogonal (their extra columns span the complement).
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(m), u.shape), atol=1e-12)
    np.testing.assert_allclose(vh @ np.swapaxes(vh, -1, -2), np.broadcast_to(np.eye(n), vh.shape), atol=1e-12)
    Ur, Sr, Vhr = tp.linalg.svd(_t(a), full_matrices=False)
    assert Ur.shape == (*shape[:-2], m, k) and Vhr.shape == (*shape[:-2], k, n)
    np.testing.assert_allclose(Ur.numpy(), u[..., :k], atol=1e-12)
    np.testing.assert_allclose(tp.linalg.svdvals(_t(a)).numpy(), s, rtol=1e-12)


def test_svd_full_matrices_ignores_the_gradient_of_the_extra_columns():
    a = _rand(5, 3)
    A = _t(a, True)
    U, S, Vh = tp.linalg.svd(A)
    U[:, 3:].sum().backward()
    np.testing.assert_array_equal(A.grad.numpy(), np.zeros((5, 3)))
    assert U.grad_fn.name() == "LinalgSvdBackward0"


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (3, 3), (2, 4, 2)])
def test_qr_modes(shape):
    a = _rand(*shape)
    m, n = shape[-2:]
    k = min(m, n)
    Q, R = tp.linalg.qr(_t(a))
    assert Q.shape == (*shape[:-2], m, k) and R.shape == (*shape[:-2], k, n)
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), a, atol=1e-12)
    np.testing.assert_allclose(np.tril(R.numpy(), -1), 0, atol=1e-15)
    Qc, Rc = tp.linalg.qr(_t(a), mode="complete")
    assert Qc.shape == (*shape[:-2], m, m) and Rc.shape == (*shape[:-2], m, n)
    np.testing.assert_allclose(Qc.numpy(), np.linalg.qr(a, mode="complete")[0], atol=1e-12)
    Q0, R0 = tp.linalg.qr(_t(a), mode="r")
    assert Q0.shape == (0,)
    np.testing.assert_allclose(R0.numpy(), R.numpy(), atol=1e-14)


def test_qr_gradients_and_their_limits():
    A = _t(_rand(5, 3), True)
    tp.linalg.qr(A, mode="r").R.sum().backward()  # differentiable here (PyTorch refuses mode="r")
    assert np.isfinite(A.grad.numpy()).all()
    Q, R = tp.linalg.qr(A, mode="complete")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        Q.sum().backward()
    W = _t(_rand(3, 5), True)  # wide and complete: Q is square, so it is differentiable
    Q, R = tp.linalg.qr(W, mode="complete")
    (Q.sum() + R.sum()).backward()
    assert np.isfinite(W.grad.numpy()).all() and Q.grad_fn.name() == "LinalgQrBackward0"


def _signs_as(v, ref):
    """`v` with its columns' signs flipped to `ref`'s, off the CPU: a GPU's solver may pick other signs than
    LAPACK's (PyTorch's CUDA eigenvectors differ from its CPU ones alike); on the CPU they must be LAPACK's."""
    if jax.default_backend() == "cpu":
        return v
    return v * np.where(np.sum(v * ref, axis=-2, keepdims=True) < 0, -1, 1)


def test_eigh_reads_one_triangle():
    a = _rand(2, 4, 4)  # not symmetric: only the named triangle counts, as LAPACK reads it
    for uplo in ("L", "U"):
        L, V = tp.linalg.eigh(_t(a), UPLO=uplo)
        w, v = np.linalg.eigh(a, UPLO=uplo)
        np.testing.assert_allclose(L.numpy(), w, rtol=1e-12)
        np.testing.assert_allclose(_signs_as(V.numpy(), v), v, atol=1e-12)
        np.testing.assert_allclose(tp.linalg.eigvalsh(_t(a), UPLO=uplo.lower()).numpy(), w, rtol=1e-12)
    s = _sym(3)
    L, V = tp.linalg.eigh(_t(s))
    np.testing.assert_allclose((V.numpy() * L.numpy()) @ V.numpy().T, s, atol=1e-12)


def _symmetric_fd(f, a, d, eps=1e-6):
    return (f(a + eps * d) - f(a - eps * d)) / (2 * eps)


def test_eigh_gradients_along_symmetric_directions():
    # The gradient is symmetric; along symmetric perturbations it is the true derivative (first and
    # second order), whichever triangle the value is read from.
    a, d, wv = _sym(4, seed=1), _sym(4, seed=2), _rand(4, 4, seed=3)

    def loss(x, uplo="L"):  # sign-free in the eigenvectors: sum_i w_i (v_i^T M v_i) + sum_i L_i^3
        L, V = tp.linalg.eigh(x, UPLO=uplo)
        return ((V * (V.mT @ tp.tensor(wv)).mT).sum(0) * tp.arange(4.0, dtype=tp.float64)).sum() + (L ** 3).sum()

    def grad_along_d(x, uplo):
        X = _t(x, True)
        (g,) = tp.autograd.grad(loss(X, uplo), X)
        return (g.numpy() * d).sum()

    for uplo in ("L", "U"):
        A = _t(a, True)
        (g,) = tp.autograd.grad(loss(A, uplo), A, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), g.detach().numpy().T, atol=1e-12)
        want = _symmetric_fd(lambda x, uplo=uplo: loss(_t(x), uplo).item(), a, d)
        np.testing.assert_allclose((g.detach().numpy() * d).sum(), want, rtol=1e-6)
        (h,) = tp.autograd.grad((g * tp.tensor(d)).sum(), A)
        want2 = _symmetric_fd(lambda x, uplo=uplo: grad_along_d(x, uplo), a, d)
        np.testing.assert_allclose((h.numpy() * d).sum(), want2, rtol=1e-5)


def test_cholesky_reads_the_lower_triangle_and_has_a_symmetric_gradient():
    a, d = _sym(4, seed=4) + 8 * np.eye(4), _sym(4, seed=5)
    upper_noise = np.triu(_rand(4, 4, seed=6), 1)  # ignored, as by PyTorch and LAPACK
    np.testing.assert_allclose(tp.linalg.cholesky(_t(a + upper_noise)).numpy(), np.linalg.cholesky(a), rtol=1e-12)
    w = _rand(4, 4, seed=7)

    def loss(x):
        return (tp.linalg.cholesky(x) * tp.tensor(w)).sum()

    A = _t(a + upper_noise, True)
    (g,) = tp.autograd.grad(loss(A) ** 2, A, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), g.detach().numpy().T, atol=1e-12)
    want = _symmetric_fd(lambda x: loss(_t(x)).item() ** 2, a, d)
    np.testing.assert_allclose((g.detach().numpy() * d).sum(), want, rtol=1e-6)
    (h,) = tp.autograd.grad((g * tp.tensor(d)).sum(), A)

    def grad_along_d(x):
        X = _t(x, True)
        (gx,) = tp.autograd.grad(loss(X) ** 2, X)
        return (gx.numpy() * d).sum()

    np.testing.assert_allclose((h.numpy() * d).sum(), _symmetric_fd(grad_along_d, a, d), rtol=1e-5)


@pytest.mark.oracle
def test_cholesky_of_a_non_symmetric_input_against_pytorch():
    torch = pytest.importorskip("torch")
    a = _sym(3, seed=8) + 6 * np.eye(3) + np.triu(_rand(3, 3, seed=9), 1)
    A, At = _t(a, True), torch.tensor(a, requires_grad=True)
    L, Lt = tp.linalg.cholesky(A), torch.linalg.cholesky(At)
    np.testing.assert_allclose(L.detach().numpy(), Lt.detach().numpy(), rtol=1e-12)
    g = _rand(3, 3, seed=10)
    L.backward(tp.tensor(g))
    Lt.backward(torch.tensor(g))
    np.testing.assert_allclose(A.grad.numpy(), At.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_degenerate_values_keep_unused_gradients_finite():
    # Repeated singular values/eigenvalues: gradients through S/eigenvalues alone (or through a vector
    # whose eigenvalue is simple) are well-defined and stay finite.
    A = tp.eye(3, dtype=tp.float64, requires_grad=True)
    U, S, Vh = tp.linalg.svd(A)
    S.sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), np.eye(3), atol=1e-15)
    B = tp.eye(3, dtype=tp.float64, requires_grad=True)
    tp.linalg.eigh(B).eigenvalues.sum().backward()
    np.testing.assert_allclose(B.grad.numpy(), np.eye(3), atol=1e-15)
    C = tp.tensor(np.diag([1.0, 1.0, 5.0]), requires_grad=True)  # eigenvalues exactly 1, 1, 5
    L, V = tp.linalg.eigh(C)
    (V[:, 2].outer(V[:, 2]) * tp.arange(9.0, dtype=tp.float64).reshape(3, 3)).sum().backward()
    # v = e3 moves by dA[i, 2] / (5 - 1) towards e_i; the loss's gradient in v is [8, 12, 16].
    np.testing.assert_allclose(C.grad.numpy(), [[0, 0, 1.0], [0, 0, 1.5], [1.0, 1.5, 0]], atol=1e-15)


def test_matrix_power_and_exp():
    a = _rand(2, 3, 3) / 2
    A = _t(a)
    for n in (0, 1, 2, 3, 6, -1, -3):
        want = np.linalg.matrix_power(a, n)
        np.testing.assert_allclose(tp.linalg.matrix_power(A, n).numpy(), want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(A.matrix_power(n).numpy(), want, rtol=1e-10, atol=1e-12)
    P = _t(a, True)
    tp.linalg.matrix_power(P, 0).sum().backward()
    np.testing.assert_array_equal(P.grad.numpy(), np.zeros((2, 3, 3)))
    np.testing.assert_allclose(tp.linalg.matrix_exp(A).numpy(), scipy.linalg.expm(a), rtol=1e-12)
    np.testing.assert_allclose(A.matrix_exp().numpy(), scipy.linalg.expm(a), rtol=1e-12)
    with pytest.raises(TypeError, match="must be int"):
        tp.linalg.matrix_power(A, 2.0)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf")])
def test_matrix_norm_matches_numpy(ord):
    a = _rand(2, 3, 4)
    got = tp.linalg.matrix_norm(_t(a), ord)
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(a, ord, axis=(-2, -1)), rtol=1e-12)
    kept = tp.linalg.matrix_norm(_t(a), ord, dim=(0, 2), keepdim=True)
    assert kept.shape == (1, 3, 1)
    np.testing.assert_allclose(kept.numpy(), np.linalg.norm(a, ord, axis=(0, 2), keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.norm(_t(a[0]), ord).numpy(), np.linalg.norm(a[0], ord), rtol=1e-12)


def test_norm_dispatch():
    a = _rand(2, 3, 4)
    A = _t(a)
    np.testing.assert_allclose(tp.linalg.norm(A).numpy(), np.linalg.norm(a.ravel()), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.norm(A, 3, dim=1).numpy(), np.linalg.norm(a, 3, axis=1), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.norm(A, dim=(1, 2)).numpy(), np.linalg.norm(a, axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.norm(A[0, 0], 1).numpy(), np.abs(a[0, 0]).sum(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="must be 1D or 2D. Got 3D"):
        tp.linalg.norm(A, 2)
    with pytest.raises(RuntimeError, match="must be of length 1 or 2"):
        tp.linalg.norm(A, dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        tp.linalg.matrix_norm(A, 3)


def test_pinv_and_lstsq():
    a, b = _rand(2, 5, 3), _rand(2, 5, 2, seed=1)
    np.testing.assert_allclose(tp.linalg.pinv(_t(a)).numpy(), np.linalg.pinv(a), rtol=1e-10)
    np.testing.assert_allclose(_t(a).pinverse().numpy(), np.linalg.pinv(a, rcond=1e-15), rtol=1e-10)
    s = _sym(3)
    np.testing.assert_allclose(tp.linalg.pinv(_t(s), hermitian=True).numpy(), np.linalg.pinv(s), rtol=1e-10)
    r = tp.linalg.lstsq(_t(a), _t(b))
    np.testing.assert_allclose(r.solution.numpy(), np.stack([np.linalg.lstsq(x, y)[0] for x, y in zip(a, b)]),
                               rtol=1e-10)
    assert r.residuals.shape == (0,) and r.singular_values.shape == (0,) and r.rank.tolist() == [3, 3]
    r = tp.linalg.lstsq(_t(a), _t(b), driver="gelsd")
    np.testing.assert_allclose(r.residuals.numpy(), [np.linalg.lstsq(x, y)[1] for x, y in zip(a, b)], rtol=1e-10)
    np.testing.assert_allclose(r.singular_values.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    v = tp.linalg.lstsq(_t(a[0]), _t(b[0, :, 0]), driver="gels")
    assert v.solution.shape == (3,) and v.residuals.shape == (1,) and v.rank.shape == (0,)
    deficient = _t([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    r = tp.linalg.lstsq(deficient, tp.ones(3, 1, dtype=tp.float64))
    assert r.rank.item() == 1
    np.testing.assert_allclose(r.solution.numpy(), np.linalg.pinv(deficient.numpy()) @ np.ones((3, 1)), rtol=1e-12)
    assert tp.linalg.matrix_rank(deficient).item() == 1
    with pytest.raises(RuntimeError, match="driver"):
        tp.linalg.lstsq(_t(a), _t(b), driver="gelsx")
    with pytest.raises(RuntimeError, match="should match"):
        tp.linalg.lstsq(_t(a), _t(b[:, :4]))
    with pytest.raises(RuntimeError, match="same dtype"):
        tp.linalg.lstsq(_t(a), tp.tensor(b, dtype=tp.float32))


def test_pinv_gradient_is_finite_where_singular_values_repeat():
    A = tp.eye(3, dtype=tp.float64).narrow(1, 0, 2).clone().requires_grad_()  # singular values 1, 1
    (tp.linalg.pinv(A) * tp.arange(6.0, dtype=tp.float64).reshape(2, 3)).sum().backward()
    assert np.isfinite(A.grad.numpy()).all()


def test_torch_style_cross_defaults_to_the_first_dimension_of_size_3():
    x, y = _rand(3, 4), _rand(3, 4, seed=1)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        c = tp.cross(_t(x), _t(y))
    np.testing.assert_allclose(c.numpy(), np.cross(x, y, axis=0), rtol=1e-12)
    a = _t(_rand(2, 3), True)
    out = a.cross(a.flip(0), dim=1)
    assert out.grad_fn.name() == "LinalgCrossBackward0"  # one op, as in PyTorch
    np.testing.assert_allclose(out.detach().numpy(), np.cross(a.detach().numpy(), a.detach().numpy()[::-1]),
                               rtol=1e-12)
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
        tp.cross(tp.ones(2, 4), tp.ones(2, 4))


def test_cross_vecdot_and_errors():
    x, y = _rand(2, 1, 3), _rand(1, 4, 3, seed=1)
    np.testing.assert_allclose(tp.linalg.cross(_t(x), _t(y)).numpy(), np.cross(x, y), rtol=1e-12)
    np.testing.assert_allclose(tp.linalg.vecdot(_t(x), _t(y)).numpy(), (x * y).sum(-1), rtol=1e-12)
    with pytest.raises(RuntimeError, match="same number of dimensions"):  # (PyTorch broadcasts sizes, not ranks)
        tp.linalg.cross(_t(x), _t(y[0]))
    with pytest.raises(RuntimeError, match="must have length 3"):
        tp.linalg.cross(tp.ones(2), tp.ones(2))
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        tp.linalg.qr(tp.ones(2, 2), mode="x")
    with pytest.raises(RuntimeError, match="UPLO argument to be 'L' or 'U'"):
        tp.linalg.eigh(tp.ones(2, 2), UPLO="X")
    for fn in (tp.linalg.svd, tp.linalg.svdvals, tp.linalg.qr, tp.linalg.pinv):
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            fn(tp.ones(3))
        with pytest.raises(RuntimeError, match="Expected a floating point"):
            fn(tp.ones(2, 2, dtype=tp.int64))
    for fn in (tp.linalg.eigh, tp.linalg.eigvalsh, tp.linalg.matrix_exp):
        with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
            fn(tp.ones(2, 3))


def test_decompositions_trace_under_jax_transforms():
    a = _rand(4, 3)
    grad = tp.func.grad(lambda x: tp.linalg.svdvals(x).sum() + tp.linalg.eigvalsh(x.mT @ x).sum())(_t(a))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(grad.numpy(), u @ vh + 2 * a, rtol=1e-10)


# == PyTorch as the oracle (values, gradients and second order of gauge-invariant functions) ==============
def _oracle_cases():
    def svd_fns(L, A):
        U, S, Vh = L.linalg.svd(A, full_matrices=False)
        return S, (U * S.unsqueeze(-2)) @ Vh, U @ Vh, U[..., :, :1] @ Vh[..., :1, :]

    def svd_full(L, A):
        U, S, Vh = L.linalg.svd(A)
        k = S.shape[-1]
        return S, (U[..., :, :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]

    def eigh_fns(L, A):
        w, V = L.linalg.eigh(A @ A.mT + A.mT @ A / 2)
        return w, (V * w.exp().unsqueeze(-2)) @ V.mT, V[..., :, 1:2] @ V[..., :, 1:2].mT

    def eigh_upper(L, A):
        S = A + A.mT
        w, V = L.linalg.eigh(S, UPLO="U")
        return w, (V * (w ** 2).unsqueeze(-2)) @ V.mT, L.linalg.eigvalsh(S, UPLO="U")

    def qr_fns(L, A):
        Q, R = L.linalg.qr(A)
        return Q, R

    def lstsq_fns(L, A):
        r = L.linalg.lstsq(A, A[..., :2].exp(), driver="gelsd")
        return r.solution, r.residuals

    inf = float("inf")
    return {
        "svd": (svd_fns, [(4, 3), (2, 3, 5)], "LinalgSvdBackward0"),
        "svd_full": (svd_full, [(5, 3)], "LinalgSvdBackward0"),
        "svdvals": (lambda L, A: (L.linalg.svdvals(A),), [(2, 4, 3)], "LinalgSvdBackward0"),
        "eigh": (eigh_fns, [(3, 3), (2, 4, 4)], "LinalgEighBackward0"),
        "eigh_upper": (eigh_upper, [(4, 4)], "LinalgEighBackward0"),
        "qr": (qr_fns, [(5, 3), (3, 3), (2, 3, 5)], "LinalgQrBackward0"),
        "pinv": (lambda L, A: (L.linalg.pinv(A),), [(4, 3), (2, 3, 5)], "LinalgPinvBackward0"),
        "pinv_herm": (lambda L, A: (L.linalg.pinv(A @ A.mT, hermitian=True),), [(3, 3)], "LinalgPinvBackward0"),
        "lstsq": (lstsq_fns, [(5, 3), (2, 6, 3)], "LinalgLstsqBackward0"),
        "matrix_exp": (lambda L, A: (L.linalg.matrix_exp(A),), [(2, 4, 4)], "LinalgMatrixExpBackward0"),  # slow to compile
        "matrix_power": (lambda L, A: (L.linalg.matrix_power(A, 3), L.linalg.matrix_power(A, -2)), [(3, 3)],
                         "MmBackward0"),
        "matrix_norms": (lambda L, A: tuple(L.linalg.matrix_norm(A, o) for o in ("fro", "nuc", 2, -2, 1, -1, inf, -inf)),
                         [(2, 3, 4)], "LinalgVectorNormBackward0"),
        "cross": (lambda L, A: (L.linalg.cross(A, A.flip(0)),), [(2, 3)], "LinalgCrossBackward0"),
        "vecdot": (lambda L, A: (L.linalg.vecdot(A, A.flip(0)),), [(2, 3)], "SumBackward1"),
    }


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(_oracle_cases()))
def test_against_pytorch(name):
    torch = pytest.importorskip("torch")
    fn, shapes, node = _oracle_cases()[name]
    for i, shape in enumerate(shapes):
        _compare_with_torch(torch, fn, shape, np.random.default_rng(i), node=node)


def _compare_with_torch(torch, fn, shape, rng, second=True, node=None):
    """`fn(L, A)` for `L` = tapeflow and torch on the same random `A`: values, gradients (and their
    gradients when `second`), and the first output's node when `node` is given."""
    a = rng.standard_normal(shape)
    A, At = _t(a, True), torch.tensor(a, requires_grad=True)
    outs, outs_t = fn(tp, A), fn(torch, At)
    if node is not None:
        assert outs[0].grad_fn.name() == node and outs_t[0].grad_fn.name() == node
    for o, ot in zip(outs, outs_t):
        np.testing.assert_allclose(o.detach().numpy(), ot.detach().numpy(), rtol=1e-9, atol=1e-11)
    gs = [rng.standard_normal(tuple(ot.shape)) for ot in outs_t]
    (g,) = tp.autograd.grad(outs, A, [tp.tensor(x) for x in gs], create_graph=second)
    (gt,) = torch.autograd.grad(outs_t, At, [torch.tensor(x) for x in gs], create_graph=second)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-8, atol=1e-10)
    if not second:
        return
    v = rng.standard_normal(shape)
    (h,) = tp.autograd.grad((g * tp.tensor(v)).sum(), A)
    (ht,) = torch.autograd.grad((gt * torch.tensor(v)).sum(), At)
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-7, atol=1e-9)


def _torch_style_functions():
    """Functions of one square batch `A` (float64), written once for tapeflow and PyTorch (`L`)."""
    def tri(L, A):
        T = A + 4 * L.eye(A.shape[-1], dtype=A.dtype)
        return (L.linalg.solve_triangular(T, A[..., :2].exp(), upper=True),
                L.linalg.solve_triangular(T, A[..., :2, :].sin(), upper=False, left=False, unitriangular=True))

    return {
        "solve_triangular": (tri, (2, 3, 3), True),
        "multi_dot": (lambda L, A: (L.linalg.multi_dot([A[0], A, A.mT, A[:, 1]]),
                                    L.linalg.multi_dot([A[:2], A, A.mT.exp(), A[:, :1]])), (3, 3), True),
        "vander": (lambda L, A: (L.linalg.vander(A[0], N=4), L.linalg.vander(A)), (3, 3), True),
        "cholesky_solve": (lambda L, A: (L.cholesky_solve(A[..., :2].exp(), A.tril() + 3 * L.eye(3, dtype=A.dtype)),
                                         L.cholesky_solve(A[..., :1], A.triu() + 3 * L.eye(3, dtype=A.dtype),
                                                          upper=True)), (2, 3, 3), True),
        "cholesky_inverse": (lambda L, A: (L.cholesky_inverse(A.tril() + 3 * L.eye(3, dtype=A.dtype)),
                                           L.cholesky_inverse(A.triu() + 3 * L.eye(3, dtype=A.dtype), upper=True)),
                             (3, 3), True),
        "tensorinv": (lambda L, A: (L.linalg.tensorinv((A + 4 * L.eye(4, dtype=A.dtype)).reshape(2, 2, 2, 2)),),
                      (4, 4), True),
        "tensorsolve": (lambda L, A: (L.linalg.tensorsolve((A + 4 * L.eye(4, dtype=A.dtype)).reshape(2, 2, 4),
                                                           A[0].reshape(2, 2)),
                                      L.linalg.tensorsolve((A + 4 * L.eye(4, dtype=A.dtype)).reshape(4, 2, 2),
                                                           A[1].reshape(2, 2).exp(), dims=(0,))), (4, 4), True),
        "lu": (lambda L, A: tuple(L.linalg.lu(A))[1:], (2, 4, 3), True),  # P has no gradient
        "lu_wide": (lambda L, A: tuple(L.linalg.lu(A.mT))[1:], (3, 5), True),
        "lu_solve": (lambda L, A: tuple(L.linalg.lu_solve(*L.linalg.lu_factor(A), A[..., :2].exp(), left=left,
                                                          adjoint=adjoint) if left else
                                        L.linalg.lu_solve(*L.linalg.lu_factor(A), A[..., :2, :].exp(), left=left,
                                                          adjoint=adjoint)
                                        for left in (True, False) for adjoint in (False, True)), (2, 3, 3), True),
        # PyTorch's cond cannot backpropagate through the norms that invert A ("fro", 1, inf: an in-place
        # write on a saved inverse); those are checked by gradcheck below.
        "cond": (lambda L, A: tuple(L.linalg.cond(A, p) for p in (None, 2, -2, "nuc")), (2, 3, 3), True),
        "diagonal": (lambda L, A: (L.linalg.diagonal(A, offset=1), L.linalg.diagonal(A, dim1=-1, dim2=0)), (3, 3),
                     False),  # linear: no second derivative
    }


inf = float("inf")


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(_torch_style_functions()))
def test_more_linalg_against_pytorch(name):
    torch = pytest.importorskip("torch")
    fn, shape, second = _torch_style_functions()[name]
    _compare_with_torch(torch, fn, shape, np.random.default_rng(3), second)


def test_more_linalg_errors_and_edge_cases():
    A = _t(np.triu(_rand(3, 3)) + 3 * np.eye(3))
    assert tp.linalg.solve_triangular(A, tp.eye(3, dtype=tp.float64), upper=True).grad_fn is None
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B for the equation AX = B"):
        tp.linalg.solve_triangular(A, tp.ones(2, 2, dtype=tp.float64), upper=True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tp.linalg.solve_triangular(A, tp.ones(3, dtype=tp.float64), upper=True)
    with pytest.raises(TypeError, match="upper"):
        tp.linalg.solve_triangular(A, A)
    with pytest.raises(RuntimeError, match="expected at least 2 tensors"):
        tp.linalg.multi_dot([A])
    with pytest.raises(RuntimeError, match="tensor 1 must be 2D but got 1D"):
        tp.linalg.multi_dot([A, tp.ones(3, dtype=tp.float64), A])
    with pytest.raises(RuntimeError, match="cannot be chain-multiplied"):
        tp.linalg.multi_dot([A, tp.ones(2, 2, dtype=tp.float64)])
    # The cheapest order: (10x2 @ 2x10) @ 10x1 would cost 220 multiplications, 10x2 @ (2x10 @ 10x1) 40.
    x, y, z = _rand(10, 2), _rand(2, 10, seed=1), _rand(10, 1, seed=2)
    np.testing.assert_allclose(tp.linalg.multi_dot([_t(x), _t(y), _t(z)]).numpy(), x @ y @ z, rtol=1e-12)
    assert tp.linalg._chain_order([10, 2, 10, 1])[0][2] == 0
    assert tp.linalg.cond(tp.zeros(2, 2, dtype=tp.float64), "fro").item() == inf
    B = _t(_rand(2, 3, 3, seed=5) + 2 * np.eye(3), True)
    for p in ("fro", 1, -1, inf, -inf):
        assert tp.autograd.gradcheck(lambda x, p=p: tp.linalg.cond(x, p), (B,))
    np.testing.assert_allclose(tp.linalg.cond(B.detach(), 1).numpy(), np.linalg.cond(B.detach().numpy(), 1))
    with pytest.raises(RuntimeError, match="invalid norm type"):
        tp.linalg.cond(A, 3)
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        tp.linalg.lu(A, pivot=False)
    LU, piv = tp.linalg.lu_factor(A)
    assert piv.dtype is tp.int32 and piv.tolist() == [1, 2, 3]  # upper triangular: no interchanges
    with pytest.raises(RuntimeError, match="pivots must be an integer tensor of shape"):
        tp.linalg.lu_solve(LU, piv.double(), A)
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B for the equation XA = B"):
        tp.linalg.lu_solve(LU, piv, tp.ones(3, 2, dtype=tp.float64), left=False)
    np.testing.assert_allclose(tp.linalg.lu_solve(LU, piv, A).numpy(), np.eye(3), atol=1e-12)
    with pytest.raises(RuntimeError, match="Expected self to satisfy the requirement"):
        tp.linalg.tensorinv(tp.ones(2, 3, 2, dtype=tp.float64), ind=1)
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind'"):
        tp.linalg.tensorinv(A, ind=0)
    with pytest.raises(RuntimeError, match="Expected self to satisfy the requirement"):
        tp.linalg.tensorsolve(tp.ones(2, 3, 4, dtype=tp.float64), tp.ones(2, 3, dtype=tp.float64))
    with pytest.raises(ValueError, match="N must be greater than 1"):
        tp.linalg.vander(tp.ones(3), N=1)
    v = tp.tensor([0.0, 2.0], dtype=tp.float64, requires_grad=True)
    tp.linalg.vander(v).sum().backward()  # finite at zero
    np.testing.assert_allclose(v.grad.numpy(), [1.0, 1.0])


@pytest.mark.oracle
def test_tensor_methods_against_pytorch():
    torch = pytest.importorskip("torch")
    a = _rand(4, 3)
    A, At = _t(a), torch.tensor(a)
    # Singular vectors agree up to sign (the LAPACK builds differ); the old spelling returns V, not Vh.
    for some in (True, False):
        (U, S, V), (Ut, St, Vt) = A.svd(some=some), torch.svd(At, some=some)
        assert U.shape == Ut.shape and V.shape == Vt.shape
        np.testing.assert_allclose(S.numpy(), St.numpy(), rtol=1e-12)
        np.testing.assert_allclose(np.abs(U.numpy()[:, :3]), np.abs(Ut.numpy()[:, :3]), atol=1e-12)
        np.testing.assert_allclose((U.numpy()[:, :3] * S.numpy()) @ V.numpy().T, a, atol=1e-12)
    ours, theirs = tp.svd(A, compute_uv=False), torch.svd(At, compute_uv=False)
    assert type(ours).__name__ == type(theirs).__name__ == "svd"
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-12)
    for some in (True, False):
        for o, t in zip(A.qr(some=some), torch.linalg.qr(At, mode="reduced" if some else "complete")):
            np.testing.assert_allclose(np.abs(o.numpy()), np.abs(t.numpy()), atol=1e-12)
    np.testing.assert_allclose(A.pinverse().numpy(), At.pinverse().numpy(), rtol=1e-10)
    r, rt = tp.linalg.lstsq(A, A[:, :2]), torch.linalg.lstsq(At, At[:, :2])
    assert r.rank.tolist() == rt.rank.tolist() and r.residuals.shape == rt.residuals.shape
    assert r.singular_values.shape == rt.singular_values.shape


@pytest.mark.oracle
def test_ex_variants_report_singular_matrices_as_pytorch():
    torch = pytest.importorskip("torch")
    a = _rand(3, 3, 3)
    a[1] = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]  # U[2, 2] = 0 after pivoting
    a[2, :, 0] = 0.0  # a zero column: U[1, 1] = 0
    A, At = _t(a), torch.tensor(a)
    inv, info = tp.linalg.inv_ex(A)
    assert info.dtype is tp.int32 and info.tolist() == torch.linalg.inv_ex(At).info.tolist() == [0, 2, 1]
    np.testing.assert_allclose(inv[0].numpy(), np.linalg.inv(a[0]), rtol=1e-10)
    LU, piv, info = tp.linalg.lu_factor_ex(A)
    LUt, pivt, infot = torch.linalg.lu_factor_ex(At)
    assert info.tolist() == infot.tolist() and piv.tolist() == pivt.tolist()
    # (past a zero pivot the factors are the solver's own: a GPU's differ from LAPACK's, as PyTorch's CUDA ones do)
    same = slice(None) if jax.default_backend() == "cpu" else info.numpy() == 0
    np.testing.assert_allclose(LU.numpy()[same], LUt.numpy()[same], atol=1e-12)
    b = _rand(3, 3, 2, seed=1)
    x, info = tp.linalg.solve_ex(A[:1], _t(b[:1]))
    np.testing.assert_allclose(x.numpy(), torch.linalg.solve_ex(At[:1], torch.tensor(b[:1])).result.numpy(), rtol=1e-10)
    assert info.tolist() == [0]
    np.testing.assert_allclose(tp.linalg.solve(A[0], _t(b[0].T), left=False).numpy(),
                               torch.linalg.solve(At[0], torch.tensor(b[0].T), left=False).numpy(), rtol=1e-10)
    for fn, torch_fn in ((tp.linalg.inv_ex, torch.linalg.inv_ex), (tp.linalg.lu_factor_ex, torch.linalg.lu_factor_ex)):
        with pytest.raises(RuntimeError) as want:
            torch_fn(At, check_errors=True)
        message = str(want.value).removeprefix("torch.")
        with pytest.raises(RuntimeError, match=re.escape(message)):
            fn(A, check_errors=True)
    # Gradients flow through the result as through inv/solve.
    A2 = _t(a[0], True)
    tp.linalg.inv_ex(A2).inverse.sum().backward()
    At2 = torch.tensor(a[0], requires_grad=True)
    torch.linalg.inv_ex(At2).inverse.sum().backward()
    np.testing.assert_allclose(A2.grad.numpy(), At2.grad.numpy(), rtol=1e-10)


@pytest.mark.oracle
def test_cholesky_ex_finds_the_first_minor_that_is_not_positive_definite():
    torch = pytest.importorskip("torch")
    a = np.array([[[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.eye(3), _sym(3) + 6 * np.eye(3),
                  [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, -1.0]]])
    A, At = _t(a, True), torch.tensor(a)
    L, info = tp.linalg.cholesky_ex(A)
    assert info.dtype is tp.int32 and info.tolist() == torch.linalg.cholesky_ex(At).info.tolist() == [2, 0, 0, 3]
    np.testing.assert_allclose(L[1:3].detach().numpy(), torch.linalg.cholesky_ex(At).L[1:3].numpy(), rtol=1e-12)
    L[1:3].sum().backward()  # differentiable like cholesky where the factorisation succeeded
    assert np.isfinite(A.grad[1:3].numpy()).all()
    for x, xt in ((A.detach(), At), (A.detach()[0], At[0])):
        with pytest.raises(RuntimeError) as want:
            torch.linalg.cholesky_ex(xt, check_errors=True)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
            tp.linalg.cholesky_ex(x, check_errors=True)
    assert tp.linalg.cholesky_ex(A.detach()[1], upper=True).info.item() == 0


HOUSEHOLDER = {  # name: (A's shape, tau's length, dtype)
    "square": ((4, 4), 4, np.float64),
    "tall, fewer reflectors": ((5, 3), 2, np.float64),
    "batched": ((2, 4, 3), 3, np.float64),
    "no reflector": ((3, 2), 0, np.float64),
    "complex": ((4, 3), 3, np.complex128),
    "float32": ((6, 4), 4, np.float32),
}


@pytest.mark.parametrize("name", list(HOUSEHOLDER))
def test_householder_product_matches_pytorch(name):
    """`linalg.householder_product` / `orgqr`: values and gradients in both inputs, as PyTorch's; and the Q of a
    QR factorisation back from LAPACK's `geqrf` reflectors."""
    torch = pytest.importorskip("torch")
    shape, k, dt = HOUSEHOLDER[name]
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape).astype(dt)
    tau = rng.uniform(0.2, 1.5, (*shape[:-2], k)).astype(dt)
    if np.iscomplexobj(a):
        a = a + 1j * rng.standard_normal(shape)
        tau = tau + 0.3j
    g = rng.standard_normal(shape)
    results = []
    for lib in (tp, torch):
        A, T = lib.tensor(a, requires_grad=True), lib.tensor(tau, requires_grad=True)
        Q = lib.linalg.householder_product(A, T)
        (Q.real * lib.tensor(g, dtype=Q.real.dtype)).sum().backward()
        # (no reflector: PyTorch leaves both gradients None, tapeflow gives zeros)
        results.append([np.zeros(x.shape) if g is None else g.detach().numpy() for x, g in
                        ((Q, Q), (A, A.grad), (T, T.grad))])
        np.testing.assert_allclose(lib.orgqr(A, T).detach().numpy(), results[-1][0])
        np.testing.assert_allclose(A.orgqr(T).detach().numpy(), results[-1][0])
    tol = 2e-5 if dt == np.float32 else 1e-10
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)
    if name == "square":
        raw, t = torch.geqrf(torch.tensor(a))
        q = tp.linalg.householder_product(tp.tensor(raw.numpy()), tp.tensor(t.numpy())).numpy()
        np.testing.assert_allclose(q @ np.triu(raw.numpy()), a, atol=1e-12)


def test_householder_product_refuses_bad_inputs_as_pytorch():
    torch = pytest.importorskip("torch")
    cases = {
        "1d": lambda m: m.linalg.householder_product(m.ones(3), m.ones(1)),
        "wide": lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(1)),
        "tau too long": lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(3)),
        "tau dims": lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(1, 2)),
        "batch": lambda m: m.linalg.householder_product(m.ones(2, 3, 2), m.ones(3, 2)),
        "dtypes": lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(2, dtype=m.float64)),
        "integers": lambda m: m.orgqr(m.ones(3, 2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    }
    for name, f in cases.items():
        with pytest.raises(Exception) as theirs:
            f(torch)
        with pytest.raises(type(theirs.value)) as mine:
            f(tp)
        assert str(mine.value) == str(theirs.value), name


def _lowrank_case(lib, call, seed):
    lib.manual_seed(0)
    A = lib.randn(20, 4, dtype=lib.float64) @ lib.randn(4, 12, dtype=lib.float64) \
        + 0.01 * lib.randn(20, 12, dtype=lib.float64)
    X = A.clone().requires_grad_()
    lib.manual_seed(seed)
    U, S, V = call(lib, X)
    (S.sum() + (U[:, 0] * U[:, 0]).sum()).backward()
    # (singular vectors are defined up to sign: each column is compared with its first entry made positive)
    sign = lambda M: M * lib.where(M[:1] < 0, -1.0, 1.0)  # noqa: E731
    return [np.asarray(t.detach().numpy()) for t in (sign(U), S, sign(V), X.grad)]


@pytest.mark.parametrize("call", [
    lambda lib, A: lib.svd_lowrank(A, q=4), lambda lib, A: lib.svd_lowrank(A, q=3, niter=0),
    lambda lib, A: lib.svd_lowrank(A.mT, q=3), lambda lib, A: lib.svd_lowrank(A, q=3, M=lib.ones(1, 12, dtype=A.dtype)),
    lambda lib, A: lib.pca_lowrank(A), lambda lib, A: lib.pca_lowrank(A, q=2, center=False),
    lambda lib, A: lib.svd_lowrank(A.view(4, 5, 12), q=2)])
def test_randomized_low_rank_svd_and_pca_match_pytorch(call):
    torch = pytest.importorskip("torch")
    for mine, theirs in zip(_lowrank_case(tp, call, 7), _lowrank_case(torch, call, 7)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("kwargs", [dict(q=13), dict(q=-1), dict(niter=-1)])
def test_pca_lowrank_refuses_bad_sizes_as_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (tp, torch):
        with pytest.raises(ValueError) as info:
            lib.pca_lowrank(lib.ones(20, 12), **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]

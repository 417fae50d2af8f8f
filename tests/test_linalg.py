"""tp.linalg: shapes, batching, errors; and the NaN rules of fmax/fmin (values and grads are in the op table)."""

import numpy as np
import pytest

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

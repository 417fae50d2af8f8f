"""Grad modes, tracing under JAX transforms, dtype/device handling, errors."""

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp


def test_no_grad_records_nothing():
    x = tp.ones(3, requires_grad=True)
    with tp.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad


def test_modes_nest_and_restore():
    assert tp.is_grad_enabled()
    with tp.no_grad():
        assert not tp.is_grad_enabled()
        with tp.enable_grad():
            assert tp.is_grad_enabled()
        with tp.set_grad_enabled(True):
            assert tp.is_grad_enabled()
        assert not tp.is_grad_enabled()
    assert tp.is_grad_enabled()
    tp.set_grad_enabled(False)
    assert not tp.is_grad_enabled()
    tp.set_grad_enabled(True)
    with tp.inference_mode():
        assert not tp.is_grad_enabled() and tp.is_inference_mode_enabled()
    assert tp.is_grad_enabled()


def test_modes_restore_after_exception():
    with pytest.raises(ValueError):
        with tp.no_grad():
            raise ValueError
    assert tp.is_grad_enabled()


def test_decorators():
    @tp.no_grad()
    def f(x):
        return x * 2

    @tp.enable_grad()
    def g(x):
        return x * 2

    @tp.set_grad_enabled(False)
    def h(x):
        return x * 2

    x = tp.ones(1, requires_grad=True)
    assert not f(x).requires_grad
    assert tp.is_grad_enabled()
    assert not h(x).requires_grad and tp.is_grad_enabled()
    with tp.no_grad():
        assert g(x).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    with tp.no_grad():
        th = threading.Thread(target=lambda: seen.append(tp.is_grad_enabled()))
        th.start()
        th.join()
    assert seen == [True]


def test_eval_does_not_touch_grad_mode():
    assert tp.is_grad_enabled()


# -- one code path: the same engine under jax transforms ------------------------------------------
def _loss_and_grad(w_arr, x_arr):
    w = tp.Tensor._wrap(w_arr).requires_grad_()
    x = tp.Tensor._wrap(x_arr)
    loss = ((x @ w).tanh() ** 2).mean()
    loss.backward()
    return loss._data, w.grad._data


def test_backward_inside_jit_matches_eager():
    w = jnp.asarray(np.random.randn(3, 2))
    x = jnp.asarray(np.random.randn(5, 3))
    eager = _loss_and_grad(w, x)
    traced = jax.jit(_loss_and_grad)(w, x)
    np.testing.assert_allclose(np.asarray(traced[0]), np.asarray(eager[0]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(traced[1]), np.asarray(eager[1]), rtol=1e-12)
    ref = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    np.testing.assert_allclose(np.asarray(eager[1]), np.asarray(ref), rtol=1e-12)


def test_backward_inside_vmap_and_jax_grad():
    w = jnp.asarray(np.random.randn(3, 2))
    xs = jnp.asarray(np.random.randn(4, 5, 3))
    per_example = jax.vmap(_loss_and_grad, in_axes=(None, 0))(w, xs)
    for i in range(4):
        np.testing.assert_allclose(np.asarray(per_example[1][i]), np.asarray(_loss_and_grad(w, xs[i])[1]),
                                   rtol=1e-12)

    def loss_only(w_arr):
        w = tp.Tensor._wrap(w_arr)
        return ((tp.Tensor._wrap(xs[0]) @ w).tanh() ** 2).mean()._data
    g = jax.grad(loss_only)(w)
    np.testing.assert_allclose(np.asarray(g), np.asarray(_loss_and_grad(w, xs[0])[1]), rtol=1e-12)


def test_concrete_value_needed_under_trace_is_clear():
    def f(a):
        return tp.Tensor._wrap(a).sum().item()
    with pytest.raises(RuntimeError, match="being traced by JAX"):
        jax.jit(f)(jnp.ones(2))


# -- dtypes and devices ---------------------------------------------------------------------------
def test_float64_never_narrows():
    x = tp.tensor([1.0, 2.0], dtype=tp.float64, requires_grad=True)
    y = (x * 2.5 + 1).exp().sum()
    assert y.dtype == tp.float64
    y.backward()
    assert x.grad.dtype == tp.float64
    mixed = tp.tensor([1.0], dtype=tp.float32) * tp.tensor([1.0], dtype=tp.float64)
    assert mixed.dtype == tp.float64


def test_default_dtypes_and_aliases():
    assert tp.tensor([1.0]).dtype is tp.float32 and tp.tensor([1]).dtype is tp.int64
    assert tp.float32 is tp.float and tp.float64 is tp.double and tp.int64 is tp.long and tp.int32 is tp.int
    assert tp.tensor([True]).dtype is tp.bool
    assert (tp.tensor([1, 2]) * 1.5).dtype is tp.float32
    assert (tp.tensor([1, 2]) / tp.tensor([2, 2])).dtype is tp.float32
    assert tp.tensor([1, 2]).exp().dtype is tp.float32


def test_unknown_device_and_dtype_errors():
    with pytest.raises(RuntimeError, match="Expected one of cpu"):
        tp.zeros(2, device="quantum")
    with pytest.raises(TypeError, match="unknown dtype"):
        tp.zeros(2, dtype="float128")
    assert tp.zeros(2, device="cpu").device == tp.device("cpu")


def test_broadcast_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"shapes \[3\] and \[4\]"):
        tp.ones(3) + tp.ones(4)


def test_legacy_spellings():
    v = tp.autograd.Variable(tp.ones(2), requires_grad=True)
    assert isinstance(v, tp.Tensor) and v.requires_grad
    z = tp.Tensor([0, 0, 0])
    assert z.dtype is tp.float32 and z.shape == (3,)
    (v * 2).sum().backward()
    assert v.grad.data.sum().item() == 4.0


def test_modes_decorate_without_parentheses_and_as_calls():
    @tp.no_grad
    def f(a):
        return a * 2

    assert not f(tp.ones(1, requires_grad=True)).requires_grad and f.__name__ == "f"
    assert not tp.no_grad(lambda a: a * 2)(tp.ones(1, requires_grad=True)).requires_grad
    with tp.no_grad():
        @tp.enable_grad
        def h(a):
            return (a * 2).requires_grad

        assert h(tp.ones(1, requires_grad=True))

    @tp.inference_mode
    def g():
        return tp.is_inference_mode_enabled()

    assert g() and not tp.is_inference_mode_enabled()


def test_pow_of_zero_base_has_pytorchs_gradient():
    x = tp.tensor(0.0, requires_grad=True)
    tp.pow(0, x).backward()
    assert x.grad.item() == 0.0


def test_views_made_in_inference_mode_require_grad_as_pytorchs():
    """In inference mode a view of a tensor that requires grad requires grad too (a leaf whose gradient goes
    nowhere), except a view of an inference tensor, which is an inference tensor without grad (PyTorch)."""
    s = tp.ones(2, 3, requires_grad=True)
    with tp.inference_mode():
        c = tp.ones(2, 3, requires_grad=True)
        assert [v.requires_grad for v in (c.view(-1), c[0], c.t())] == [False, False, False]
        assert [v.requires_grad for v in (s.view(-1), s[0])] == [True, True]
        assert c.view(-1).is_inference() and not s.view(-1).is_inference()
    with tp.no_grad():
        assert not c.view(-1).requires_grad and s.view(-1).requires_grad


def test_unsafe_preserve_version_counter_hides_writes_as_pytorch():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 1
        z = (y * y).sum()
        with lib.autograd.grad_mode._unsafe_preserve_version_counter(y):
            with lib.no_grad():
                y.mul_(2)
        z.backward()
        return x.grad.tolist(), y._version

    assert run(tp) == run(torch) == ([4.0, 4.0], 0)

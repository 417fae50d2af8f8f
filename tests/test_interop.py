"""The JAX bridge: pytrees, to_jax/from_jax, DLPack/NumPy protocols."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
from tapeflow.interop import from_jax, to_jax


# -- pytrees ------------------------------------------------------------------------------------------------
def test_tensor_leaves_and_map():
    t = tp.tensor([1.0, 2.0], requires_grad=True)
    leaves = jax.tree.leaves(t)
    assert len(leaves) == 1 and leaves[0] is t._data
    doubled = jax.tree.map(lambda a: a * 2, {"t": t, "n": [tp.ones(1)]})
    assert isinstance(doubled["t"], tp.Tensor) and doubled["t"].requires_grad
    np.testing.assert_allclose(doubled["t"].detach().numpy(), [2.0, 4.0])


def test_tensor_through_jit_vmap_and_placeholder_leaves():
    f = jax.jit(lambda t: (t * t).sum())
    out = f(tp.tensor([1.0, 2.0, 3.0]))
    assert isinstance(out, tp.Tensor) and out.item() == 14.0
    rows = jax.vmap(lambda t: t.sum())(tp.ones(4, 3))
    np.testing.assert_allclose(rows.numpy(), [3.0] * 4)
    # JAX unflattens with non-array placeholders (e.g. in tree.structure/ eval_shape).
    shapes = jax.eval_shape(lambda t: t * 2, tp.ones(2, 5))
    assert shapes.shape == (2, 5)
    assert jax.tree.unflatten(jax.tree.structure(tp.ones(1)), [None]).__class__ is tp.Tensor


def test_scan_over_tensors():
    def body(carry, x):
        return carry + x, carry

    final, hist = jax.lax.scan(body, tp.zeros(()), tp.arange(4.0))
    assert final.item() == 6.0 and hist.tolist() == [0.0, 0.0, 1.0, 3.0]


# -- to_jax ------------------------------------------------------------------------------------------------------
def test_to_jax_values_no_copy():
    t = tp.randn(3)
    assert to_jax(t) is t._data
    tree = to_jax({"a": t, "b": (tp.ones(2), 3)})
    assert tree["a"] is t._data and isinstance(tree["b"][0], jax.Array) and tree["b"][1] == 3


def loss_fn(w, x):
    return ((x @ w).tanh() ** 2).mean()


def test_to_jax_function_grad_jit_vmap_matches_tapeflow():
    w = tp.randn(3, 2, dtype=tp.float64, requires_grad=True)
    x = tp.randn(5, 3, dtype=tp.float64)
    loss_fn(w, x).backward()
    f = to_jax(loss_fn)
    g = jax.jit(jax.grad(f))(w._data, x._data)
    np.testing.assert_allclose(np.asarray(g), w.grad.numpy(), rtol=1e-10)
    per_example = jax.vmap(jax.grad(f), in_axes=(None, 0))(w._data, x._data[:, None, :])
    np.testing.assert_allclose(np.asarray(per_example).mean(0), w.grad.numpy() * 1, rtol=1e-8)
    h = jax.hessian(to_jax(lambda v: (v ** 3).sum()))(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(h), np.diag([0.0, 6.0, 12.0]))


def test_to_jax_in_scan_and_pytree_io():
    step = to_jax(lambda c, x: ({"s": c["s"] + x.sin()}, x.cos()))
    (carry, ys) = jax.lax.scan(step, {"s": jnp.zeros(())}, jnp.arange(3.0))
    np.testing.assert_allclose(float(carry["s"]), np.sin(np.arange(3.0)).sum(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.cos(np.arange(3.0)), rtol=1e-6)


# -- from_jax --------------------------------------------------------------------------------------------------
def jax_softplus(x, y):
    return jnp.logaddexp(x * y, 0.0)


def test_from_jax_array_no_copy():
    a = jnp.arange(3.0)
    t = from_jax(a)
    assert isinstance(t, tp.Tensor) and t._data is a and not t.requires_grad
    tree = from_jax({"a": a, "b": [np.ones(2)]})
    assert isinstance(tree["b"][0], tp.Tensor)


def test_from_jax_function_first_and_second_order():
    op = from_jax(jax_softplus)
    assert from_jax(jax_softplus) is op  # cached per function
    x = tp.tensor([0.5, -1.0, 2.0], dtype=tp.float64, requires_grad=True)
    y = tp.tensor([1.5, 0.5, -0.3], dtype=tp.float64, requires_grad=True)
    out = op(x, y)
    assert out.grad_fn.name() == "JaxSoftplusBackward"
    gx, gy = tp.autograd.grad(out.sum(), (x, y), create_graph=True)
    jx, jy = jax.grad(lambda a, b: jax_softplus(a, b).sum(), (0, 1))(x._data, y._data)
    np.testing.assert_allclose(gx.detach().numpy(), np.asarray(jx), rtol=1e-12)
    np.testing.assert_allclose(gy.detach().numpy(), np.asarray(jy), rtol=1e-12)
    (ggx,) = tp.autograd.grad(gx.sum(), x)
    jgg = jax.grad(lambda a: jax.grad(lambda a2: jax_softplus(a2, y._data).sum())(a).sum())(x._data)
    np.testing.assert_allclose(ggx.numpy(), np.asarray(jgg), rtol=1e-10)


def test_from_jax_pytree_outputs_and_eager_backward():
    def stats(d):
        return {"mean": jnp.mean(d["x"]), "max": jnp.max(d["x"] * d["s"])}

    op = from_jax(stats)
    x = tp.tensor([1.0, 3.0, 2.0], requires_grad=True)
    res = op({"x": x, "s": 2.0})
    assert set(res) == {"mean", "max"} and res["max"].item() == 6.0
    (res["mean"] + res["max"]).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 1 / 3 + 2.0, 1 / 3], rtol=1e-6)


def test_from_jax_checked_by_gradcheck_style_finite_differences():
    op = from_jax(lambda a: jnp.sin(a) * a)
    x = tp.tensor([0.3, -0.7], dtype=tp.float64, requires_grad=True)
    op(x).sum().backward()
    eps = 1e-6
    fd = [(np.sin(v + eps) * (v + eps) - np.sin(v - eps) * (v - eps)) / (2 * eps) for v in [0.3, -0.7]]
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6)


def test_from_jax_rejects_unhashable_keywords():
    op = from_jax(lambda a, scale: a * scale)
    with pytest.raises(TypeError, match="hashable"):
        op(tp.ones(2), scale=[1.0])


# -- NumPy / DLPack / __jax_array__ ----------------------------------------------------------------------------------
def test_dlpack_roundtrip_and_protocols():
    t = tp.arange(4.0, device="cpu")  # (NumPy imports host memory only, on a GPU machine too)
    assert tuple(t.__dlpack_device__())[0] == 1  # kDLCPU
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, [0.0, 1.0, 2.0, 3.0])
    u = tp.from_dlpack(np.arange(3, dtype=np.float32))
    assert u.dtype == tp.float32 and u.tolist() == [0.0, 1.0, 2.0]
    assert tp.from_dlpack(t)._data is t._data
    assert float(jnp.sum(t)) == 6.0 and np.asarray(t).sum() == 6.0
    assert tp.from_numpy(np.ones(2)).dtype == tp.float64
    with pytest.raises(TypeError, match="__dlpack__"):
        tp.from_dlpack([1, 2])


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    t = tp.from_dlpack(torch.arange(3.0))
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert torch.from_dlpack(tp.ones(2)).tolist() == [1.0, 1.0]

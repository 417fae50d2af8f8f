"""tapeflow.func: transforms agree with JAX on the same maths, compose, and follow torch.func conventions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
from tapeflow import func as F
from tapeflow.autograd import functional as AF


def t(x, **kw):
    return tp.tensor(x, dtype=tp.float64, **kw)


A = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1]])
X = np.array([0.2, -0.4, 0.9])


def tf(x):
    return (t(A) @ x).tanh().sum() + (x ** 3).sum()


def jf(x):
    return jnp.tanh(jnp.asarray(A) @ x).sum() + (x ** 3).sum()


CASES = [
    ("grad", lambda: F.grad(tf)(t(X)), lambda: jax.grad(jf)(X)),
    ("jacrev", lambda: F.jacrev(lambda x: (t(A) @ x).sin())(t(X)), lambda: jax.jacrev(lambda x: jnp.sin(A @ x))(X)),
    ("jacfwd", lambda: F.jacfwd(lambda x: (t(A) @ x).sin())(t(X)), lambda: jax.jacfwd(lambda x: jnp.sin(A @ x))(X)),
    ("hessian", lambda: F.hessian(tf)(t(X)), lambda: jax.hessian(jf)(X)),
    ("jacfwd(grad)", lambda: F.jacfwd(F.grad(tf))(t(X)), lambda: jax.jacfwd(jax.grad(jf))(X)),
    ("vmap(grad)", lambda: F.vmap(F.grad(tf))(t(np.stack([X, 2 * X]))),
     lambda: jax.vmap(jax.grad(jf))(np.stack([X, 2 * X]))),
]


@pytest.mark.parametrize("name,ours,theirs", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(name, ours, theirs):
    np.testing.assert_allclose(ours().numpy(), np.asarray(theirs()), rtol=1e-12, atol=1e-14)


def test_grad_argnums_has_aux_and_value():
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    gx, gy = F.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(x, y)
    assert tp.equal(gx, y) and tp.equal(gy, x)
    (g, aux) = F.grad(lambda x: ((x ** 2).sum(), {"double": x * 2}), has_aux=True)(x)
    assert tp.equal(g, 2 * x) and tp.equal(aux["double"], 2 * x)
    g, (value, aux) = F.grad_and_value(lambda x: ((x ** 2).sum(), x.sum()), has_aux=True)(x)
    assert value.item() == 5.0 and aux.item() == 3.0
    g, value = F.grad_and_value(lambda x, k: (x * k).sum())(x, 3.0)
    assert tp.equal(g, t([3.0, 3.0])) and value.item() == 9.0


def test_grad_errors():
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        F.grad(lambda x: x * 2)(t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="argnums"):
        F.grad(lambda x: x.sum(), argnums=3)(t([1.0]))


def test_vjp_and_jvp():
    x = t([1.0, 2.0])
    out, fn = F.vjp(lambda x: x ** 2, x)
    (g,) = fn(t([1.0, 1.0]))
    assert tp.equal(out, x ** 2) and tp.equal(g, 2 * x)
    out, fn, aux = F.vjp(lambda x: (x.exp(), x.sum()), x, has_aux=True)
    assert aux.item() == 3.0
    out, tan = F.jvp(lambda x, y: x * y, (x, t([5.0, 6.0])), (t([1.0, 0.0]), t([0.0, 1.0])))
    assert tp.equal(tan, t([5.0, 2.0]))
    with pytest.raises(RuntimeError, match="tuples"):
        F.jvp(lambda x: x, x, x)


def test_vmap_in_dims_out_dims():
    a, b = t(np.arange(6.0).reshape(2, 3)), t([10.0, 20.0])
    out = F.vmap(lambda x, y: x + y, in_dims=(1, None))(a, b)  # map over a's columns
    np.testing.assert_allclose(out.numpy(), a.numpy().T + b.numpy()[None, :])
    out = F.vmap(lambda x: x * 2, out_dims=1)(a)
    assert out.shape == (3, 2)
    with pytest.raises(RuntimeError, match="randomness"):
        F.vmap(lambda x: x, randomness="sometimes")


def test_transforms_inside_jit():
    def step(a):
        return F.hessian(lambda x: (x ** 3).sum())(tp.Tensor._make(a, None, 0, False))._data

    np.testing.assert_allclose(jax.jit(step)(jnp.array([1.0, 2.0])), np.diag([6.0, 12.0]))
    # autograd.functional inside jit runs the transform inline.
    h = jax.jit(lambda a: AF.hessian(lambda x: (x ** 3).sum(), tp.Tensor._make(a, None, 0, False))._data)
    np.testing.assert_allclose(h(jnp.array([1.0, 2.0])), np.diag([6.0, 12.0]))


class _Affine:
    """A minimal object exposing named_parameters()/named_buffers() and __call__."""

    def __init__(self):
        self.weight = t([[1.0, 2.0]])
        self.shift = t([0.5])

    def named_parameters(self):
        return [("weight", self.weight)]

    def named_buffers(self):
        return [("shift", self.shift)]

    def __call__(self, x):
        return self.weight @ x + self.shift


def _nn_linear():
    try:
        import tapeflow.nn as nn

        return nn.Linear(2, 1)
    except (ImportError, AttributeError):
        return None


@pytest.mark.parametrize("make", [_Affine, _nn_linear], ids=["minimal", "nn.Linear"])
def test_functional_call_swaps_and_restores(make):
    m = make()
    if m is None:
        pytest.skip("tapeflow.nn.Linear is not available")
    x = t([1.0, 2.0]) if m.weight.dtype == tp.float64 else tp.tensor([1.0, 2.0])
    old_w = m.weight
    w = tp.ones(1, 2, dtype=old_w.dtype)
    params = {"weight": w}
    out = F.functional_call(m, params, (x,))
    bias = dict(list(m.named_parameters()) + list(m.named_buffers())).get("bias", None)
    shift = bias if bias is not None else m.shift
    np.testing.assert_allclose(out.detach().numpy(), 3.0 + shift.detach().numpy(), rtol=1e-6)
    assert m.weight is old_w
    g = F.grad(lambda p, x: F.functional_call(m, p, (x,)).sum())(params, x)
    np.testing.assert_allclose(g["weight"].numpy(), [[1.0, 2.0]])
    # The tape also sees through the swapped tensors.
    w2 = w.clone().requires_grad_()
    F.functional_call(m, {"weight": w2}, x).sum().backward()
    np.testing.assert_allclose(w2.grad.numpy(), [[1.0, 2.0]])
    with pytest.raises(RuntimeError, match="missing keys"):
        F.functional_call(m, {"weight": w}, (x,), strict=True)


# -- caching: a transform is compiled on its second call with the same key and reused after -----------------
def _compiled(f) -> list:
    """The compiled entries cached for base function `f` (empty before its second call)."""
    return [s for staged in F._cache.stages(f) for s in staged.programs.values() if s.program is not None]


@pytest.mark.parametrize("name,ours,theirs", CASES, ids=[c[0] for c in CASES])
def test_cached_calls_match_jax(name, ours, theirs):
    expected = np.asarray(theirs())
    for _ in range(3):  # uncached, compiled, cached
        np.testing.assert_allclose(ours().numpy(), expected, rtol=1e-12, atol=1e-14)
    if name in ("grad", "hessian", "jacfwd(grad)", "vmap(grad)"):  # the others make a new lambda per call
        assert _compiled(tf)


def test_cache_key_is_function_and_chain():
    def f(x):
        return (x ** 3).sum()

    x = t([1.0, 2.0])
    for _ in range(3):
        h = F.hessian(f)(x)  # a new wrapper every call, one cache entry
    assert len(_compiled(f)) == 1
    np.testing.assert_allclose(h.numpy(), np.diag([6.0, 12.0]))
    for _ in range(3):
        g = F.jacfwd(F.grad(f))(t([1.0, 2.0, 3.0]))  # another chain, another shape: another entry
    np.testing.assert_allclose(g.numpy(), np.diag([6.0, 12.0, 18.0]))
    assert len(_compiled(f)) == 2


def test_captured_tensor_changes_are_seen():
    w = t([1.0, 2.0])

    def f(x):
        return (w * x ** 2).sum()

    x = t([3.0, 4.0])
    g = F.grad(f)
    for _ in range(3):
        assert tp.equal(g(x), 2 * w * x)
    assert _compiled(f)
    with tp.no_grad():
        w.mul_(10.0)  # in place: the program's input changes
    assert tp.equal(g(x), t([60.0, 160.0]))
    w = t([-1.0, 1.0])  # rebinding the closure cell: traced again
    assert tp.equal(g(x), t([-6.0, 8.0]))
    assert tp.equal(g(x), t([-6.0, 8.0]))


def test_module_parameters_updated_by_an_optimizer_are_seen():
    import tapeflow.nn as nn

    tp.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = tp.optim.SGD(model.parameters(), lr=0.1)
    x = tp.randn(3)

    def out(x):
        return model(x).sum()

    grad_x = F.grad(out)
    for _ in range(3):
        np.testing.assert_allclose(grad_x(x).numpy(), model.weight.detach().numpy()[0], rtol=1e-6)
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
        np.testing.assert_allclose(grad_x(x).numpy(), model.weight.detach().numpy()[0], rtol=1e-6)
    assert _compiled(out)
    # Per-parameter gradients through functional_call, with the module's own parameters updated in between.
    params = {k: v.detach() for k, v in model.named_parameters()}
    loss = F.grad(lambda p, x: F.functional_call(model, p, (x,)).sum())
    for _ in range(3):
        np.testing.assert_allclose(loss(params, x)["weight"].numpy()[0], x.numpy(), rtol=1e-6)
    assert _compiled(loss._tp_spec[0])


def test_module_training_flag_retraces():
    import tapeflow.nn as nn

    class Scale(nn.Module):
        def forward(self, x):
            return x * (2.0 if self.training else 3.0)

    m = Scale()

    def f(x):
        return m(x).sum()

    x = t([1.0, 1.0])
    for _ in range(3):
        assert tp.equal(F.grad(f)(x), t([2.0, 2.0]))
    assert _compiled(f)
    m.eval()
    assert tp.equal(F.grad(f)(x), t([3.0, 3.0]))


def test_static_arguments_are_part_of_the_key():
    def f(x, k, mode="sum"):
        y = x * k
        return y.sum() if mode == "sum" else y.mean()

    x = t([1.0, 2.0])
    g = F.grad(f)
    for k, mode, expected in [(2.0, "sum", 2.0), (2.0, "sum", 2.0), (3.0, "sum", 3.0), (3.0, "sum", 3.0),
                              (3.0, "mean", 1.5), (3.0, "mean", 1.5), (2, "sum", 2.0), (2, "sum", 2.0)]:
        assert tp.equal(g(x, k, mode=mode), t([expected, expected]))
    assert len(_compiled(f)) == 4


def test_data_dependent_python_falls_back():
    w = t([1.0, -1.0])

    def on_state(x):  # branches on a captured tensor
        return (x * 2).sum() if w.sum().item() > 0 else (x * 3).sum()

    def on_numpy(x):  # reads a captured tensor as NumPy: never baked into a program
        return (x * float(np.asarray(w)[0])).sum()

    def on_arg(x, flag):  # branches on a non-differentiated argument
        return x.sum() if bool(flag > 0) else -x.sum()

    x = t([1.0, 2.0])
    for _ in range(3):
        assert tp.equal(F.grad(on_state)(x), t([3.0, 3.0]))
        assert tp.equal(F.grad(on_numpy)(x), t([1.0, 1.0]))
        assert tp.equal(F.grad(on_arg)(x, t(1.0)), t([1.0, 1.0]))
    with tp.no_grad():
        w.fill_(1.0)
    assert tp.equal(F.grad(on_state)(x), t([2.0, 2.0]))
    assert tp.equal(F.grad(on_numpy)(x), t([1.0, 1.0]))
    with tp.no_grad():
        w.fill_(5.0)
    assert tp.equal(F.grad(on_numpy)(x), t([5.0, 5.0]))
    assert tp.equal(F.grad(on_arg)(x, t(-1.0)), t([-1.0, -1.0]))
    assert not _compiled(on_state) and not _compiled(on_numpy) and not _compiled(on_arg)


def test_random_draws_are_not_replayed():
    def f(x):
        return (x * tp.rand(2, dtype=tp.float64)).sum()

    x = t([1.0, 1.0])
    draws = [F.grad(f)(x) for _ in range(4)]
    assert len({tuple(d.tolist()) for d in draws}) == 4
    assert tp.rand(2).shape == (2,)  # the generator still holds a concrete key
    assert _compiled(f)  # the key is an input of the program: compiled, yet fresh draws on every call


def test_random_draws_and_state_writes_follow_eager_code_call_for_call():
    """A compiled transform draws the numbers eager code draws, and writes captured state as eager code does."""
    count = t([0.0])

    def f(x):
        count.add_(1.0)  # in place, on captured state
        return (x * tp.rand(2, dtype=tp.float64) * count).sum()

    def eager_grad(x):
        x = x.detach().requires_grad_()
        f(x).backward()
        return x.grad

    x = t([1.0, 1.0])
    results = []
    for grad in (F.grad(f), eager_grad):
        tp.manual_seed(3)
        with tp.no_grad():
            count.zero_()
        results.append([grad(x).tolist() for _ in range(4)] + [count.tolist(), tp.rand(1).tolist()])
    assert results[0] == results[1]
    assert _compiled(f) and not isinstance(count._data, jax.core.Tracer)


def test_random_ops_under_vmap_follow_its_randomness():
    """PyTorch's three modes: "error" (the default) refuses a draw, "same" draws once for the batch, "different"
    draws for each element; on every call (a cached program draws anew), nested, through dropout and jacfwd."""
    x = tp.ones(4, 3)
    refuse = F.vmap(lambda r: r + tp.randn(3))
    for _ in range(2):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            refuse(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        F.jacfwd(lambda v: v * tp.rand(3))(tp.ones(3))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        F.hessian(lambda v: (v * v * tp.rand(3)).sum())(tp.ones(3))
    assert F.jacfwd(lambda v: v * tp.rand(3), randomness="same")(tp.ones(3)).shape == (3, 3)
    same = F.vmap(lambda r: r * tp.rand(3), randomness="same")
    different = F.vmap(lambda r: r * tp.rand(3), randomness="different")
    firsts = []
    for _ in range(3):
        s, d = same(x), different(x)
        assert bool((s == s[0]).all())
        assert len({tuple(row.tolist()) for row in d}) == 4
        firsts.append(tuple(d[0].tolist()))
    assert len(set(firsts)) == 3  # fresh draws on every call
    masks = F.vmap(lambda r: tp.nn.functional.dropout(r, 0.5), randomness="different")(tp.ones(4, 64))
    assert len({tuple(row.tolist()) for row in masks}) == 4
    nested = F.vmap(F.vmap(lambda r: r + tp.randn(()), randomness="same"), randomness="different")(tp.zeros(3, 2))
    assert [len(set(row.tolist())) for row in nested] == [1, 1, 1] and len(set(nested[:, 0].tolist())) == 3
    with pytest.raises(RuntimeError, match="randomness error mode"):  # an inner vmap in error mode refuses
        F.vmap(F.vmap(lambda r: r + tp.randn(())), randomness="different")(tp.zeros(3, 2))


def test_vjp_jvp_cached():
    def f(x):
        return x.sin() * 2

    x = t([0.5, 1.0])
    for _ in range(3):
        out, fn = F.vjp(f, x)
        (g,) = fn(t([1.0, 1.0]))
        np.testing.assert_allclose(g.numpy(), 2 * np.cos(x.numpy()), rtol=1e-12)
        out, tan = F.jvp(f, (x,), (t([1.0, 0.0]),))
        np.testing.assert_allclose(tan.numpy(), [2 * np.cos(0.5), 0.0], rtol=1e-12)
    assert len(_compiled(f)) == 2


def test_cached_function_can_be_freed():
    import gc
    import weakref

    def f(x):
        return (x ** 2).sum()

    for _ in range(3):
        F.grad(f)(t([1.0]))
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None


def test_non_tensor_aux_is_returned_as_is():
    def f(x):
        return (x ** 2).sum(), 7

    for _ in range(3):
        g, aux = F.grad(f, has_aux=True)(t([1.0]))
        assert aux == 7 and type(aux) is int


def test_requires_grad_inside_transforms_is_pytorchs():
    """Inside torch.func's reverse-mode transforms the differentiated values require grad (and what is computed
    from them); forward mode, vmap and values behind no_grad / detach do not."""
    seen = []

    def f(x):
        with tp.no_grad():
            frozen = x * 2
        seen.append((x.requires_grad, (x * 2).requires_grad, x.detach().requires_grad, frozen.requires_grad))
        return (x * frozen).sum()

    x = tp.ones(2)
    tp.func.grad(f)(x)
    tp.func.jvp(f, (x,), (x,))
    tp.func.vmap(tp.func.grad(f))(tp.ones(2, 2))
    tp.func.vmap(f)(tp.ones(2, 2))
    tp.func.jacrev(f)(x)
    tp.autograd.functional.vjp(f, x)
    assert seen == [(True, True, False, False), (False, False, False, False), (True, True, False, False),
                    (False, False, False, False), (True, True, False, False), (True, True, False, False)]


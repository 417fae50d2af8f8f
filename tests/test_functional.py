"""autograd.functional: shapes, exact values, tuple structure, fast path vs tape path, caching."""

import numpy as np
import pytest

import tapeflow as tp
from tapeflow.autograd import functional as AF


def t(x, **kw):
    return tp.tensor(x, dtype=tp.float64, **kw)


X4 = np.array([0.5, -1.0, 2.0, 0.25])


def cubic(x):
    return (x ** 3).sum() + (x[0] * x[1])


def cubic_hess(x):
    h = np.diag(6 * x)
    h[0, 1] = h[1, 0] = 1.0
    return h


def branchy(x):
    # Data-dependent Python: cannot be traced, so the tape path runs.
    if (x.sum() > 0).item():
        return cubic(x)
    return x.sum()


@pytest.mark.parametrize("fn", [cubic, branchy], ids=["traced", "tape"])
def test_hessian_jacobian_values_both_paths(fn):
    x = t(X4)
    np.testing.assert_allclose(AF.hessian(fn, x).numpy(), cubic_hess(X4), rtol=1e-12)
    jac = AF.jacobian(fn, x)
    grad = 3 * X4 ** 2 + np.array([X4[1], X4[0], 0, 0])
    assert jac.shape == (4,)
    np.testing.assert_allclose(jac.numpy(), grad, rtol=1e-12)
    _, hv = AF.hvp(fn, x, t(np.ones(4)))
    _, vh = AF.vhp(fn, x, t(np.ones(4)))
    np.testing.assert_allclose(hv.numpy(), cubic_hess(X4).sum(1), rtol=1e-12)
    np.testing.assert_allclose(vh.numpy(), cubic_hess(X4).sum(0), rtol=1e-12)


def test_hessian_of_square_sum_is_exactly_two_eye():
    h = AF.hessian(lambda x: (x ** 2).sum(), tp.randn(4))
    assert h.shape == (4, 4)
    assert tp.equal(h, 2 * tp.eye(4))


SHAPES = [
    ("R4->scalar", lambda x: (x * x).sum(), (4,), (4,)),
    ("R4->R2", lambda x: x[:2] * x[2:], (4,), (2, 4)),
    ("(4,4)->(2,2)", lambda x: x[:2, :2] * 2 + x[2:, 2:], (4, 4), (2, 2, 4, 4)),
]


@pytest.mark.parametrize("name,fn,in_shape,jac_shape", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_shapes(name, fn, in_shape, jac_shape, strategy):
    x = tp.randn(*in_shape, dtype=tp.float64)
    jac = AF.jacobian(fn, x, vectorize=True, strategy=strategy)
    assert tuple(jac.shape) == jac_shape
    # Compare with the tape path (create_graph=True forces it).
    slow = AF.jacobian(fn, x.clone().requires_grad_(), create_graph=True)
    np.testing.assert_allclose(jac.numpy(), slow.detach().numpy(), rtol=1e-12)


def test_jacobian_of_linear_map_equals_weight():
    w = tp.randn(2, 4, dtype=tp.float64)
    b = tp.randn(2, dtype=tp.float64)
    jac = AF.jacobian(lambda x: w @ x + b, tp.randn(4, dtype=tp.float64))
    assert tp.equal(jac, w)


def test_tuple_inputs_and_outputs_structure():
    a, b = t([1.0, 2.0]), t([3.0, 4.0, 5.0])
    jac = AF.jacobian(lambda a, b: (a * 2, b.sum() * a), (a, b))
    assert isinstance(jac, tuple) and len(jac) == 2 and len(jac[0]) == 2
    assert jac[0][0].shape == (2, 2) and jac[0][1].shape == (2, 3) and jac[1][1].shape == (2, 3)
    np.testing.assert_allclose(jac[1][1].numpy(), [[1.0] * 3, [2.0] * 3])
    jac_in = AF.jacobian(lambda a, b: a.sum() * b.sum(), (a, b))
    assert isinstance(jac_in, tuple) and jac_in[0].shape == (2,) and jac_in[1].shape == (3,)
    jac_out = AF.jacobian(lambda a: (a, a * 3), a)
    assert isinstance(jac_out, tuple) and jac_out[1].shape == (2, 2)
    h = AF.hessian(lambda a, b: (a.sum() * b.sum()) ** 2, (a, b))
    assert h[0][1].shape == (2, 3) and h[1][0].shape == (3, 2)


def test_vjp_jvp_values_and_v_rules():
    x = t([1.0, 2.0, 3.0])
    out, g = AF.vjp(lambda x: x ** 2, x, t([1.0, 0.0, 2.0]))
    np.testing.assert_allclose(out.numpy(), [1.0, 4.0, 9.0])
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, 12.0])
    out, g = AF.vjp(lambda x: (x ** 2).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])
    out, tan = AF.jvp(lambda x: (x ** 2, x.sum()), x, t([1.0, 1.0, 0.0]))
    np.testing.assert_allclose(tan[0].numpy(), [2.0, 4.0, 0.0])
    assert tan[1].item() == 2.0
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.vjp(lambda x: x ** 2, x)
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.jvp(lambda x: x ** 2, x)
    with pytest.raises(RuntimeError, match="invalid size"):
        AF.hvp(lambda x: x.sum(), x, t([1.0]))


def test_strict_and_independent_outputs():
    x, y = t([1.0, 2.0]), t([3.0])
    jac = AF.jacobian(lambda x, y: x * 2, (x, y))
    assert np.all(jac[1].numpy() == 0) and jac[1].shape == (2, 1)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda x, y: x * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="not supported together"):
        AF.jacobian(lambda x: x, x, strict=True, vectorize=True)
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        AF.jacobian(lambda x: x, x, strategy="forward-mode")


@pytest.mark.parametrize("strict", [False, True])  # strict=True runs the tape path
def test_v_shape_errors_name_what_v_must_match(strict):
    x = t([1.0, 2.0])
    # PyTorch's wording ("Entry i in " when the reference is a tuple)
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be \S*Size\(\[2\]\) but got \S*Size\(\[1\]\)\.$"):
        AF.vjp(lambda x: x * 2, x, t([1.0]), strict=strict)
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be \S*Size\(\[2\]\)"):
        AF.jvp(lambda x: x * 2, x, t([1.0]), strict=strict)
    with pytest.raises(RuntimeError, match=r"^Entry 1 in v has invalid size: should be \S*Size\(\[2\]\)"):
        AF.vhp(lambda x, y: (x * y).sum(), (x, x), (t([1.0, 1.0]), t([1.0])), strict=strict)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor"):  # (x is one tensor)
        AF.hvp(lambda x: x.sum(), x, (t([1.0, 1.0]), t([1.0])), strict=strict)
    with pytest.raises(RuntimeError, match="v can only be None if the input to the user-provided function"):
        AF.vhp(lambda x: x.sum(), x, strict=strict)


def test_strict_mode_on_every_product():
    x, y = t([1.0, 2.0]), t([3.0])
    unused = "The output of the user-provided function is independent of input 1. This is not allowed in strict mode"
    with pytest.raises(RuntimeError, match=unused):
        AF.vjp(lambda x, y: (x * 2).sum(), (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 1 of the user-provided function does not require gradients"):
        AF.jvp(lambda x: (x * 2, t([1.0])), x, t([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match=unused):
        AF.hvp(lambda x, y: (x ** 3).sum(), (x, y), (t([1.0, 1.0]), t([1.0])), strict=True)
    # PyTorch's wording: a gradient with no graph of its own cannot be differentiated again.
    linear_in_y = "found that the jacobian of the user-provided function with respect to input 1 is independent"
    for second in (AF.vhp, AF.hvp):
        with pytest.raises(RuntimeError, match=linear_in_y):
            second(lambda x, y: (x ** 2).sum() + y.sum(), (x, y), (t([1.0, 1.0]), t([1.0])), strict=True)
    with pytest.raises(RuntimeError, match=linear_in_y):
        AF.hessian(lambda x, y: (x ** 2).sum() + y.sum(), (x, y), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode when "
                                           "create_graph=True"):
        AF.vjp(lambda x, y: x ** 2 + y, (x, y), t([1.0, 1.0]), strict=True, create_graph=True)
    # A linear function's tangent has no graph: refused with create_graph=True (PyTorch).
    with pytest.raises(RuntimeError, match="independent of input 0. This is not allowed in strict mode when "
                                           "create_graph=True"):
        AF.jvp(lambda x: x * 2, x, t([1.0, 1.0]), create_graph=True, strict=True)
    # Products that depend on every input pass, with or without create_graph.
    for create_graph in (False, True):
        _, tan = AF.jvp(lambda x: x ** 2, x, t([1.0, 1.0]), create_graph=create_graph, strict=True)
        np.testing.assert_allclose(tan.detach().numpy(), [2.0, 4.0])
        _, p = AF.hvp(lambda x: (x ** 2).sum(), x, t([1.0, 1.0]), create_graph=create_graph, strict=True)
        np.testing.assert_allclose(p.detach().numpy(), [2.0, 2.0])


def test_create_graph_results_stay_on_the_tape():
    x = t([1.0, 2.0], requires_grad=True)
    h = AF.hessian(lambda x: (x ** 3).sum(), x, create_graph=True)
    assert h.requires_grad
    h.sum().backward()  # d/dx sum(diag(6x)) = 6
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    out, g = AF.vjp(lambda x: (x ** 2).sum(), x)
    assert not g.requires_grad and not out.requires_grad


def test_errors_for_bad_inputs_and_outputs():
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda x: x, [1.0])
    with pytest.raises(TypeError, match="outputs of the user-provided function"):
        AF.jacobian(lambda x: 3.0, t([1.0]))
    with pytest.raises(RuntimeError, match="floating point"):
        AF.jacobian(lambda x: x * 2, tp.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="single element"):
        AF.hessian(lambda x: x * 2, t([1.0, 2.0]))


def test_fast_path_traces_once_and_sees_captured_state():
    calls = []
    w = t([[1.0, 2.0], [3.0, 4.0]])

    def f(x):
        calls.append(1)
        return w @ x

    x = t([1.0, 1.0])
    np.testing.assert_allclose(AF.jacobian(f, x).numpy(), w.numpy())  # uncached: a key's first call
    assert len(calls) == 1
    np.testing.assert_allclose(AF.jacobian(f, x).numpy(), w.numpy())  # traced and compiled
    traced = len(calls)
    for _ in range(3):
        AF.jacobian(f, x)
    assert len(calls) == traced  # compiled program reused, function not called again
    with tp.no_grad():
        w.mul_(10)  # captured tensor changes in place: the cached program must see it
    np.testing.assert_allclose(AF.jacobian(f, x).numpy(), [[10.0, 20.0], [30.0, 40.0]])
    w2 = t([[0.0, 1.0], [1.0, 0.0]])
    g = lambda x: w2 @ x  # noqa: E731
    np.testing.assert_allclose(AF.jacobian(g, x).numpy(), w2.numpy())
    assert len(calls) == traced


def test_constants_made_inside_do_not_force_retracing():
    calls = []

    def f(x):
        calls.append(1)
        return (x * tp.tensor([1.0, 2.0], dtype=tp.float64)).sum() ** 2

    x = t([1.0, 1.0])
    h1 = AF.hessian(f, x)
    h1 = AF.hessian(f, x)  # the second call compiles the key
    n = len(calls)
    h2 = AF.hessian(f, x)
    assert len(calls) == n and tp.equal(h1, h2)
    np.testing.assert_allclose(h1.numpy(), 2 * np.outer([1.0, 2.0], [1.0, 2.0]))


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = np.random.randn(3, 4)
    x0 = np.random.randn(4)

    def tf(x):
        return tp.nn.functional.softplus(t(a) @ x).sum() if hasattr(tp, "nn") else (t(a) @ x).exp().sum()

    def torch_f(x):
        z = torch.tensor(a) @ x
        return torch.nn.functional.softplus(z).sum() if hasattr(tp, "nn") else z.exp().sum()

    h = AF.hessian(tf, t(x0))
    ht = torch.autograd.functional.hessian(torch_f, torch.tensor(x0))
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-10)
    j = AF.jacobian(lambda x: (t(a) @ x).tanh(), t(x0))
    jt = torch.autograd.functional.jacobian(lambda x: (torch.tensor(a) @ x).tanh(), torch.tensor(x0))
    np.testing.assert_allclose(j.numpy(), jt.numpy(), rtol=1e-10)


def test_rebinding_captured_tensors_or_module_parameters_retraces():
    x = t([1.0, 2.0])
    w = t([[1.0, 0.0]])
    f = lambda x: w @ x  # noqa: E731
    assert tp.equal(AF.jacobian(f, x), w)
    keep_old = w  # noqa: F841  (the old tensor stays alive: identity, not liveness, must decide)
    w = t([[0.0, 3.0]])
    assert tp.equal(AF.jacobian(f, x), w)
    nn = pytest.importorskip("tapeflow.nn")
    lin = nn.Linear(2, 2).double()
    assert tp.equal(AF.jacobian(lin, x), lin.weight.detach())
    old_weight = lin.weight  # noqa: F841
    lin.weight = nn.Parameter(t([[1.0, 2.0], [3.0, 4.0]]))
    assert tp.equal(AF.jacobian(lin, x), lin.weight.detach())


def test_inplace_write_to_captured_state_keeps_eager_semantics():
    buf = t([0.0])

    def f(x):
        buf.add_(1.0)
        return (x * buf).sum()

    jac = AF.jacobian(f, t([1.0, 2.0]))
    assert jac.tolist() == [1.0, 1.0]
    assert buf.tolist() == [1.0]  # concrete, and the write happened once, as in eager code


def test_host_reads_of_captured_state_are_never_baked_into_a_cached_program():
    w = t([1.0, 2.0])
    f = lambda x: (x * tp.tensor(w.numpy())).sum()  # noqa: E731  (reads `w` on the host)
    x = t([1.0, 1.0])
    for _ in range(2):
        assert AF.jacobian(f, x).tolist() == [1.0, 2.0]
    with tp.no_grad():
        w.mul_(10)
    assert AF.jacobian(f, x).tolist() == [10.0, 20.0]


def test_switching_a_module_between_train_and_eval_is_seen():
    nn = pytest.importorskip("tapeflow.nn")
    tp.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5)).double()
    x = tp.ones(8, dtype=tp.float64)
    m.eval()
    j_eval = AF.jacobian(m, x)
    assert tp.equal(AF.jacobian(m, x), j_eval)
    np.testing.assert_allclose(j_eval.numpy(), m[0].weight.detach().numpy())
    m.train()
    j_train = AF.jacobian(m, x)
    rows_zero = (j_train.abs().sum(1) == 0).numpy()
    assert rows_zero.any() and not rows_zero.all()  # dropout is on again: some rows dropped
    kept = ~rows_zero
    np.testing.assert_allclose(j_train.numpy()[kept], 2 * m[0].weight.detach().numpy()[kept])


def test_random_draws_inside_the_function_leave_the_global_key_concrete():
    import jax

    x = t([1.0, 1.0])
    f = lambda x: (x * tp.rand(2, dtype=tp.float64)).sum()  # noqa: E731
    for _ in range(3):
        j = AF.jacobian(f, x)
        assert ((j >= 0) & (j < 1)).all()
    assert not isinstance(tp.rand(1)._data, jax.core.Tracer)
    assert not tp.equal(AF.jacobian(f, x), AF.jacobian(f, x))  # fresh draws on every call


def test_cached_programs_do_not_keep_the_function_alive():
    import gc
    import weakref

    def make():
        c = tp.ones(2, dtype=tp.float64)
        return lambda x: (x * c).sum()

    fn = make()
    ref = weakref.ref(fn)
    x = t([1.0, 2.0])
    for _ in range(2):
        AF.hessian(fn, x)
        AF.jacobian(fn, x)
    del fn
    gc.collect()
    assert ref() is None

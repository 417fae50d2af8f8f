"""Engine semantics: graph structure, accumulation, retain/create graph, grad(), hooks, order."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
from tapeflow.autograd.graph import AccumulateGrad


def t(x, **kw):
    return tp.tensor(x, dtype=tp.float64, **kw)


# -- graph structure ----------------------------------------------------------------------
def test_grad_fn_names_and_next_functions():
    a = t([1.0, 2.0], requires_grad=True)
    b = t([3.0, 4.0])
    c = a * b
    d = c.sum()
    assert d.grad_fn.name() == "SumBackward0"
    assert c.grad_fn.name() == "MulBackward0"
    (mul, nr), = d.grad_fn.next_functions
    assert mul is c.grad_fn and nr == 0
    acc, none = c.grad_fn.next_functions
    assert isinstance(acc[0], AccumulateGrad) and acc[0].variable is a
    assert none == (None, 0)
    assert a.is_leaf and b.is_leaf and not c.is_leaf and a.grad_fn is None


def test_accumulate_grad_node_is_shared_within_a_graph():
    a = t([1.0], requires_grad=True)
    y = a * 2 + a * 3
    accs = {id(n.next_functions[0][0]) for n, _ in y.grad_fn.next_functions}
    assert len(accs) == 1


def test_sequence_numbers_increase():
    a = t([1.0], requires_grad=True)
    b = a.exp()
    c = b.sin()
    assert c.grad_fn._sequence_nr() > b.grad_fn._sequence_nr()


def test_multi_output_edges_and_output_nr():
    x = t([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    v, i = x.max(dim=1)
    assert v.grad_fn.name() == "MaxBackward0" and v.output_nr == 0
    assert i.grad_fn is None and not i.requires_grad
    a, b = x.split(1, dim=0)
    assert a.grad_fn is b.grad_fn and (a.output_nr, b.output_nr) == (0, 1)
    (b * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0], [3, 3]])


def test_node_call_by_hand_reproduces_backward():
    a = t(2.0, requires_grad=True)
    y = a.exp() * a
    ga, gb = y.grad_fn(t(1.0))
    (ge,) = (y.grad_fn.next_functions[0][0](ga),)
    (auto,) = tp.autograd.grad(a.exp() * a, a)
    np.testing.assert_allclose((ge + gb).item(), auto.item())


# -- backward / accumulation --------------------------------------------------------------
def test_gradients_accumulate_and_non_leaf_grad_is_none():
    x = t([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    assert y.grad is None


def test_accumulation_is_in_place():
    x = t([1.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g and g.item() == 5.0


def test_non_scalar_backward_needs_gradient():
    x = t([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(t([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_gradient_shape_mismatch():
    x = t([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(t([1.0, 2.0, 3.0]))


def test_backward_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        t([1.0]).sum().backward()


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        tp.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        tp.arange(3).requires_grad_()


def test_second_backward_raises_freed():
    x = t([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


@pytest.mark.parametrize("adaptive", [True, False])
def test_backward_frees_saved_tensors_while_the_graph_lives(adaptive):
    """As PyTorch, a backward pass without retain_graph drops what the graph saved, even while its output (and
    so its nodes) stay alive; a training loop's steps (the later ones run as one compiled program) alike."""
    import gc
    import weakref

    tp.set_adaptive_eager(adaptive)
    gc.disable()
    try:
        w = tp.tensor([0.5, -1.0, 2.0], requires_grad=True)
        for _ in range(5):
            h = w * 3.0
            y = (h * h).sum()  # mul saves h twice
            saved = weakref.ref(h)
            del h
            assert saved() is not None
            y.backward()
            assert saved() is None, "backward kept a saved tensor alive"
            np.testing.assert_allclose(w.grad.numpy(), 18 * np.array([0.5, -1.0, 2.0]), rtol=1e-6)
            w.grad = None
            with pytest.raises(RuntimeError, match="second time"):
                y.backward()
    finally:
        gc.enable()
        tp.set_adaptive_eager(True)


def test_retain_graph_allows_second_backward():
    x = t([1.0, 2.0], requires_grad=True)
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


def test_nodes_without_saved_tensors_can_run_twice():
    x = t([1.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.item() == 2.0


def test_create_graph_higher_order():
    x = t(1.5, requires_grad=True)
    y = x.sin() * x ** 3
    g = [y]
    for _ in range(4):
        (d,) = tp.autograd.grad(g[-1], x, create_graph=True)
        g.append(d)

    def f(v):
        return jnp.sin(v) * v ** 3
    ref = [f, jax.grad(f), jax.grad(jax.grad(f)), jax.grad(jax.grad(jax.grad(f))),
           jax.grad(jax.grad(jax.grad(jax.grad(f))))]
    for k in range(5):
        np.testing.assert_allclose(g[k].item(), float(ref[k](1.5)), rtol=1e-12)


def test_create_graph_backward_accumulates_with_graph():
    x = t([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_grad_mode_during_backward():
    seen = []
    x = t([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(tp.is_grad_enabled()))
    y.sum().backward()
    y2 = x * 2
    y2.register_hook(lambda g: seen.append(tp.is_grad_enabled()))
    y2.sum().backward(create_graph=True)
    assert seen == [False, True]


# -- autograd.grad ---------------------------------------------------------------------------
def test_grad_of_intermediates():
    A = t([1.0, 2.0], requires_grad=True)
    B = A * 2
    C = B.exp()
    D = C.sum()
    gC, gA = tp.autograd.grad(D, (C, A))
    np.testing.assert_allclose(gC.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(gA.numpy(), 2 * np.exp([2.0, 4.0]))
    assert A.grad is None


def test_grad_allow_unused():
    x = t([1.0], requires_grad=True)
    z = t([2.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        tp.autograd.grad(y, (x, z), retain_graph=True)
    gx, gz = tp.autograd.grad(y, (x, z), allow_unused=True)
    assert gz is None and gx.item() == 2.0


def test_grad_materialize():
    x = t([1.0], requires_grad=True)
    z = t([2.0, 3.0], requires_grad=True)
    _, gz = tp.autograd.grad((x * 2).sum(), (x, z), materialize_grads=True)
    np.testing.assert_allclose(gz.numpy(), [0.0, 0.0])


def test_grad_with_grad_outputs_and_multiple_outputs():
    x = t([1.0, 2.0], requires_grad=True)
    y1, y2 = x * 2, x ** 2
    (g,) = tp.autograd.grad((y1, y2), x, (t([1.0, 1.0]), t([1.0, 0.5])))
    np.testing.assert_allclose(g.numpy(), [2 + 2 * 1.0, 2 + 0.5 * 4.0])


def test_backward_inputs_only_accumulates_into_those():
    x = t([1.0], requires_grad=True)
    w = t([3.0], requires_grad=True)
    h = x * w
    (h * h).sum().backward(inputs=[w, h])
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [2 * 3.0 * 1.0])
    np.testing.assert_allclose(h.grad.numpy(), [6.0])


# -- hooks -----------------------------------------------------------------------------------------
def test_tensor_hooks_on_leaf_and_intermediate_and_remove():
    x = t([1.0, 2.0], requires_grad=True)
    hx = x.register_hook(lambda g: g * 2)
    y = x * 3
    seen = []
    hy = y.register_hook(lambda g: seen.append(g.numpy().copy()))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    np.testing.assert_allclose(seen[0], [1.0, 1.0])
    hx.remove()
    hy.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_retain_grad_sees_hooked_gradient():
    x = t([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    h.register_hook(lambda g: g * 10)
    (h ** 2).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [60.0, 120.0])
    np.testing.assert_allclose(x.grad.numpy(), [180.0, 360.0])


def test_node_pre_and_post_hooks():
    x = t([1.0, 2.0], requires_grad=True)
    y = x.exp()
    calls = []

    def pre(grad_outputs):
        calls.append("pre")
        return (grad_outputs[0] * 2,)

    def post(grad_inputs, grad_outputs):
        calls.append("post")
        np.testing.assert_allclose(grad_outputs[0].numpy(), [2.0, 2.0])
        return (grad_inputs[0] + 1,)

    y.grad_fn.register_prehook(pre)
    h = y.grad_fn.register_hook(post)
    y.sum().backward()
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]) + 1)
    assert callable(h.remove)


def test_ready_queue_runs_newest_first():
    order = []
    x = t([1.0], requires_grad=True)
    a = x * 2
    b = x * 3
    a.grad_fn.register_prehook(lambda g: order.append("a"))
    b.grad_fn.register_prehook(lambda g: order.append("b"))
    (a + b).sum().backward()
    assert order == ["b", "a"]


def test_each_node_runs_once_after_all_contributions():
    x = t([1.0], requires_grad=True)
    y = x.exp()
    runs = []
    y.grad_fn.register_prehook(lambda g: runs.append(g[0].item()))
    (y * 2 + y * 3 + y).sum().backward()
    assert runs == [6.0]


def test_long_chain_no_recursion():
    x = t([1.0], requires_grad=True)
    y = x
    for _ in range(20000):
        y = y + 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_multiple_roots():
    x = t([2.0], requires_grad=True)
    y = x * 3
    z = y * y
    tp.autograd.backward([y.sum(), z.sum()])
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 2 * 6.0 * 3.0])


def test_fused_backward_matches_node_by_node_and_keeps_semantics():
    # The third repetition of one graph structure runs as a single compiled program.
    w = t([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    b = t([0.1, -0.2], requires_grad=True)
    grads = []
    for step in range(4):
        x = t([[1.0 + step, 2.0], [3.0, -1.0]])
        loss = ((x @ w + b).tanh() ** 2).mean() + (w * w).sum() * 0.01
        w.grad = b.grad = None
        loss.backward()
        grads.append((w.grad.numpy().copy(), b.grad.numpy().copy()))
        ref_w, ref_b = tp.autograd.grad(((x @ w + b).tanh() ** 2).mean() + (w * w).sum() * 0.01, (w, b))
        np.testing.assert_allclose(grads[-1][0], ref_w.numpy(), rtol=1e-12)
        np.testing.assert_allclose(grads[-1][1], ref_b.numpy(), rtol=1e-12)
    # accumulation across calls, freed graphs and version checks still hold
    y = (w * 3).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    for _ in range(3):
        z = w.exp()
        s = (z * 2).sum()
        s.backward(retain_graph=True)
        s.backward()
    e = w.exp()
    e2 = (e * e).sum()
    with tp.no_grad():
        e.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e2.backward()


def test_grad_is_grads_batched_gives_jacobian_rows():
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 2
    (jac,) = tp.autograd.grad(y, x, tp.eye(3, dtype=tp.float64), is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))


def test_is_grads_batched_is_one_vmapped_backward_equal_to_a_loop():
    x = t([0.5, -1.0, 2.0, 0.3], requires_grad=True)
    w = t([1.5, 0.5, -2.0, 1.0], requires_grad=True)
    y = (x.sin() * w).cumsum(0) + x.exp()
    v = tp.tensor(np.random.default_rng(0).standard_normal((5, 4)))
    batched = tp.autograd.grad(y, (x, w), v, is_grads_batched=True, retain_graph=True)
    for i in range(5):
        single = tp.autograd.grad(y, (x, w), v[i], retain_graph=True)
        for b, s in zip(batched, single):
            np.testing.assert_allclose(b.numpy()[i], s.numpy(), rtol=1e-12)
    # Without retain_graph the graph is freed, as after any backward.
    tp.autograd.grad(y, (x, w), v, is_grads_batched=True)
    with pytest.raises(RuntimeError, match="second time"):
        tp.autograd.grad(y, (x, w), v[0])


def test_is_grads_batched_explains_a_hook_that_reads_values():
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * float(g.sum().item()))
    with pytest.raises(RuntimeError, match="is_grads_batched=False"):
        tp.autograd.grad(y, x, tp.eye(2, dtype=tp.float64), is_grads_batched=True)


def test_deep_reentrant_backward_does_not_exhaust_the_stack():
    """A backward run from inside a backward (here 300 levels deep) moves to a fresh thread every
    `MAX_NESTED_BACKWARD` levels, as PyTorch's engine does, instead of hitting Python's recursion limit; the
    nested passes see the caller's grad mode and hooks, and the gradients are exact."""
    from tapeflow.autograd import engine

    levels = []

    class Deep(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with tp.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            levels.append(tp.is_grad_enabled())
            if ctx.x < 0:
                return g
            with tp.enable_grad():
                Deep.apply(ctx.x).sum().backward()
            return g * 2

    depth = 300
    assert depth > 4 * engine.MAX_NESTED_BACKWARD
    v = tp.tensor(float(depth), requires_grad=True)
    Deep.apply(v).sum().backward()
    assert v.grad.item() == 2.0 and len(levels) == depth + 1 and not any(levels)

    class Fails(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("from deep inside")

    class Nest(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            ctx.n = n
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            with tp.enable_grad():
                x = tp.ones(1, requires_grad=True)
                (Nest.apply(x, ctx.n - 1) if ctx.n else Fails.apply(x)).sum().backward()
            return g, None

    with pytest.raises(ValueError, match="from deep inside"):  # an error crosses the threads unchanged
        Nest.apply(tp.ones(1, requires_grad=True), 3 * engine.MAX_NESTED_BACKWARD).sum().backward()


def _engine_queries(lib, C):
    """What hooks learn from the engine's queries (`torch._C._will_engine_execute_node`,
    `_current_graph_task_id`) over backward passes of several kinds."""
    seen = []

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def node_of(t):
        return t.clone().grad_fn.next_functions[0][0] if t.grad_fn is None else t.grad_fn

    a, a2 = lib.ones(2, 3, requires_grad=True), lib.ones(2, 3, requires_grad=True)
    b = a * a2
    b2, c = b.cos(), Double.apply(b)
    nodes = [node_of(t) for t in (a, a2, b, b2, c)]
    hook = lambda g: seen.append([C._will_engine_execute_node(n) for n in nodes])  # noqa: E731
    b.register_hook(hook)
    c.register_hook(hook)
    out = c.sum()
    lib.autograd.backward(out, inputs=(a, b), retain_graph=True)
    lib.autograd.backward(out, retain_graph=True)
    try:
        lib.autograd.grad(out, (a,))
    except RuntimeError as e:
        seen.append(str(e))
    for arg in (out.grad_fn, out):
        try:
            C._will_engine_execute_node(arg)
        except RuntimeError as e:
            seen.append(str(e).replace("tapeflow", "torch"))
    ids = []
    t = lib.tensor(1.0, requires_grad=True).clone()
    t.register_hook(lambda g: ids.append(C._current_graph_task_id()))
    for _ in range(3):
        t.backward(retain_graph=True)
    seen.append(([i - ids[0] for i in ids], C._current_graph_task_id()))
    return seen


def test_hooks_query_the_engine_as_in_pytorch():
    torch = pytest.importorskip("torch")
    from tapeflow.torch import _C

    assert _engine_queries(tp, _C) == _engine_queries(torch, torch._C)


@pytest.mark.parametrize("returned", ["int", "tensor", "str"])
def test_a_post_accumulate_grad_hook_that_returns_something_raises_pytorchs_error(returned):
    torch = pytest.importorskip("torch")

    def run(lib):
        value = {"int": 1, "tensor": lib.ones(2), "str": "x"}[returned]
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda p: value)
        with pytest.raises((TypeError, RuntimeError)) as info:
            (a * 2).sum().backward()
        return type(info.value).__name__, str(info.value)

    assert run(tp) == run(torch)

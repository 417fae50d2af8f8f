"""Custom autograd Functions: the seed examples, ctx features, errors, double backward, tracing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
from tapeflow.autograd import Function, once_differentiable


def t(x, **kw):
    return tp.tensor(x, dtype=tp.float64, **kw)


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class GradCoeff(Function):
    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.coeff * grad_output, None


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * (1 - y)


class SplitMul(Function):
    """New-style: forward without ctx, setup_context separately; two tensor inputs and a scalar."""

    @staticmethod
    def forward(x, y, k):
        return x * y * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, k = inputs
        ctx.save_for_backward(x, y)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * ctx.k, g * x * ctx.k, None


# -- the seed examples ------------------------------------------------------------------------
def test_exp_matches_builtin_and_names_node():
    x = t([0.5, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert "grad_fn=<ExpBackward>" in repr(y)
    saved = y.grad_fn.saved_tensors[0]  # a saved output comes back as a new tensor with the node as history
    assert saved is not y and saved.grad_fn is y.grad_fn and saved._version == y._version
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]))


def test_grad_coeff_scales_gradient():
    x = t([1.0, 2.0], requires_grad=True)
    y = GradCoeff.apply(x, -0.5)
    assert y is not x and y.grad_fn.name() == "GradCoeffBackward" and y.grad_fn.coeff == -0.5
    (y * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.5, -1.5])


def test_sigmoid_matches_builtin():
    x = t([-1.0, 0.0, 2.0], requires_grad=True)
    Sigmoid.apply(x).sum().backward()
    s = 1 / (1 + np.exp(-np.array([-1.0, 0.0, 2.0])))
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s))


def test_next_functions_and_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, n):
            seen["needs"] = ctx.needs_input_grad
            return a * b * n

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    a, b = t([1.0], requires_grad=True), t([2.0])
    y = Probe.apply(a, b, 3)
    assert seen["needs"] == (True, False, False)
    (acc, _), none_b = y.grad_fn.next_functions  # (as PyTorch's: an edge per tensor argument, none for `n`)
    assert acc.variable is a and none_b == (None, 0)


def test_setup_context_style_and_double_backward():
    x, y = t([2.0], requires_grad=True), t([3.0], requires_grad=True)
    out = SplitMul.apply(x, y, 2.0)
    (gx,) = tp.autograd.grad(out.sum(), x, create_graph=True)
    assert gx.item() == 6.0
    (gxy,) = tp.autograd.grad(gx.sum(), y)
    assert gxy.item() == 2.0


def test_exp_double_backward_through_saved_output():
    x = t([1.0], requires_grad=True)
    (g,) = tp.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = tp.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([1.0]))


def test_apply_without_grad_records_nothing():
    x = t([1.0])
    y = Exp.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    with tp.no_grad():
        assert Exp.apply(t([1.0], requires_grad=True)).grad_fn is None


def test_non_tensor_outputs_pass_through_and_none_gradients():
    class WithInfo(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, "info", 7

        @staticmethod
        def backward(ctx, g, g_info, g_int):
            assert g_info is None and g_int is None
            return g * 2

    x = t([1.0], requires_grad=True)
    y, info, n = WithInfo.apply(x)
    assert (info, n) == ("info", 7)
    y.sum().backward()
    assert x.grad.item() == 2.0


def test_materialize_grads_and_non_differentiable():
    calls = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            idx = (x > 0).to(tp.float64)
            ctx.mark_non_differentiable(idx)
            return x * 1.0, x * 2.0, idx

        @staticmethod
        def backward(ctx, g1, g2, gidx):
            calls.append((g1, g2, gidx))
            g2 = 0 if g2 is None else g2
            return g1 * 1.0 + g2 * 2.0, None

    x = t([1.0, -1.0], requires_grad=True)
    a, b, idx = Two.apply(x, True)
    assert not idx.requires_grad and idx.grad_fn is None
    a.sum().backward()
    assert calls[-1][1] is not None and np.all(calls[-1][1].numpy() == 0)
    a, b, idx = Two.apply(x, False)
    a.sum().backward()
    assert calls[-1][1] is None


def test_mark_dirty_inplace_forward():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = t([1.0, 2.0], requires_grad=True)
    b = a * 3
    out = AddOneInplace.apply(b)
    assert out is b and b.grad_fn.name() == "AddOneInplaceBackward"
    np.testing.assert_allclose(b.detach().numpy(), [4.0, 7.0])
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        AddOneInplace.apply(t([1.0], requires_grad=True))


def test_input_returned_as_is_gets_new_history():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = t([1.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.grad_fn is None and y.grad_fn.name() == "IdentityBackward"
    y.backward(t([1.0]))
    assert x.grad.item() == 5.0


def test_broadcast_gradient_is_summed_and_dtype_cast():
    class Bcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g * tp.ones(2, 3, dtype=tp.float32)  # broadcast shape and a narrower dtype

    x = t([[1.0, 2.0, 3.0]], requires_grad=True)
    Bcast.apply(x).backward()
    assert x.grad.shape == (1, 3) and x.grad.dtype == tp.float64
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 2.0, 2.0]])


ERRORS = [
    ("count", "returned an incorrect number of gradients \\(expected 2, got 1\\)"),
    ("shape", "returned an invalid gradient at index 0 - got \\[3\\] but expected shape compatible with \\[2\\]"),
    ("dirty", "marked as dirty"),
    ("no_forward", "must implement the forward function"),
    ("no_backward", "must implement either the backward or vjp"),
    ("save_int", "save_for_backward can only save tensors"),
]


@pytest.mark.parametrize("kind,match", ERRORS)
def test_errors(kind, match):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            if kind == "dirty":
                ctx.mark_dirty(y)
            if kind == "save_int":
                ctx.save_for_backward(3)
            return x * y

        @staticmethod
        def backward(ctx, g):
            if kind == "count":
                return g
            return tp.ones(3, dtype=tp.float64), g

    if kind == "no_forward":
        class Bad(Function):  # noqa: F811
            pass
    if kind == "no_backward":
        class Bad(Function):  # noqa: F811
            @staticmethod
            def forward(ctx, x, y):
                return x * y

    x, y = t([1.0, 2.0], requires_grad=True), t([3.0, 4.0], requires_grad=True)
    with pytest.raises((RuntimeError, TypeError), match=match):
        Bad.apply(x, y).sum().backward()


def test_saved_tensors_after_free_and_version_check():
    x = t([1.0], requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        _ = y.grad_fn.saved_tensors
    x2 = t([1.0], requires_grad=True)
    h = x2 * 1.0

    class SaveInput(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2

    out = SaveInput.apply(h)
    h.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_once_differentiable_blocks_double_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = t([2.0], requires_grad=True)
    (g,) = tp.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.item() == 12.0 and g.grad_fn is None  # gradients that need no grad: nothing to guard
    go = t([1.0], requires_grad=True)
    (g,) = tp.autograd.grad(Cube.apply(x), x, go, create_graph=True)
    assert g.grad_fn.name() == "Error" and g.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked with @once_diff"):
        g.sum().backward()


def test_legacy_call_is_an_error():
    with pytest.raises(RuntimeError, match="static forward"):
        Exp()(t([1.0]))


def test_node_callable_by_hand():
    x = t([1.0, 2.0], requires_grad=True)
    y = Sigmoid.apply(x)
    g = y.grad_fn(t([1.0, 1.0]))
    s = 1 / (1 + np.exp(-np.array([1.0, 2.0])))
    np.testing.assert_allclose(g.numpy(), s * (1 - s))


def test_custom_function_under_jit():
    def step(a):
        x = tp.Tensor._make(a, None, 0, True)
        y = Sigmoid.apply(x) + Exp.apply(x)
        (g,) = tp.autograd.grad(y.sum(), x)
        return g._data

    a = jnp.array([0.0, 1.0])
    expect = jax.grad(lambda v: (jax.nn.sigmoid(v) + jnp.exp(v)).sum())(a)
    np.testing.assert_allclose(jax.jit(step)(a), expect, rtol=1e-12)


def test_gradcheck_style_against_finite_differences():
    x0 = np.array([0.3, -0.7])
    x = t(x0, requires_grad=True)
    SplitMul.apply(x, x, 1.5).sum().backward()
    eps = 1e-6
    fd = [(np.sum(1.5 * (x0 + eps * e) ** 2) - np.sum(1.5 * (x0 - eps * e) ** 2)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6)


def test_hand_written_backward_holds_under_jax_transforms():
    from tapeflow import func
    from tapeflow.autograd import functional as AF

    x = t([1.0, 2.0])
    # The rule scales the gradient on purpose; differentiating forward's ops would give 1.
    np.testing.assert_allclose(func.grad(lambda x: GradCoeff.apply(x, 0.5).sum())(x).numpy(), [0.5, 0.5])
    np.testing.assert_allclose(AF.jacobian(lambda x: GradCoeff.apply(x, 0.5), x).numpy(), 0.5 * np.eye(2))
    g = jax.grad(lambda a: GradCoeff.apply(tp.Tensor._make(a, None, 0, False), -1.0).sum()._data)(jnp.ones(2))
    np.testing.assert_allclose(g, [-1.0, -1.0])
    np.testing.assert_allclose(func.vmap(func.grad(lambda v: GradCoeff.apply(v, 3.0).sum()))(tp.ones(2, 2)).numpy(),
                               np.full((2, 2), 3.0))
    # Second order through a backward written with tapeflow ops, by JAX and by the tape.
    np.testing.assert_allclose(func.jacrev(func.grad(lambda x: Exp.apply(x).sum()))(x).numpy(),
                               np.diag(np.exp([1.0, 2.0])), rtol=1e-12)
    np.testing.assert_allclose(AF.hessian(lambda x: Exp.apply(x).sum(), x).numpy(), np.diag(np.exp([1.0, 2.0])),
                               rtol=1e-12)

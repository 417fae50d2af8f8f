"""The backward graph's edges as PyTorch shows them: `next_functions` and node hooks' `grad_inputs` cover the
inputs PyTorch's node links (no index, mask, condition or target, and no Python number taken by a Scalar
overload such as `x ** 2` or `x.clamp(0, 1)`), hooks returning the wrong number of gradients are refused, and
losses refuse class weights that require grad."""

from __future__ import annotations

import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")

# Expressions over x, y (3 floats, require grad), W (2x2, requires grad), i (an index tensor), m (a mask).
EXPRS = [
    "x ** 2", "x ** 0", "x ** 3.5", "2 ** x", "x ** y", "x * 2", "x + 1", "x - 1", "1 - x", "torch.rsub(x, y)", "x / 2",
    "x.clamp(min=0)", "x.clamp(0, 1)", "x.clip(-0.5, 0.5)", "x.clamp_min(0.5)", "x.clamp_max(0.5)",
    "x.clamp(min=y)", "x.fmod(2)", "x.fmod(y)", "x.remainder(2)", "x.remainder(y)", "x.xlogy(y)", "x.copysign(y)",
    "x.masked_fill(m, 0.0)", "torch.where(m, x, y)", "torch.where(m, x, 0.0)", "torch.where(m, 1.0, y)",
    "x.gather(0, i)", "x.scatter(0, i, y[:2])", "x.scatter_add(0, i, y[:2])", "x.scatter(0, i, 1.5)",
    "x.scatter_reduce(0, i, y[:2], 'amax')", "x.index_select(0, i)", "x.index_add(0, i, y[:2])",
    "x.index_copy(0, i, y[:2])", "x.index_fill(0, i, 1.5)", "x.masked_scatter(m, y)", "x.take(i)",
    "x.index_put((i,), y[:2])", "x[i]", "x[m]",
    "torch.nn.functional.embedding(i % 2, W)", "torch.nn.functional.nll_loss(W, i % 2)",
    "torch.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid())", "x.lerp(y, 0.5)", "x.mul(y)",
    "torch.addcmul(x, x, y, value=2)", "x.sum()", "torch.cat([x, y])", "torch.stack([x, y])",
]


def _edges(lib, expr):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = lib.tensor([1.5, 2.0, 0.25], requires_grad=True)
    W = lib.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
    env = {"x": x, "y": y, "W": W, "i": lib.tensor([0, 2]), "m": lib.tensor([True, False, True]), "torch": lib}
    fn = eval(expr, env).grad_fn
    return fn.name(), [None if n is None else type(n).__name__ for n, _ in fn.next_functions]


@pytest.mark.parametrize("expr", EXPRS + [
    "x.masked_fill(m, torch.tensor(2.0))", "x.index_fill(0, i, torch.tensor(1.5))", "x.copysign(-1.0)",
    "x.xlogy(2)", "torch.xlogy(2.0, y)", "torch.xlogy(3, y)", "torch.xlogy(True, y)", "torch.special.xlog1py(2.0, y)",
    "torch.special.xlog1py(x, 2.0)", "torch.special.xlog1py(x, y)", "torch.masked_select(x, m)",
    "torch.masked_select(x, m.reshape(3, 1))", "torch.masked_select(W, m[:2])", "torch.roll(x, 1)",
    "torch.roll(W, -3)", "torch.roll(W, (1,))", "torch.roll(W, 1, 0)", "x.clamp_min(y)", "torch.clamp_max(x, y)",
    "torch.clamp_min(x, y[:1])", "x.clamp_max(torch.tensor(0.5))", "x.clamp(max=y)", "torch.ldexp(x, y)",
    "torch.ldexp(x, torch.tensor([1, 2, 3]))", "torch.special.zeta(x + 2, y)", "torch.special.zeta(2.0, y)",
    "torch.special.zeta(x + 2, 2.5)", "x.nansum()", "x.var(correction=0)", "torch.nn.functional.linear(W, x[:2])"])
def test_next_functions_and_node_names_as_pytorch(expr):
    """The node's name (PyTorch's overload: `FmodBackward0` for a number, `FmodBackward1` for a tensor) and
    its edges."""
    assert _edges(tp, expr) == _edges(torch, expr)


@pytest.mark.parametrize("expr", ["x ** 2.5", "x.clamp(0, 1)", "x.masked_fill(m, 0.0)", "x.index_select(0, i)",
                                  "torch.where(m, x, y)", "x.scatter(0, i, y[:2])", "x * y", "1 - x"])
def test_node_hooks_see_pytorchs_gradients_and_may_replace_them(expr):
    seen = []
    for lib in (torch, tp):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = lib.tensor([1.5, 2.0, 0.25], requires_grad=True)
        env = {"x": x, "y": y, "i": lib.tensor([0, 2]), "m": lib.tensor([True, False, True]), "torch": lib}
        out = eval(expr, env)
        shapes = []

        def hook(grad_inputs, grad_outputs, shapes=shapes):
            shapes.append([None if g is None else tuple(g.shape) for g in grad_inputs])
            return tuple(None if g is None else g * 10 for g in grad_inputs)

        out.grad_fn.register_hook(hook)
        out.sum().backward()
        seen.append((shapes, [None if t.grad is None else t.grad.tolist() for t in (x, y)]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("returned", [1, 3])
def test_a_hook_returning_the_wrong_number_of_gradients_is_refused(returned):
    messages = []
    for lib in (torch, tp):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = x * x  # two inputs: a hook must return two gradients

        def hook(grad_inputs, grad_outputs):
            return (grad_inputs[0],) * returned

        out.grad_fn.register_hook(hook)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        messages.append(str(e.value))
    assert messages[0] == messages[1] == f"hook 'hook' has returned an incorrect number of values (got {returned}, " \
                                         "but expected 2)"


def test_custom_function_links_its_tensor_arguments_only():
    got = []
    for lib in (torch, tp):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                return a * k + b

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, g

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([0.5, 0.5])
        out = Scale.apply(x, 3.0, b)
        edges = [None if n is None else type(n).__name__ for n, _ in out.grad_fn.next_functions]
        out.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g + 1 for g in gi))
        out.sum().backward()
        got.append((edges, x.grad.tolist()))
    assert got[0] == got[1] == (["AccumulateGrad", None], [3.0, 3.0])


LOSSES = {
    "nll_loss": lambda F, x, t, w: F.nll_loss(x.log_softmax(1), t, weight=w),
    "cross_entropy": lambda F, x, t, w: F.cross_entropy(x, t, weight=w),
    "binary_cross_entropy": lambda F, x, t, w: F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid(), weight=w),
    "bce_with_logits weight": lambda F, x, t, w: F.binary_cross_entropy_with_logits(x, x.detach().sigmoid(), weight=w),
    "bce_with_logits pos_weight": lambda F, x, t, w: F.binary_cross_entropy_with_logits(x, x.detach().sigmoid(),
                                                                                        pos_weight=w),
    "multi_margin_loss": lambda F, x, t, w: F.multi_margin_loss(x, t, weight=w),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_refuse_weights_that_require_grad(name):
    results = []
    for lib in (torch, tp):
        x = lib.tensor([[0.2, -1.0, 0.5], [1.5, 0.1, -0.3]], requires_grad=True)
        t = lib.tensor([2, 0])
        w = lib.tensor([0.2, 0.3, 0.5], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            LOSSES[name](lib.nn.functional, x, t, w)
        with lib.no_grad():  # (without grad mode the weight is an ordinary input)
            value = LOSSES[name](lib.nn.functional, x, t, w).item()
        plain = LOSSES[name](lib.nn.functional, x, t, w.detach())
        plain.backward()
        results.append((str(e.value), round(value, 5), x.grad.numpy().round(5).tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((4, 1), (3,)),
                                    ((2, 3), (2, 3)), ((), (2,)), ((0, 3), (3,))])
def test_masked_select_broadcasts_both_arguments_as_pytorch(shapes):
    """`masked_select` broadcasts the input and the mask together (one `MaskedSelectBackward0` node; the
    gradient of a broadcast input sums over the copies)."""
    import numpy as np

    rng = np.random.default_rng(len(str(shapes)))
    xs, ms = shapes
    xv, mv = rng.normal(size=xs), rng.random(ms) > 0.4
    got = []
    for lib in (torch, tp):
        x = lib.tensor(xv, requires_grad=True)
        out = lib.masked_select(x, lib.tensor(mv))
        (out * lib.arange(out.numel(), dtype=out.dtype)).sum().backward()
        got.append((out.tolist(), x.grad.tolist(), out.grad_fn.name()))
    assert got[0] == got[1]


@pytest.mark.parametrize("shapes", [((3,), (2,)), ((3, 4), (2, 4)), ((2, 3, 4), (5, 4)), ((5, 6), (2, 3, 4))])
def test_masked_select_refuses_shapes_that_do_not_broadcast_with_pytorchs_message(shapes):
    messages = []
    for lib in (torch, tp):
        with pytest.raises(RuntimeError) as e:
            lib.masked_select(lib.ones(shapes[0]), lib.ones(shapes[1]) > 0)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_roll_without_dims_as_pytorch():
    for shifts in (1, -4, 7, (2,)):
        got = []
        for lib in (torch, tp):
            x = lib.arange(6.0).reshape(2, 3).requires_grad_()
            out = lib.roll(x, shifts)
            out.backward(lib.arange(6.0).reshape(2, 3) ** 2)
            got.append((out.tolist(), x.grad.tolist()))
        assert got[0] == got[1]
    messages = []
    for lib in (torch, tp):
        with pytest.raises(RuntimeError) as e:
            lib.roll(lib.arange(4.0), (1, 2))
        messages.append(str(e.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("fn", ["clamp_min", "clamp_max"])
def test_one_sided_clamps_by_a_tensor_as_pytorch(fn):
    """`clamp_min(x, t)` / `clamp_max(x, t)`: values, dtypes and both gradients, ties included (the input's
    gradient passes at the bound, the bound's where it clamps)."""
    got = []
    for lib in (torch, tp):
        x = lib.tensor([0.5, -1.0, 2.0, 0.3, 1.0], requires_grad=True)
        t = lib.tensor([0.3, 0.0, 3.0, 0.3, 1.0], requires_grad=True)
        out = getattr(lib, fn)(x, t)
        (out * lib.arange(1.0, 6.0)).sum().backward()
        ints = getattr(lib, fn)(lib.tensor([1, 5]), lib.tensor([2.0, 3.0], dtype=lib.float64))
        got.append((out.tolist(), x.grad.tolist(), t.grad.tolist(), ints.tolist(), str(ints.dtype).split(".")[-1]))
    assert got[0] == got[1]

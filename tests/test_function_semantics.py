"""Custom Functions against PyTorch: in-place Functions (`mark_dirty`) on tensors and views, forward-mode AD
through `jvp` with its view and in-place checks, saved tensors (outputs, `save_for_forward`,
`clear_saved_tensors_on_access`, hooks) and `once_differentiable`. Each scenario runs on tapeflow and, when
installed, on PyTorch; the observations (values, gradients, error classes and first sentences) must agree."""

import re
import warnings
import weakref

import numpy as np
import pytest

import tapeflow as tp


def _vals(t):
    return None if t is None else np.round(np.asarray(t.detach().tolist(), dtype=np.float64), 5).tolist()


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        first = re.split(r"\.(?:\s|(?=[A-Z][a-z])|$)", " ".join(str(e).split()))[0]
        return type(e).__name__, first.replace("SplitWithSizes", "Split")
    return None


def _dirty_fn(m, op):
    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            op(x)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    return Dirty


def inplace_functions(m):
    out = []
    Dirty = _dirty_fn(m, lambda x: x.mul_(3))
    a = m.tensor([1.0, 2.0], requires_grad=True)
    x = a.clone()
    y = Dirty.apply(x)
    out += [y is x, x._version, _vals(x), type(x.grad_fn).__name__]
    (y * y).sum().backward()
    out.append(_vals(a.grad))
    # A view input: the base takes the change into its history, the view keeps being the same object.
    a.grad = None
    base = a.clone()
    v = base[:1]
    y = Dirty.apply(v)
    out += [y is v, _vals(base), base.grad_fn is not None, v._version]
    base.sum().backward()
    out.append(_vals(a.grad))
    # Without anything requiring grad: the same object, no history, the version still bumped.
    x = m.ones(2)
    y = Dirty.apply(x)
    out += [y is x, y.requires_grad, y.grad_fn is None, x._version]
    b, c = a.clone().split_with_sizes([1, 1], dim=0)
    out += [_error(lambda: Dirty.apply(a)), _error(lambda: Dirty.apply(a.view_as(a))), _error(lambda: Dirty.apply(b))]

    class NotAnInput(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, view):
            out = x.clone().view_as(x) if view else 3 * x
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return 3 * g, None

    out.append(_error(lambda: NotAnInput.apply(a.clone(), True)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = NotAnInput.apply(a.clone(), False)
    out += [[str(w.message).split(". ")[0] for w in caught], y.grad_fn is not None]

    class TwoOutputs(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, keep):
            x.add_(1)
            ctx.mark_dirty(x)
            return (x, x * 2) if keep else (x.clone(), x * 2)

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2, None

    x = a.clone()
    p, q = TwoOutputs.apply(x, True)
    (p * q).sum().backward()
    out += [p is x, _vals(a.grad)]
    out += [_error(lambda: TwoOutputs.apply(a.clone().view_as(a), True)),
            _error(lambda: TwoOutputs.apply(a.clone(), False))]
    return out


def forward_mode_functions(m):
    fwd = m.autograd.forward_ad
    out = []
    seen = []

    class Mul(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x, y)
            return x * y * k, k

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            seen.append([_vals(tx), _vals(ty), tk])
            return (tx * y + x * ty) * 2, None

    class NoMaterialize(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            return x * y

        @staticmethod
        def jvp(ctx, tx, ty):
            seen.append([_vals(tx), ty])
            return tx

    class Outputs(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, mode):
            ctx.mode = mode
            n = x.clone()
            ctx.mark_non_differentiable(n)
            return x, x.narrow(0, 0, 1), n

        @staticmethod
        def jvp(ctx, tx, _):
            mode = ctx.mode
            as_is = tx.view_as(tx) if mode != "as_is_copy" else tx * 1
            narrow = tx.narrow(0, 0, 1) if mode != "narrow_copy" else tx.narrow(0, 0, 1).clone()
            if mode == "narrow_other_base":
                narrow = narrow.clone().view_as(narrow)
            nondiff = tx.clone() if mode == "nondiff" else None
            return (as_is, narrow, nondiff) if mode != "count" else (as_is, narrow)

    class Inplace(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, mode):
            ctx.mode = mode
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def jvp(ctx, tx, _):
            if ctx.mode == "out_of_place":
                return tx * 2
            if ctx.mode == "copy":
                return tx.clone().mul_(2)
            return tx.mul_(2)

    class NoJvp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = m.tensor([1.0, 2.0])
    with fwd.dual_level():
        d = fwd.make_dual(x, m.tensor([1.0, 1.0]))
        r, k = Mul.apply(d, m.tensor([3.0, 4.0]), 2)
        out += [_vals(fwd.unpack_dual(r).tangent), k]
        r = NoMaterialize.apply(d, m.tensor([3.0, 4.0]))
        out.append(_vals(fwd.unpack_dual(r).tangent))
        tangent = m.tensor([5.0, 6.0])
        d = fwd.make_dual(x, tangent)
        same, narrow, nondiff = Outputs.apply(d, "ok")
        t_same, t_narrow = fwd.unpack_dual(same).tangent, fwd.unpack_dual(narrow).tangent
        out += [t_same._base is tangent, t_narrow._base is tangent, _vals(t_narrow), fwd.unpack_dual(nondiff).tangent]
        for mode in ("as_is_copy", "narrow_copy", "narrow_other_base", "nondiff", "count"):
            out.append(_error(lambda mode=mode: Outputs.apply(d, mode)))
        for mode in ("in_place", "out_of_place", "copy"):
            t_in = m.tensor([1.0, 1.0])
            d = fwd.make_dual(x.clone(), t_in)
            out.append(_error(lambda d=d, mode=mode: Inplace.apply(d, mode)))
            if mode == "in_place":
                out += [fwd.unpack_dual(d).tangent is t_in, _vals(t_in), _vals(d)]
        out.append(_error(lambda: NoJvp.apply(fwd.make_dual(x, x))))
        dual = fwd.make_dual(x, m.ones(2))
        out.append(_error(lambda: fwd.make_dual(m.ones(2), dual))[1].split(" at the same level")[0])
    return [out, seen]


def saved_tensor_details(m):
    out = []

    class Exp(m.autograd.Function):
        clear_saved_tensors_on_access = False

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(x, y, None)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y, _ = ctx.saved_tensors
            return g * y

    class ExpOnce(Exp):
        clear_saved_tensors_on_access = True

    a = m.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(a)
    x_saved, y_saved, none = y.grad_fn.saved_tensors
    out += [x_saved is a, y_saved is y, y_saved.grad_fn is y.grad_fn, none]
    raw = y.grad_fn._raw_saved_tensors
    out += [_error(lambda: raw[0].register_hooks(lambda t: t)), _error(lambda: raw[2].register_hooks(id, id))]
    y = ExpOnce.apply(a)
    first = y.grad_fn.saved_tensors
    out += [len(first), _error(lambda: y.grad_fn.saved_tensors)]

    class Both(Exp):
        @staticmethod
        def vjp(ctx, g):
            return g

    out.append(_error(lambda: Both.apply(a).sum().backward()))

    class SavesItsOutput(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    def scope():
        x = m.tensor(1.0, requires_grad=True).clone().view_as(m.tensor(1.0))
        SavesItsOutput.apply(x)
        return weakref.ref(x)

    out.append(scope()() is None)  # no reference cycle keeps the output (or its node) alive
    return out


def once_differentiable_results(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            return x ** 3 * k

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g, None

    x = m.tensor([2.0], requires_grad=True)
    (g,) = m.autograd.grad(Cube.apply(x, 1.0).sum(), x, create_graph=True)
    out = [_vals(g), g.grad_fn]
    go = m.tensor([1.0], requires_grad=True)
    (g,) = m.autograd.grad(Cube.apply(x, 1.0), x, go, create_graph=True)
    node = g.grad_fn
    out += [type(node).__name__, [type(f).__name__ if f is not None else None for f, _ in node.next_functions]]
    out.append(_error(lambda: g.sum().backward()))
    return out


SCENARIOS = [inplace_functions, forward_mode_functions, saved_tensor_details, once_differentiable_results]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_matches_pytorch(scenario):
    got = scenario(tp)
    torch = pytest.importorskip("torch")
    assert got == scenario(torch)


@pytest.mark.parametrize("materialize", [True, False])
def test_an_undefined_gradient_reaches_a_function_as_zeros_or_none(materialize):
    """`torch._C._functions.UndefinedGrad` (used by PyTorch's own autograd tests) feeds no gradient backwards: a
    custom Function then sees zeros, or None when it turned materialization off."""
    from tapeflow.torch import _C

    seen = []

    class Through(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen.append(None if grad is None else grad.tolist())
            return grad

    x = tp.ones(2, requires_grad=True)
    out = _C._functions.UndefinedGrad()(Through.apply(x))
    assert type(out.grad_fn).__name__ == "UndefinedGradBackward"
    out.sum().backward()
    assert seen == [[0.0, 0.0] if materialize else None]
    assert x.grad is None if not materialize else x.grad.tolist() == [0.0, 0.0]


def test_torch_c_functions_names_the_leaf_node_class():
    from tapeflow.torch import _C

    x = tp.ones(2, requires_grad=True)
    first = (x + 1).grad_fn.next_functions[0][0]
    assert isinstance(first, _C._functions.AccumulateGrad) and first.variable is x

"""gradcheck / gradgradcheck."""

import sys
import warnings

import numpy as np
import pytest

import tapeflow as tp
from tapeflow.autograd.gradcheck import GradcheckError


def sigmoid(x):
    return 1 / (1 + tp.exp(-x))


def bad_square(x):
    # forward x*x but the tape sees x*x.detach(): the gradient misses half the product rule
    return x * x.detach()


@pytest.mark.parametrize("dtype, eps, ok", [
    (tp.float32, 1e-3, True),
    (tp.float32, 1e-6, False),
    (tp.float64, 1e-4, True),
    (tp.float64, 1e-6, True),
])
def test_sigmoid_precision(dtype, eps, ok):
    x = tp.randn(4, dtype=dtype, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tp.autograd.gradcheck(sigmoid, (x,), eps=eps, raise_exception=False) is ok


def test_float32_warning():
    x = tp.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        tp.autograd.gradcheck(sigmoid, (x,), eps=1e-3)


def test_mismatch_message():
    x = tp.randn(3, dtype=tp.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"):
        tp.autograd.gradcheck(bad_square, (x,))
    assert issubclass(tp.autograd.GradcheckError, RuntimeError)
    assert tp.autograd.gradcheck.GradcheckError is GradcheckError
    assert tp.autograd.gradcheck(bad_square, (x,), raise_exception=False) is False
    assert tp.autograd.gradcheck(bad_square, (x,), fast_mode=True, raise_exception=False) is False


@pytest.mark.parametrize("check", [tp.autograd.gradcheck, tp.autograd.gradgradcheck])
def test_no_input_requires_grad(check):
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        check(sigmoid, (tp.randn(2, dtype=tp.float64),))
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        check(sigmoid, tp.randn(2, dtype=tp.float64))  # a single tensor is taken as a 1-tuple


def test_multiple_inputs_outputs_and_non_tensor_args():
    a = tp.randn(2, 3, dtype=tp.float64, requires_grad=True)
    b = tp.randn(3, 2, dtype=tp.float64, requires_grad=True)
    c = tp.randn(2, dtype=tp.float64)  # not checked

    def f(a, b, c, scale):
        return (a @ b) * scale + c, (a * a).sum(1)

    assert tp.autograd.gradcheck(f, (a, b, c, 2.0))
    assert tp.autograd.gradcheck(f, (a, b, c, 2.0), fast_mode=True)


def test_untraceable_function_falls_back():
    x = tp.randn(3, dtype=tp.float64, requires_grad=True)

    def f(t):
        return t * t * float(t.sum().item() > -1e9)

    assert tp.autograd.gradcheck(f, (x,))


def test_gradgradcheck():
    x = tp.randn(3, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradgradcheck(lambda t: sigmoid(t) * t, (x,))
    y = tp.randn(2, 2, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradgradcheck(lambda t: (t @ t).sum(), (y,))


class Sigmoid(tp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + tp.exp(-x))
        ctx.save_for_backward(y)
        ctx.save_for_forward(y)  # (a jvp sees only what save_for_forward kept, as in PyTorch)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * (1 - y)


class WrongSigmoid(Sigmoid):
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_custom_function():
    x = tp.randn(4, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(Sigmoid.apply, (x,), eps=1e-6)
    assert tp.autograd.gradcheck(WrongSigmoid.apply, (x,), raise_exception=False) is False


# -- optional checks: forward mode, undefined output gradients, batched gradients, gradient dtypes ----------------

class SigmoidJvp(Sigmoid):
    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return t * y * (1 - y)


class WrongJvp(Sigmoid):
    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return t * y


class HostReadJvp(SigmoidJvp):
    @staticmethod
    def jvp(ctx, t):
        # reads the tangent on the host: fine one tangent at a time, impossible on a traced batch
        (y,) = ctx.saved_tensors
        scale = float(t.abs().max())
        return t * y * (1 - y) * (scale / scale if scale else 1.0)


def x64(n=3):
    return tp.randn(n, dtype=tp.float64, requires_grad=True)


def test_forward_ad_passes_on_ops_and_functions():
    x, y = x64(), x64()
    assert tp.autograd.gradcheck(lambda a, b: (sigmoid(a) * b, (a * b).sum()), (x, y), check_forward_ad=True,
                                 check_batched_forward_grad=True)
    assert tp.autograd.gradcheck(SigmoidJvp.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)
    with pytest.raises(NotImplementedError, match="must implement the jvp function"):  # as PyTorch
        tp.autograd.gradcheck(Sigmoid.apply, (x,), check_forward_ad=True)
    assert tp.autograd.gradcheck(SigmoidJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    assert tp.autograd.gradcheck(SigmoidJvp.apply, (x,), check_forward_ad=True, fast_mode=True)


def test_forward_ad_catches_wrong_jvp():
    x = x64()
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch for output 0 with "
                                             "respect to input 0"):
        tp.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert tp.autograd.gradcheck(WrongJvp.apply, (x,)), "forward mode is not checked by default"
    assert not tp.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, fast_mode=True,
                                     raise_exception=False)
    assert not tp.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False,
                                     raise_exception=False)


def test_batched_forward_grad_catches_host_reads_in_jvp():
    x = x64()
    assert tp.autograd.gradcheck(HostReadJvp.apply, (x,), check_forward_ad=True)
    with pytest.raises(GradcheckError, match="(?s)batched forward gradients .* failed: .*check_batched_forward_grad=False"):
        tp.autograd.gradcheck(HostReadJvp.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)


def test_option_combinations():
    x = x64()
    with pytest.raises(AssertionError, match="Expected at least one of check_forward_ad or check_backward_ad"):
        tp.autograd.gradcheck(sigmoid, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_backward_ad"):
        tp.autograd.gradcheck(sigmoid, (x,), check_forward_ad=True, check_backward_ad=False, check_batched_grad=True)
    with pytest.raises(AssertionError, match="check_batched_forward_grad=True requires check_forward_ad"):
        tp.autograd.gradcheck(sigmoid, (x,), check_batched_forward_grad=True)
    for masked in (None, False, True):  # no sparse or masked layouts: accepted, no effect
        assert tp.autograd.gradcheck(sigmoid, (x,), masked=masked)


class NoMaterialize(Sigmoid):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return Sigmoid.forward(ctx, x)


class NoneUnsafe(NoMaterialize):
    pass  # Sigmoid.backward computes g * y * (1 - y): fails when g is None


class NoneSafe(NoMaterialize):
    @staticmethod
    def backward(ctx, g):
        if g is None:
            return None
        (y,) = ctx.saved_tensors
        return g * y * (1 - y)


class NormalisedGrad(Sigmoid):
    @staticmethod
    def backward(ctx, g):
        # rescales the incoming gradient by its norm and back: 0 / 0 gives NaN for a zero gradient
        (y,) = ctx.saved_tensors
        n = (g * g).sum().sqrt()
        return (g / n) * n * y * (1 - y)


class TwoOutputs(tp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        parts = [g * c for g, c in ((g1, 2), (g2, 3)) if g is not None]
        if not parts:
            return None
        total = sum(parts)
        n = (total * total).sum().sqrt()
        return total / n * n  # NaN when the defined gradient is zero


def test_undefined_grad():
    x = x64()
    with pytest.raises(GradcheckError, match="Backward failed with every output gradient undefined: RuntimeError: mul failed"):
        tp.autograd.gradcheck(NoneUnsafe.apply, (x,))
    assert tp.autograd.gradcheck(NoneUnsafe.apply, (x,), check_undefined_grad=False)
    # PyTorch's warning and wording lead (a GradcheckError is a RuntimeError)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking"), \
            pytest.raises(RuntimeError, match="^Expected backward function to handle undefined output grads"):
        tp.autograd.gradcheck(NoneUnsafe.apply, (x,))
    assert tp.autograd.gradcheck(NoneSafe.apply, (x,))
    # Zero output gradients in, NaN out: PyTorch's zero-gradient check (before the undefined-gradient one).
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        tp.autograd.gradcheck(NormalisedGrad.apply, (x,))
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        tp.autograd.gradcheck(TwoOutputs.apply, (x,))
    # built-in ops, several outputs, an input returned as is
    assert tp.autograd.gradcheck(lambda t: (sigmoid(t), t * t, t), (x,))


def test_batched_grad(monkeypatch):
    backward_mod = sys.modules["tapeflow.autograd.backward"]  # the package attribute is the function
    x, y = x64(), x64()
    f = lambda a, b: (sigmoid(a) * b, (a * b).sum())  # noqa: E731
    assert tp.autograd.gradcheck(f, (x, y), check_batched_grad=True)
    assert tp.autograd.gradcheck(Sigmoid.apply, (x,), check_batched_grad=True)
    with pytest.raises(AssertionError):
        tp.autograd.gradcheck(f, (x, y), check_batched_grad=True, check_backward_ad=False)

    # tapeflow computes batched gradients slice by slice, so no Function can make them differ from the
    # one-at-a-time results today; stand in a faulty batched path to see the check catch one.
    real = backward_mod._grad_batched

    def off_by_a_bit(*args):
        return tuple(None if g is None else g * 1.01 for g in real(*args))

    monkeypatch.setattr(backward_mod, "_grad_batched", off_by_a_bit)
    with pytest.raises(GradcheckError, match="Batched gradient mismatch for output 0 with respect to input 0"):
        tp.autograd.gradcheck(Sigmoid.apply, (x,), check_batched_grad=True)
    assert tp.autograd.gradcheck(Sigmoid.apply, (x,)), "batched gradients are not checked by default"

    def fails(*args):
        raise RuntimeError("cannot batch this backward")

    monkeypatch.setattr(backward_mod, "_grad_batched", fails)
    with pytest.raises(GradcheckError, match="batched gradients .* failed: RuntimeError: cannot batch"):
        tp.autograd.gradcheck(Sigmoid.apply, (x,), check_batched_grad=True)


def test_grad_dtypes():
    x = x64()
    assert tp.autograd.gradcheck(sigmoid, (x,), check_grad_dtypes=True)
    h = x.register_hook(lambda g: g.to(tp.float32))  # a hook returning the gradient in the wrong dtype
    try:
        assert tp.autograd.gradcheck(sigmoid, (x,)), "values still agree; the dtype is not checked by default"
        with pytest.raises(GradcheckError, match="Gradient has dtype mismatch: the gradient of input 0 is "
                                                 "tapeflow.float32 but the input is tapeflow.float64"):
            tp.autograd.gradcheck(sigmoid, (x,), check_grad_dtypes=True)
    finally:
        h.remove()


def test_gradgradcheck_options():
    x, y = x64(), x64()
    f = lambda a, b: (a.sin() * b, (a * b).sum() ** 2)  # noqa: E731
    assert tp.autograd.gradgradcheck(f, (x, y), check_fwd_over_rev=True, check_batched_grad=True,
                                     check_grad_dtypes=True)
    assert tp.autograd.gradgradcheck(f, (x, y), check_fwd_over_rev=True, check_rev_over_rev=False)
    assert not tp.autograd.gradgradcheck(lambda t: bad_square(t) * t, (x,), raise_exception=False)


def test_fwd_over_rev_through_saved_outputs():
    # exp, tanh and sigmoid reuse their output in backward; its tangent must reach that reuse.
    for fn in (lambda t: t.exp(), lambda t: t.tanh(), lambda t: t.sigmoid()):
        assert tp.autograd.gradgradcheck(fn, (x64(),), check_fwd_over_rev=True)


def _deprecated_jacobians(m, get_numerical_jacobian, get_analytical_jacobian):
    import warnings

    m.manual_seed(0)
    a = m.rand(2, 2, requires_grad=True, dtype=m.float64)
    b = m.rand(2, 2, requires_grad=True, dtype=m.float64)

    def fn(inputs):
        x, y = inputs
        return 2 * x + y, x + 2 * y

    got = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        num_a = get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6)
        num = get_numerical_jacobian(fn, (a, b), eps=1e-6)
        got.append([len(num_a), len(num)] + [np.round(np.array(j.tolist()), 6).tolist() for j in (*num_a, *num)])
        jac, reentrant, sizes_ok, types_ok = get_analytical_jacobian((a, b), fn((a, b))[1])
        got.append([j.tolist() for j in jac] + [str(jac[0].dtype).split(".")[-1], reentrant, sizes_ok, types_ok])
        for call in (lambda: get_numerical_jacobian(fn, (a, b), grad_out=2.0),
                     lambda: get_analytical_jacobian((a,), fn((a, b))[0], grad_out=2.0)):
            try:
                call()
            except ValueError as e:
                got.append(str(e))
    got.append([(w.category.__name__, str(w.message).split(";")[0].split(" and not")[0]) for w in caught])
    return got


def test_deprecated_jacobian_helpers_match_pytorch():
    from tapeflow.autograd.gradcheck import get_analytical_jacobian, get_numerical_jacobian

    got = _deprecated_jacobians(tp, get_numerical_jacobian, get_analytical_jacobian)
    assert got[0][2] == (2 * np.eye(4)).tolist() and got[1][-3:] == [True, True, True]
    torch = pytest.importorskip("torch")
    from torch.autograd.gradcheck import get_analytical_jacobian as analytical
    from torch.autograd.gradcheck import get_numerical_jacobian as numerical

    assert got == _deprecated_jacobians(torch, numerical, analytical)


def test_zero_size_inputs_have_nothing_to_check():
    torch = pytest.importorskip("torch")
    for m in (tp, torch):  # (PyTorch accepts them too)
        x = m.zeros(0, 3, dtype=m.float64, requires_grad=True)
        y = m.randn(2, dtype=m.float64, requires_grad=True)
        f = lambda a, b: (a.sum() + b * 2, a * 2)  # noqa: E731
        assert m.autograd.gradcheck(f, (x, y), check_forward_ad=True)
        assert m.autograd.gradgradcheck(f, (x, y))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_outputs_whose_shape_or_dtype_depend_on_the_values_are_refused(fast_mode):
    """As PyTorch's gradcheck: perturbing the input must not change an output's shape or dtype."""
    a = tp.ones(1, dtype=tp.float64, requires_grad=True)

    def grows(x):
        return tp.cat([x, x]) if tp.all(x >= 1) else x

    def casts(x):
        return x.to(tp.float32) if tp.all(x >= 1) else x

    with pytest.raises(AssertionError, match="return outputs with the same shape when inputs are perturbed"):
        tp.autograd.gradcheck(grows, (a,), fast_mode=fast_mode)
    with pytest.raises(AssertionError, match="return outputs with the same dtype when inputs are perturbed"):
        tp.autograd.gradcheck(casts, (a,), fast_mode=fast_mode)


def test_complex_mismatches_are_reported_as_pytorch_does():
    """Mismatches name the function's own inputs and outputs, led by the part of a complex output (reverse
    mode) or input (forward mode) that disagrees, the imaginary part first, in PyTorch's words."""
    def hooked(x):
        y = x.clone()
        y.register_hook(lambda g: g + 1e-2)
        return y

    def bad_tangent(x, y):
        if tp.autograd.forward_ad._current_level >= 0:
            primal, tangent = tp.autograd.forward_ad.unpack_dual(y)
            y = tp.autograd.forward_ad.make_dual(primal, tangent * 1.1)
        return x + y, y

    z = tp.ones(2, 2, dtype=tp.complex128, requires_grad=True)
    with pytest.raises(GradcheckError, match="^While considering the imaginary part of complex outputs only, "
                       "Jacobian mismatch for output 0 with respect to input 0,"):
        tp.autograd.gradcheck(hooked, (z,))
    x = tp.rand(2, dtype=tp.complex128, requires_grad=True)
    y = tp.rand(2, dtype=tp.float64, requires_grad=True)
    for fast_mode in (False, True):
        with pytest.raises(GradcheckError, match="^Jacobian computed with forward mode mismatch for output 0 with "
                           "respect to input 1"):
            tp.autograd.gradcheck(bad_tangent, (x, y), check_forward_ad=True, fast_mode=fast_mode)


def test_undefined_gradient_check_reaches_tensor_hooks():
    """PyTorch's undefined-gradient check seeds every output with an undefined gradient: a hook that cannot take
    None fails it (with PyTorch's warning and message), whatever node made the output."""
    def fn(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")
        y = x.clone()
        y.register_hook(hook)
        return y

    x = tp.ones(1, dtype=tp.float64, requires_grad=True)
    for fast in (True, False):
        with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient"):
            with pytest.raises(RuntimeError, match="Expected backward function to handle undefined output grads"):
                tp.autograd.gradcheck(fn, (x,), fast_mode=fast)
        assert tp.autograd.gradcheck(fn, (x,), check_undefined_grad=False, fast_mode=fast)


def test_forward_mode_checks_see_detached_inputs_and_undefined_tangents():
    """As PyTorch's gradcheck: the forward-mode check passes inputs that do not require grad, and with
    `check_undefined_grad` it also runs each input once with a zero tangent and once with none."""
    import tapeflow.autograd.forward_ad as fwAD
    calls = []

    class Clone(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            if fwAD._current_level >= 0:
                assert not x.requires_grad and not y.requires_grad
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            calls.append(1)
            return x_t, y_t

    x = tp.rand(1, dtype=tp.float64, requires_grad=True)
    y = tp.rand(1, dtype=tp.float64, requires_grad=True)
    opts = dict(check_forward_ad=True, check_backward_ad=False, check_batched_grad=False)
    assert tp.autograd.gradcheck(Clone.apply, (x, y), check_undefined_grad=False, **opts)
    assert len(calls) == 2  # one per input
    calls.clear()
    assert tp.autograd.gradcheck(Clone.apply, (x, y), check_undefined_grad=True, **opts)
    assert len(calls) == 6  # + a zero tangent and no tangent, per input
    calls.clear()
    assert tp.autograd.gradcheck(Clone.apply, (x, y.detach()), check_undefined_grad=True,
                                 check_batched_forward_grad=True, **opts)
    assert len(calls) == 5  # 1 + 1 (the other input carries no tangent) + a batch of 2: vmapped once, then looped

    class MissingIsNotZero(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            ctx.save_for_forward(x, y)
            return x * y

        @staticmethod
        def jvp(ctx, x_t, y_t):
            x, y = ctx.saved_tensors
            out = x_t * y if x_t is not None else 0.0
            return out + (y_t * x if y_t is not None else 1.0)  # wrong only where y has no tangent at all

    with pytest.raises(GradcheckError, match="undefined tangent value"):
        tp.autograd.gradcheck(MissingIsNotZero.apply, (x, y), **opts)
    assert tp.autograd.gradcheck(MissingIsNotZero.apply, (x, y), check_undefined_grad=False, **opts)


def test_gradcheck_of_a_custom_function_after_training_steps():
    """A custom Function used in a few steps first (so adaptive eager has compiled its backward): gradcheck compares
    repeated backward passes exactly, and they run op by op there, as PyTorch's pass."""
    class Swish(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x, beta):
            s = tp.sigmoid(beta * x)
            ctx.save_for_backward(x, beta, s)
            return x * s

        @staticmethod
        def backward(ctx, g):
            x, beta, s = ctx.saved_tensors
            ds = s * (1 - s)
            return (s + x * beta * ds) * g, (x * x * ds * g).sum().reshape(beta.shape)

    tp.manual_seed(0)
    x = tp.randn(5, dtype=tp.float64, requires_grad=True)
    b = tp.tensor([0.7], dtype=tp.float64, requires_grad=True)
    for _ in range(4):
        Swish.apply(x, b).sum().backward()
    assert tp.is_adaptive_eager_enabled()
    assert tp.autograd.gradcheck(Swish.apply, (x, b))
    assert tp.is_adaptive_eager_enabled()  # (restored)

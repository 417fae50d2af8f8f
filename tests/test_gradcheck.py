"""gradcheck / gradgradcheck."""

import warnings

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


def test_no_input_requires_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        tp.autograd.gradcheck(sigmoid, (tp.randn(2, dtype=tp.float64),))


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

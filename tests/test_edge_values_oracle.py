"""Values and gradients at the edges PyTorch defines (zeros of both signs, poles, infinities, NaN, ties) equal
PyTorch's, function by function: a NaN passes a piecewise function's gradient where PyTorch's mask does not
stop it, `sign(nan)` is 0, `angle(-0.0)` is 0, digamma has PyTorch's infinities at 0, `maximum` with a NaN
gives both inputs the gradient."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn.functional as TF

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
F = torch.nn.functional

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 6.0, 1e-30, -1e-30, 1e30, float("inf"),
         float("-inf"), float("nan"), 0.9999999, 1.0000001]

UNARY = {name: (lambda lib, fn, name=name: getattr(lib, name)) for name in (
    "abs acos acosh asin asinh atan atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 floor frac "
    "lgamma log log10 log1p log2 logit neg rad2deg reciprocal round rsqrt sigmoid sign sin sinc sinh sqrt square "
    "tan tanh trunc nan_to_num relu i0 angle").split()}
UNARY.update({f"F.{name}": (lambda lib, fn, name=name: getattr(fn, name)) for name in (
    "elu selu celu gelu silu mish softplus softsign hardtanh hardswish hardsigmoid relu6 logsigmoid tanhshrink "
    "softshrink hardshrink").split()})
UNARY.update({
    "F.leaky_relu": lambda lib, fn: lambda x: fn.leaky_relu(x, 0.2),
    "F.threshold": lambda lib, fn: lambda x: fn.threshold(x, 0.5, -1.0),
    "F.softplus_beta": lambda lib, fn: lambda x: fn.softplus(x, beta=3, threshold=2),
    "special.ndtr": lambda lib, fn: lib.special.ndtr,
    "special.log_ndtr": lambda lib, fn: lib.special.log_ndtr,
    "special.entr": lambda lib, fn: lib.special.entr,
    "mvlgamma": lambda lib, fn: lambda x: lib.mvlgamma(x, 2),
    "clamp": lambda lib, fn: lambda x: x.clamp(-1, 1),
    "pow2": lambda lib, fn: lambda x: x ** 2,
    "pow0": lambda lib, fn: lambda x: x ** 0,
    "logit_eps": lambda lib, fn: lambda x: lib.logit(x, eps=0.25),
})
# Where PyTorch's numbers are its kernels' accidents rather than definitions, they are not compared: the
# derivative of digamma at negative integers (finite garbage there, a pole in fact).
SKIP_POINTS = {"digamma": [3, 7, 9]}
# PyTorch's hardsigmoid gradient multiplies by 1/6 rounded to float32, also in float64 (3e-8 from the derivative).
GRAD_RTOL = {"F.hardsigmoid": 1e-7}

BINARY = {name: (lambda lib, name=name: getattr(lib, name)) for name in (
    "add sub mul div pow atan2 hypot fmod maximum minimum fmax fmin copysign logaddexp logaddexp2 xlogy "
    "float_power").split()}
BINARY["lerp"] = lambda lib: lambda a, b: lib.lerp(a, b, 0.3)
PAIRS = list(itertools.product([0.0, -0.0, 1.0, -1.0, 2.0, -2.5, float("inf"), float("-inf"), float("nan"), 0.5],
                               repeat=2))


def _same(got, want, what, keep=None, rtol=1e-9):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if keep is not None:
        got, want = np.delete(got, keep), np.delete(want, keep)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-15, equal_nan=True, err_msg=what)


def _value_and_grad(lib, f, *columns):
    xs = [lib.tensor(c, dtype=lib.float64, requires_grad=True) for c in columns]
    y = f(*xs)
    grads = lib.autograd.grad(y.sum(), xs, allow_unused=True)
    return [y.detach().numpy(), *[None if g is None else g.numpy() for g in grads]]


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_edges_equal_pytorchs(name):
    mine = _value_and_grad(tp, UNARY[name](tp, TF), EDGES)
    theirs = _value_and_grad(torch, UNARY[name](torch, F), EDGES)
    _same(mine[0], theirs[0], f"{name}: values")
    _same(mine[1], theirs[1], f"{name}: gradient", SKIP_POINTS.get(name), GRAD_RTOL.get(name, 1e-9))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_edges_equal_pytorchs(name):
    a, b = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    mine = _value_and_grad(tp, BINARY[name](tp), a, b)
    theirs = _value_and_grad(torch, BINARY[name](torch), a, b)
    for what, m, t in zip(("values", "gradient of the first", "gradient of the second"), mine, theirs):
        _same(m, t, f"{name}: {what}")


NAN, INF = float("nan"), float("inf")
ROWS = {"nan": [[1.0, NAN, 3.0, 0.5], [2.0, 2.0, -1.0, 4.0]], "inf": [[1.0, INF, 3.0, -INF], [-INF, -INF, -INF, -INF]],
        "ties": [[3.0, 1.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]], "signed zeros": [[-0.0, 0.0, -0.0, 1.0], [0.0, -0.0, -1.0, -0.0]]}
# Reductions, scans and sorts along rows holding NaN, infinities, ties and zeros of both signs. (Not compared:
# the order `topk` and `kthvalue` give ties, which is that of PyTorch's selection algorithm, and the
# derivatives of `prod` / `cumprod` at an infinite or NaN factor, where PyTorch's `result / input` is NaN.)
REDUCTIONS = {
    "max": lambda x: x.max(), "max(dim)": lambda x: x.max(1).values, "argmax": lambda x: x.argmax(1),
    "amax": lambda x: x.amax(1), "sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1),
    "cumsum": lambda x: x.cumsum(1), "cummax": lambda x: x.cummax(1).values, "logsumexp": lambda x: x.logsumexp(1),
    "logcumsumexp": lambda x: x.logcumsumexp(1), "softmax": lambda x: x.softmax(1),
    "log_softmax": lambda x: x.log_softmax(1), "sort": lambda x: x.sort(1).values, "median": lambda x: x.median(1).values,
    "nanmedian": lambda x: x.nanmedian(1).values, "nansum": lambda x: x.nansum(1), "nanmean": lambda x: x.nanmean(1),
    "std": lambda x: x.std(1), "norm": lambda x: x.norm(dim=1), "norm(inf)": lambda x: x.norm(INF, dim=1),
    "norm(1)": lambda x: x.norm(1, dim=1), "maximum": lambda x: x[0].maximum(x[1]), "clamp": lambda x: x.clamp(-1, 2),
    "quantile": lambda x: x.quantile(0.5, dim=1),
}


@pytest.mark.parametrize("row", sorted(ROWS))
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_at_edges_equal_pytorchs(name, row):
    def run(lib):
        x = lib.tensor(ROWS[row], dtype=lib.float64, requires_grad=True)
        y = REDUCTIONS[name](x)
        if not y.requires_grad:
            return [y.double().numpy(), None]
        w = lib.linspace(0.5, 1.5, y.numel(), dtype=lib.float64).reshape(y.shape)
        return [y.detach().numpy(), lib.autograd.grad((y * w).sum(), x)[0].numpy()]

    (mine, mine_grad), (theirs, theirs_grad) = run(tp), run(torch)
    _same(mine, theirs, f"{name} of the {row} rows: values")
    if theirs_grad is not None:
        _same(mine_grad, theirs_grad, f"{name} of the {row} rows: gradient")


LOGITS = [[2.0, -1.0, 0.5], [INF, 0.0, 1.0], [-INF, -INF, 3.0], [0.0, 0.0, 0.0]]
CLASSES = [0, 1, 2, 0]
# Losses where masked (-inf) logits, infinite inputs, NaN targets and zero targets meet: PyTorch's numbers.
LOSSES = {
    "cross_entropy": (lambda lib, F, x: F.cross_entropy(x, lib.tensor(CLASSES), reduction="none"), [LOGITS]),
    "cross_entropy(weight)": (lambda lib, F, x: F.cross_entropy(
        x, lib.tensor(CLASSES), weight=lib.tensor([1.0, 0.0, 2.0], dtype=lib.float64), reduction="none"), [LOGITS]),
    "cross_entropy(ignore_index)": (lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, -100, 2, -100])), [LOGITS]),
    "cross_entropy(label_smoothing)": (lambda lib, F, x: F.cross_entropy(
        x[[0, 3]], lib.tensor([0, 2]), label_smoothing=0.2, reduction="none"), [LOGITS]),
    "nll_loss": (lambda lib, F, x: F.nll_loss(x, lib.tensor(CLASSES), reduction="none"), [LOGITS]),
    "bce_with_logits": (lambda lib, F, x: F.binary_cross_entropy_with_logits(
        x, lib.tensor([0.0, 1.0, 1.0, 0.5], dtype=lib.float64), reduction="none"), [[INF, -INF, 0.0, 100.0]]),
    "bce_with_logits(pos_weight)": (lambda lib, F, x: F.binary_cross_entropy_with_logits(
        x, lib.tensor([0.0, 1.0, 1.0, 0.5], dtype=lib.float64), pos_weight=lib.tensor([2.0], dtype=lib.float64),
        reduction="none"), [[3.0, -2.0, 0.0, 100.0]]),
    "l1_loss": (lambda lib, F, x, y: F.l1_loss(x, y, reduction="none"), [[1.0, 2.0, 0.0], [1.0, 0.5, NAN]]),
    "mse_loss": (lambda lib, F, x, y: F.mse_loss(x, y, reduction="none"), [[1.0, INF, 0.0], [1.0, INF, NAN]]),
    "kl_div": (lambda lib, F, x, y: F.kl_div(x, y, reduction="none"), [[-1.0, -INF, 0.0], [0.0, 0.0, 1.0]]),
    "kl_div(log_target)": (lambda lib, F, x, y: F.kl_div(x, y, reduction="none", log_target=True),
                           [[-1.0, -INF, 0.0], [-INF, 0.0, 1.0]]),
    "poisson_nll_loss": (lambda lib, F, x, y: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction="none"),
                         [[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]),
    "soft_margin_loss": (lambda lib, F, x: F.soft_margin_loss(
        x, lib.tensor([1.0, -1.0, 1.0], dtype=lib.float64), reduction="none"), [[100.0, -100.0, 0.0]]),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_at_edges_equal_pytorchs(name):
    f, columns = LOSSES[name]
    mine = _value_and_grad(tp, lambda *xs: f(tp, TF, *xs), *columns)
    theirs = _value_and_grad(torch, lambda *xs: f(torch, F, *xs), *columns)
    for what, m, t in zip(("values", "gradient of the input", "gradient of the target"), mine, theirs):
        _same(m, t, f"{name}: {what}")


def test_a_complex_zero_base_to_a_tensor_power_is_pytorchs():
    base = [0j, 0j, 0j, 0j, 0j, 1 + 1j, -0.0 + 0j]
    exponent = [2 + 1j, 0j, -1 + 0j, 1j, 0.5 + 0j, 0j, 2 + 0j]
    mine = (tp.tensor(base) ** tp.tensor(exponent)).numpy()
    theirs = (torch.tensor(base) ** torch.tensor(exponent)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, equal_nan=True)
    real_base = (tp.tensor([0.0, 2.0]) ** tp.tensor([1 + 1j, 0j])).numpy()
    np.testing.assert_allclose(real_base, (torch.tensor([0.0, 2.0]) ** torch.tensor([1 + 1j, 0j])).numpy())


@pytest.mark.parametrize("dtype, values", [("float32", [1.0, 100.0]), ("float32", [[200.0, 0.5], [0.3, 0.7]]),
                                           ("float64", [[10000.0, 0.5], [0.3, 0.7]]), ("float64", [3.0, 800.0, -1.0])])
def test_logcumsumexp_second_derivative_at_large_values_is_pytorchs(dtype, values):
    # (the running value is past exp's overflow and the next element leaves it unchanged)
    def second(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        go = lib.full_like(x, 0.3).requires_grad_()
        (g,) = lib.autograd.grad(x.logcumsumexp(0), x, go, create_graph=True)
        return [t.detach().numpy() for t in (g, *lib.autograd.grad(g, (x, go), lib.ones_like(x)))]

    for m, t in zip(second(tp), second(torch)):
        assert not np.isnan(m).any()
        np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
